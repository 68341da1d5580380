"""`grep -H .` over /sys/class/net/<if>/ecn: the mlx5 DCQCN switches and parameters (roce_np, roce_rp).

Command: `grep -H . /sys/class/net/*/ecn/roce_np/* /sys/class/net/*/ecn/roce_np/enable/*
/sys/class/net/*/ecn/roce_rp/* /sys/class/net/*/ecn/roce_rp/enable/*` (or `grep -r . /sys/class/net/eth0/ecn`):
one `PATH:VALUE` line per file (`PATH: VALUE` accepted too).
Emits (entity = the netdev, `eth0`): `roce_np_enabled` / `roce_rp_enabled` (0/1) with `priority` = the
`enable/<prio>` file; `cnp_dscp` and `cnp_802p_prio` (roce_np); every other file of roce_np / roce_rp
(`rpg_ai_rate`, `rpg_time_reset`, `min_time_between_cnps`, `dce_tcp_g` ...) as `dcqcn_param` with priority None.
raw_key is the path below ecn/ (`roce_np/enable/3`, `roce_rp/rpg_ai_rate`).
Example:
    /sys/class/net/eth0/ecn/roce_np/enable/3:1
    /sys/class/net/eth0/ecn/roce_rp/rpg_time_reset:300
Caveats: the format and the fixtures follow the mlx5 driver's ecn sysfs layout (the prometheus/procfs sample and
the MLNX_OFED DCQCN parameter list); a `params/` level under roce_np / roce_rp (seen in some documentation) is
accepted and kept in raw_key. Newer drivers dropped this tree: `grep: PATH: No such file or directory` then
becomes a `tool_error` sample (entity = the netdev of the path) -- unknown, not "disabled". Values must be whole
numbers (`N/A` gives value None); anything outside ecn/roce_np and ecn/roce_rp, a priority outside 0-7 or a line
that is not PATH:VALUE is a ParseError. `#` comment lines are skipped.
An empty output (nothing, or white space only) is a ParseError, `empty output: grep printed nothing`, on which
`rdmatool parse` exits 2: the collector reads the ecn tree only where it exists, and a grep that matched nothing
exits 1, an output a collection records but does not parse, so an empty answer is missing data, not "nothing wrong".
"""

from __future__ import annotations

import re

from rdmatool.errors import ParseError
from rdmatool.model import Sample
from rdmatool.parsers._common import refuse_empty
from rdmatool.parsers._samples import HOST, counter, tool_error
from rdmatool.parsers._sysfs import read_files

NAME = "dcqcn_sysfs"

_ECN_PATH = re.compile(r"(?:^|/)net/(?P<netdev>[^/]+)/ecn(?:/(?P<rest>.*))?$")
_KNOB = re.compile(r"^(?P<point>roce_np|roce_rp)/(?:params/)?(?P<knob>[A-Za-z0-9_]+)(?:/(?P<prio>\d+))?$")
_NAMED_KNOBS = {"cnp_dscp": "cnp_dscp", "cnp_802p_prio": "cnp_802p_prio"}


def parse(text: str) -> list[Sample]:
    refuse_empty(NAME, "grep", text)
    return read_files(NAME, text, _knob, read_failure=_unreadable)


def _unreadable(path: str, line: str) -> list[Sample]:
    return [tool_error(_netdev_of(path), line.strip())]


def _knob(path: str, raw_value: str, line_no: int, line: str) -> list[Sample]:
    where = _ECN_PATH.search(path)
    if where is None or not where["rest"]:
        raise ParseError(NAME, line_no, line, "not a /sys/class/net/<if>/ecn file")
    rest = where["rest"]
    knob = _KNOB.match(rest)
    if knob is None:
        raise ParseError(NAME, line_no, line, "expected ecn/roce_np/... or ecn/roce_rp/...")
    value = counter(NAME, line_no, line, raw_value, fraction="a DCQCN setting is a whole number")
    netdev = where["netdev"]
    if knob["prio"] is not None:
        priority = int(knob["prio"])
        if knob["knob"] != "enable" or priority > 7:
            raise ParseError(NAME, line_no, line, "expected enable/<priority 0-7>")
        return [Sample(netdev, f"{knob['point']}_enabled", value, priority=priority, raw_key=rest)]
    if knob["knob"] == "enable":
        raise ParseError(NAME, line_no, line, "enable without a priority")
    metric = _NAMED_KNOBS.get(knob["knob"], "dcqcn_param")
    return [Sample(netdev, metric, value, raw_key=rest)]


def _netdev_of(path: str) -> str:
    """The netdev a grep complaint is about; `host` when the path names none or only an unmatched glob."""
    match = _ECN_PATH.search(path)
    if match is None or any(wildcard in match["netdev"] for wildcard in "*?["):
        return HOST
    return match["netdev"]
