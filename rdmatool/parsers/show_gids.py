"""`show_gids`: the RoCE GID table — per GID its value, RoCE version, netdev and IPv4 address.

Command: `show_gids` (also `show_gids mlx5_0`; MLNX_OFED / mlnx-tools script reading sysfs).
Emits per GID row on entity `mlx5_0/1` (DEV/PORT columns): `gid` (text, as printed), `gid_type` (`v1`/`v2` ->
`RoCE v1`/`RoCE v2`), `netdev` (the last DEV column) and `ipv4_address` (only for IPv4-mapped GIDs). All four
carry the table index in raw_key as `GID[3]` (INDEX column) — never in `priority`, which means a 0-7 priority. The
`n_gids_found=N` trailer becomes `gids_found` (gauge) on entity `host`, raw_key `n_gids_found`; 0 there means no
RDMA netdev is visible (e.g. inside a network namespace).
Example:
    DEV     PORT    INDEX   GID                                     IPv4            VER     DEV
    ---     ----    -----   ---                                     ------------    ---     ---
    mlx5_0  1       0       fe80:0000:0000:0000:0ac0:ebff:fe21:03da                 v1      rdma0
    mlx5_0  1       3       0000:0000:0000:0000:0000:ffff:c0a8:d3f2 192.168.211.242 v2      rdma0
    n_gids_found=2
Caveats: rows are TAB-separated with an empty IPv4 column for link-local GIDs, so columns are recognised by shape
(dotted quad, `v1`/`v2`, netdev) rather than by position. Older versions and IB ports leave VER and/or DEV empty;
those samples are then not emitted. Masked pastes (`xxxx` groups in a GID) are accepted. Skipped: the header and
`---` underline, blank lines, `#` comments, the (prompted) command line that ran show_gids. A row with extra columns, a non-
numeric PORT/INDEX or a GID that is not hex groups is a ParseError. The row count is not checked against
n_gids_found (pasted samples are often excerpts).
An empty output (nothing, or white space only) is a ParseError, `empty output: show_gids printed nothing`, on which
`rdmatool parse` exits 2: show_gids always prints its header and `n_gids_found=N`, so an empty answer is missing
data, not "nothing wrong".
"""

from __future__ import annotations

import re

from rdmatool.errors import ParseError
from rdmatool.model import Sample
from rdmatool.parsers._common import refuse_empty
from rdmatool.parsers._ibinfo import Collector, content_lines, gid_key
from rdmatool.parsers._samples import HOST, NA_TEXT, gauge

NAME = "show_gids"

_HEADER = re.compile(r"^\s*DEV\s+PORT\s+INDEX\s+GID\s+IPv4(?:\s+VER)?(?:\s+DEV)?\s*$", re.IGNORECASE)
_UNDERLINE = re.compile(r"^[\s-]+$")
_TRAILER = re.compile(r"^\s*n_gids_found\s*=\s*(\S*)\s*$")
_DEVICE = re.compile(r"^[A-Za-z][\w.-]*$")
_GID = re.compile(r"^[0-9A-Fa-fxX]{1,4}(?::[0-9A-Fa-fxX]{0,4}){2,7}$")
_IPV4 = re.compile(r"^[0-9xX*]{1,3}(?:\.[0-9xX*]{1,3}){3}$")
_VERSION = re.compile(r"^(?:RoCE\s*)?[vV]([12])$")
_NETDEV = re.compile(r"^[\w.@:-]+$")


def parse(text: str) -> list[Sample]:
    refuse_empty(NAME, "show_gids", text)
    out = Collector(NAME)
    for line_no, line in content_lines(text, "show_gids", out):
        if _HEADER.match(line) or _UNDERLINE.match(line):
            continue
        if match := _TRAILER.match(line):
            count = gauge(NAME, line_no, line, match.group(1), NA_TEXT)
            out.add(Sample(HOST, "gids_found", count, raw_key="n_gids_found"), line_no, line)
            continue
        out.extend(_row_samples(line_no, line), line_no, line)
    return out.samples


def _row_samples(line_no: int, line: str) -> list[Sample]:
    fields = line.split()
    if len(fields) < 4:
        raise ParseError(NAME, line_no, line)
    device, port, index, gid, *rest = fields
    if not (_DEVICE.match(device) and port.isdigit() and index.isdigit() and _GID.match(gid)):
        raise ParseError(NAME, line_no, line, "expected DEV PORT INDEX GID [IPv4] [VER] [DEV]")
    entity, key = f"{device}/{int(port)}", gid_key(index)
    samples = [Sample(entity, "gid", text=gid, raw_key=key)]
    # The optional columns keep their order (IPv4, VER, DEV) but any of them may be empty.
    if rest and _IPV4.match(rest[0]):
        samples.append(Sample(entity, "ipv4_address", text=rest.pop(0), raw_key=key))
    if len(rest) > 1 and rest[0].lower() == "roce":  # a `RoCE v2` spelling split by whitespace
        rest[:2] = [rest[0] + " " + rest[1]]
    if rest and (version := _VERSION.match(rest[0])):
        rest.pop(0)
        samples.append(Sample(entity, "gid_type", text=f"RoCE v{version.group(1)}", raw_key=key))
    if rest and _NETDEV.match(rest[0]):
        samples.append(Sample(entity, "netdev", text=rest.pop(0), raw_key=key))
    if rest:
        raise ParseError(NAME, line_no, line, f"unexpected column {rest[0]!r}")
    return samples
