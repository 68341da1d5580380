"""Renderers: presentation only, no decisions. Each takes a DiagnoseResult and returns or prints text."""
