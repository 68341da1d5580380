"""How values, host sets, device text and figures are shown to people."""
