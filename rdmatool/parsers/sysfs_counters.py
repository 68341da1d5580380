"""`grep -H .` over /sys/class/infiniband: IB port counters, mlx5 hw_counters, port state/rate and device facts.

Command: `grep -H . /sys/class/infiniband/*/{fw_ver,board_id,hca_type,node_guid}
/sys/class/infiniband/*/ports/*/{state,phys_state,rate,link_layer} /sys/class/infiniband/*/ports/*/counters/*
/sys/class/infiniband/*/ports/*/hw_counters/*` (or `grep -r . <dir>`): one `PATH:VALUE` line per file
(`PATH: VALUE` accepted too).
Emits (entity `mlx5_0/1` for port files, `mlx5_0` for device files):
  counters/* -> the canonical IB counters (`symbol_error` -> `symbol_errors`, `VL15_dropped` -> `vl15_dropped`,
  `unicast_xmit_packets` -> `port_unicast_xmit_packets` ...); `port_xmit_data` / `port_rcv_data` are 4-octet words
  and become `port_xmit_data_bytes` / `port_rcv_data_bytes` (x4, ints).
  hw_counters/* -> `ecn_marked_packets` (np_ecn_marked_roce_packets), `cnp_sent` (np_cnp_sent), `cnp_handled`
  (rp_cnp_handled), `cnp_ignored` (rp_cnp_ignored), `rx_out_of_buffer` (out_of_buffer), `out_of_sequence`,
  `packet_seq_err`, `local_ack_timeout_err`, `implied_nak_seq_err`, `rnr_nak_retry_err`, `duplicate_request`,
  `req_cqe_error`, `resp_cqe_error`, `roce_adp_retrans`.
  state -> `port_state` (Active, Down, Initializing, Armed, ActiveDefer), phys_state -> `phys_state` (LinkUp, Polling,
  Disabled, Sleep, PortConfigurationTraining, LinkErrorRecovery, PhyTest), both mapped on the NUMBER the file
  starts with; rate -> `link_rate_gbps`, `link_width`, `link_width_lanes`, `link_speed`; link_layer; lid ->
  `base_lid`, sm_lid, lid_mask_count -> `lmc`, cap_mask -> `capability_mask`.
  fw_ver -> `fw_version`, board_id, hca_type -> `ca_type`, node_guid, sys_image_guid, hw_rev -> `hw_version`.
  A narrow PMA error counter pinned at its maximum (link_downed 255, symbol_error 65535,
  excessive_buffer_overrun_errors 15, port_xmit_wait 4294967295 ...) also gets a `counter_saturated` sample
  (value 1, text = the canonical metric, raw_key = the file name).
  raw_key is the file name as the kernel spells it (`link_downed`, `VL15_dropped`, `np_cnp_sent`, `rate`, `fw_ver`).
Example:
    /sys/class/infiniband/mlx5_0/ports/1/counters/link_downed:255
    /sys/class/infiniband/mlx5_0/ports/1/rate:25 Gb/sec (1X EDR)
Caveats: hw_counters not listed above (rx_write_requests, roce_slow_restart*, *_flush_error, lifespan, and the
dozens newer drivers add) are skipped on purpose after checking they are numbers; an unknown name under counters/
(the kernel's fixed PMA set) or an unknown file under a device or port is a ParseError. gids/, gid_attrs/ and
pkeys/ are skipped (the show_gids parser owns GIDs), as are the ib_cm message counters (cm_rx_msgs/ ...),
power/, node_type, node_desc, uevent, sm_sl and has_smi. The data and packet counters are 64-bit on mlx5 but
32-bit on devices without extended counters, which this dump cannot tell apart: they get no saturation check. `N/A` or an empty value gives value None. `grep: PATH: message` lines become
`tool_error` (entity of the path) unless they concern a skipped subtree; `#` comment lines are skipped.
An empty output (nothing, or white space only) is a ParseError, `empty output: grep printed nothing`, on which
`rdmatool parse` exits 2: a device always has lines for grep to print (fw_ver, port states, counters), and a grep
that matched nothing exits 1, an output a collection records but does not parse, so an empty answer is missing data,
not "nothing wrong".
"""

from __future__ import annotations

import functools
import re

from rdmatool.errors import ParseError
from rdmatool.model import Sample
from rdmatool.parsers import _ibcounters
from rdmatool.parsers._common import refuse_empty
from rdmatool.parsers._ibinfo import PHYS_STATES, PORT_STATES, rate_text_samples
from rdmatool.parsers._samples import HOST, NA_TEXT, counter, gauge, is_na, numbered_state, text, tool_error
from rdmatool.parsers._sysfs import read_files

NAME = "sysfs_counters"

_IB_PATH = re.compile(r"(?:^|/)infiniband/(?P<device>[^/]+)/(?P<rest>.+)$")
_PORT_PATH = re.compile(r"^ports/(?P<port>\d+)/(?P<file>.+)$")
# Port subtrees that are not ours (GIDs belong to show_gids) or not port health (ib_cm message counters).
_SKIPPED_SUBTREES = (
    "gids/",
    "gid_attrs/",
    "pkeys/",
    "cm_rx_msgs/",
    "cm_tx_msgs/",
    "cm_rx_duplicates/",
    "cm_tx_retries/",
)
_SKIPPED_DEVICE_FILES = {"node_type", "node_desc", "uevent"}
_SKIPPED_DEVICE_SUBTREES = ("power/",)
_SKIPPED_PORT_FILES = {"sm_sl", "has_smi"}

_DEVICE_TEXT = {
    "fw_ver": "fw_version",
    "board_id": "board_id",
    "hca_type": "ca_type",
    "node_guid": "node_guid",
    "sys_image_guid": "sys_image_guid",
    "hw_rev": "hw_version",
}
_PORT_NUMBERS = {"lid": "base_lid", "sm_lid": "sm_lid", "lid_mask_count": "lmc"}
_PORT_TEXT = {"link_layer": "link_layer", "cap_mask": "capability_mask"}
_NOT_WHOLE = "a counter must be a whole number"

_HW_COUNTERS = {
    "np_ecn_marked_roce_packets": "ecn_marked_packets",
    "np_cnp_sent": "cnp_sent",
    "rp_cnp_handled": "cnp_handled",
    "rp_cnp_ignored": "cnp_ignored",
    "out_of_buffer": "rx_out_of_buffer",
    "out_of_sequence": "out_of_sequence",
    "packet_seq_err": "packet_seq_err",
    "local_ack_timeout_err": "local_ack_timeout_err",
    "implied_nak_seq_err": "implied_nak_seq_err",
    "rnr_nak_retry_err": "rnr_nak_retry_err",
    "duplicate_request": "duplicate_request",
    "req_cqe_error": "req_cqe_error",
    "resp_cqe_error": "resp_cqe_error",
    "roce_adp_retrans": "roce_adp_retrans",
}


def parse(text: str) -> list[Sample]:
    refuse_empty(NAME, "grep", text)
    return read_files(NAME, text, _file_samples, read_failure=_grep_failure)


def _grep_failure(path: str, line: str) -> list[Sample]:
    match = _IB_PATH.search(path)
    if match is None:
        return [tool_error(HOST, line.strip())]
    rest = match["rest"]
    port = _PORT_PATH.match(rest)
    if port and port["file"].startswith(_SKIPPED_SUBTREES):
        return []  # unset GID entries answer EINVAL: normal, and GIDs are not ours
    entity = f"{match['device']}/{port['port']}" if port else match["device"]
    if any(wildcard in entity for wildcard in "*?["):
        entity = HOST  # grep echoes an unmatched glob: no device exists to blame
    return [tool_error(entity, line.strip())]


@functools.lru_cache(maxsize=8192)
def _where(path: str) -> tuple[str, str, str]:
    """What a dumped file is, from its path alone: (kind, entity, name), kind one of `device` (entity the device,
    name the file), `pma` and `hw` (a counter of the port: name the counter), `port` (another port file), `skip`, or
    `foreign` (not under infiniband/). Cached: every host of a fleet dumps the same few hundred paths, and telling
    them apart afresh each time would be most of the parse."""
    match = _IB_PATH.search(path)
    if match is None:
        return "foreign", "", ""
    device, rest = match["device"], match["rest"]
    port = _PORT_PATH.match(rest)
    if port is None:
        return "device", device, rest
    entity = f"{device}/{port['port']}"
    file = port["file"]
    if file.startswith(_SKIPPED_SUBTREES) or file in _SKIPPED_PORT_FILES:
        return "skip", entity, file
    if file.startswith("counters/"):
        return "pma", entity, file.removeprefix("counters/")
    if file.startswith("hw_counters/"):
        return "hw", entity, file.removeprefix("hw_counters/")
    return "port", entity, file


def _file_samples(path: str, value: str, line_no: int, line: str) -> list[Sample]:
    kind, entity, name = _where(path)
    if kind == "pma":
        return _pma_counter(entity, name, value, line_no, line)
    if kind == "hw":
        return _hw_counter(entity, name, value, line_no, line)
    if kind == "port":
        return _port_file(entity, name, value, line_no, line)
    if kind == "device":
        return _device_file(entity, name, value, line_no, line)
    if kind == "skip":
        return []
    raise ParseError(NAME, line_no, line, "not a /sys/class/infiniband path")


def _device_file(device: str, rest: str, value: str, line_no: int, line: str) -> list[Sample]:
    if rest in _SKIPPED_DEVICE_FILES or rest.startswith(_SKIPPED_DEVICE_SUBTREES):
        return []
    metric = _DEVICE_TEXT.get(rest)
    if metric is None:
        raise ParseError(NAME, line_no, line, f"unknown device file {rest!r}")
    return [Sample(device, metric, text=text(NAME, line_no, line, value, NA_TEXT), raw_key=rest)]


def _pma_counter(entity: str, name: str, value: str, line_no: int, line: str) -> list[Sample]:
    pma = _ibcounters.BY_SYSFS_NAME.get(name)
    if pma is None:
        raise ParseError(NAME, line_no, line, f"unknown PMA counter {name!r}")
    reading = counter(NAME, line_no, line, value, fraction=_NOT_WHOLE)
    return _ibcounters.counter_samples(entity, pma, name, reading, pma.sysfs_width)


def _hw_counter(entity: str, name: str, value: str, line_no: int, line: str) -> list[Sample]:
    # Validated even when skipped: garbage must not pass silently.
    reading = counter(NAME, line_no, line, value, fraction=_NOT_WHOLE)
    metric = _HW_COUNTERS.get(name)
    if metric is None:
        return []
    return [Sample(entity, metric, reading, raw_key=name)]


def _port_file(entity: str, file: str, value: str, line_no: int, line: str) -> list[Sample]:
    raw_key = file
    if file == "state":
        state = numbered_state(NAME, line_no, line, value, PORT_STATES)
        return [Sample(entity, "port_state", text=state, raw_key=raw_key)]
    if file == "phys_state":
        state = numbered_state(NAME, line_no, line, value, PHYS_STATES)
        return [Sample(entity, "phys_state", text=state, raw_key=raw_key)]
    if file == "rate":
        return _rate(entity, raw_key, value, line_no, line)
    if file in _PORT_NUMBERS:
        number = gauge(NAME, line_no, line, value)
        return [Sample(entity, _PORT_NUMBERS[file], number, raw_key=raw_key)]
    if file in _PORT_TEXT:
        return [Sample(entity, _PORT_TEXT[file], text=text(NAME, line_no, line, value, NA_TEXT), raw_key=raw_key)]
    raise ParseError(NAME, line_no, line, f"unknown port file {file!r}")


def _rate(entity: str, raw_key: str, value: str, line_no: int, line: str) -> list[Sample]:
    if is_na(value, NA_TEXT):
        return [Sample(entity, "link_rate_gbps", None, raw_key=raw_key)]
    samples = rate_text_samples(entity, value, raw_key)
    if samples is None:
        raise ParseError(NAME, line_no, line, "expected a rate like `400 Gb/sec (4X NDR)`")
    return samples
