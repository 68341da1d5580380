"""Cumulus NVUE error counters of one port: FCS, symbol and total receive errors, total transmit errors.

Command: `nv show interface <if> counters errors [-o json]` (Cumulus Linux >= 5.5).
Emits (entity `port`, a placeholder the analysis replaces by the real port such as `swp1`, since the table does not
name it; priority None): `rx_crc_errors` (FCS Errors Receive: frames with a bad frame check sequence),
`rx_symbol_errors` (Symbol Errors Receive: PHY symbol errors), `rx_errors` / `tx_errors` (Total Errors) - counters;
raw_key = the row label as printed. Alignment, jabber, length, oversize and undersize errors are read (a value that
is not a count fails) and not emitted: the total counts them, and a bad cable or optic shows in FCS and symbol
errors.
Example:
    Counter           Receive  Transmit
    ----------------  -------  --------
    Alignment Errors  0        n/a
    FCS Errors        37       n/a
    Symbol Errors     52       n/a
    Total Errors      37       0
Caveats: the layout follows the example of NVIDIA's NVUE command reference and the Cumulus Linux 5.x user guide
("Monitoring Interfaces and Transceivers with NVUE"); it is not verified against a real capture. `n/a` cells are
skipped; a number in a cell the guide prints `n/a` (the transmit side of every row but Total Errors) is a
ParseError. `-o json` is read as `{"rx-stats": {"fcs-errors": 0, ...}, "tx-stats": {"total-errors": 0}}`
(hyphenated row names, the NVUE object convention of the other Receive/Transmit views; no public JSON sample of this
command exists). Prompt lines, `# ...` comments and blank lines are skipped; anything else unexpected is a
ParseError.
"""

from __future__ import annotations

from rdmatool.model import Sample
from rdmatool.parsers.switch import _cumulus_views as views

NAME = "cumulus_counters_errors"
SKIP = views.NOT_EMITTED
COUNTERS: dict[str, views.Direction] = {
    "alignment-errors": (SKIP, None),
    "fcs-errors": ("rx_crc_errors", None),
    "jabber-errors": (SKIP, None),
    "length-errors": (SKIP, None),
    "oversize-errors": (SKIP, None),
    "symbol-errors": ("rx_symbol_errors", None),
    "total-errors": ("rx_errors", "tx_errors"),
    "undersize-errors": (SKIP, None),
}


def parse(text: str) -> list[Sample]:
    return views.parse_port_view(
        NAME,
        text,
        lambda name, body: views.direction_table(name, body, COUNTERS),
        lambda name, document, locate: views.direction_json(name, document, locate, COUNTERS),
    )
