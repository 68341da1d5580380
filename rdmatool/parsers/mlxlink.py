"""`mlxlink -d <dev> [-p N] -c [--json]`: physical link state, speed, width, FEC, BER and error counters.

Command: `mlxlink -d mlx5_0 -p 1 -c` or the same with `--json` (MFT / mstflint; once per port, stored per port).
Emits (entity `port`, a placeholder: the caller knows which device and port it asked about; `port/laneN` for the
per-lane values; in a bundle, an output qualified `<device>.<port>` names them `mlx5_0/1` and `mlx5_0/1/laneN`,
the port's name in every other tool's view: rdmatool.table.sample_columns.entity_namer): `port_state` (State), `phys_state` (Physical state), `speed` (Speed, as printed: IB-HDR, 200G),
`link_width` (Width as printed, 4x) and `link_width_lanes`, `fec_mode` (FEC), `symbol_errors`,
`effective_physical_errors`, `link_down_events` (Link Down Counter), `link_error_recovery` (Link Error Recovery
Counter) as int counters, `effective_ber`, `raw_ber`, `symbol_ber` (float gauges from `15E-255`), per lane
`raw_physical_errors` (counter) and `raw_ber` (entity `port/laneN`), `link_status_opcode` (Status Opcode) and
`link_recommendation` (Recommendation, text); a `tool_error` sample for `-E-` messages or a JSON status != 0.
Example:
    Operational Info
    ----------------
    State                           : Active
    Speed                           : IB-HDR
    Physical Counters and BER Info
    ------------------------------
    Effective Physical BER          : 15E-255
Caveats: text or JSON is chosen by the first meaningful character (`{` = JSON:
`{"result": {"output": {"Operational Info": {...}}}, "status": {...}}`, per-lane values as a list or as
`{"values": [...]}`). ANSI colour codes are stripped. Other sections (Supported Info, Module Info, Tool
Information, eye, histogram ...) are read as `Key : value` rows and not emitted; a section title is accepted when a
dash underline follows it or it ends in Info/Information; anything else is a ParseError. `N/A` numbers give value
None, `N/A` texts are skipped. No verbatim `-c` capture was available here: the fixtures follow the NVIDIA MFT
"mlxlink Utility" documentation and the field names printed by mstflint's mlxlink.
An empty output (nothing, or white space only) is a ParseError, `empty output: mlxlink printed nothing`, on which
`rdmatool parse` exits 2: mlxlink always prints its Operational Info, or its JSON document, when it succeeds, so an
empty answer is missing data, not "nothing wrong".
"""

from __future__ import annotations

import json
import re

from rdmatool.errors import ParseError
from rdmatool.model import Sample
from rdmatool.parsers._common import lines, refuse_empty
from rdmatool.parsers._nic import NA_NIC, PORT, is_noise, nic_tool_error, strip_ansi
from rdmatool.parsers._samples import counter, is_na, tool_error

NAME = "mlxlink"

_ROW = re.compile(r"^\s*(?P<key>[A-Za-z][^:]*?)\s*:\s*(?P<value>.*?)\s*$")
_UNDERLINE = re.compile(r"^\s*[-=]{3,}\s*$")
_TITLE = re.compile(r"^\s*(?P<title>[A-Za-z][\w ()&/.,+-]*?)\s*#?\s*$")
_TITLE_WORD = re.compile(r"\b(?:Info|Information)\s*#?\s*$", re.IGNORECASE)
_MESSAGE = re.compile(r"^\s*-[WI]-")  # MFT warnings / informational notes

_TEXT_FIELDS = {
    "state": "port_state",
    "physical state": "phys_state",
    "speed": "speed",
    "fec": "fec_mode",
    "recommendation": "link_recommendation",
}
_COUNTER_FIELDS = {
    "symbol errors": "symbol_errors",
    "effective physical errors": "effective_physical_errors",
    "link down counter": "link_down_events",
    "link error recovery counter": "link_error_recovery",
}
_BER_FIELDS = {
    "effective physical ber": "effective_ber",
    "raw physical ber": "raw_ber",
    "symbol ber": "symbol_ber",
}
_LANE_FIELDS = {"raw physical errors per lane": "raw_physical_errors", "raw physical ber per lane": "raw_ber"}

Where = tuple[int, str]  # (line number, line) of the field: where a ParseError points


def _int_counter(raw: str, where: Where) -> int | None:
    return counter(NAME, where[0], where[1], raw, NA_NIC, expected="an integer counter")


def _ber(raw: str, where: Where) -> float | None:
    if is_na(raw, NA_NIC):
        return None
    try:
        value = float(raw.strip().replace(",", ""))
    except ValueError:
        raise ParseError(NAME, *where, f"expected a BER like 15E-255, got {raw!r}") from None
    if value != value:
        raise ParseError(NAME, *where, f"expected a BER like 15E-255, got {raw!r}")
    return value


def _field_samples(key: str, value: object, where: Where) -> list[Sample]:
    """Samples for one `Key : value` field (text form: value is a str; JSON form: str, number, list or dict)."""
    norm = key.strip().lower()
    if norm in _LANE_FIELDS:
        return _lane_samples(key, norm, value, where)
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        if (
            norm in _TEXT_FIELDS
            or norm in _COUNTER_FIELDS
            or norm in _BER_FIELDS
            or norm in ("width", "status opcode")
        ):
            raise ParseError(NAME, *where, f"unexpected value type for {key!r}")
        return []  # a structured value of a field we do not emit
    raw = str(value).strip()
    if norm in _TEXT_FIELDS:
        return [] if is_na(raw, NA_NIC) else [Sample(PORT, _TEXT_FIELDS[norm], text=raw, raw_key=key)]
    if norm in _COUNTER_FIELDS:
        return [Sample(PORT, _COUNTER_FIELDS[norm], _int_counter(raw, where), raw_key=key)]
    if norm in _BER_FIELDS:
        return [Sample(PORT, _BER_FIELDS[norm], _ber(raw, where), raw_key=key)]
    if norm == "width":
        return _width_samples(key, raw)
    if norm == "status opcode":
        return [Sample(PORT, "link_status_opcode", _int_counter(raw, where), raw_key=key)]
    return []


def _width_samples(key: str, raw: str) -> list[Sample]:
    if is_na(raw, NA_NIC):
        return []
    lanes = re.match(r"^(\d+)\s*[xX]?$", raw)
    out = [Sample(PORT, "link_width", text=raw, raw_key=key)]
    if lanes:
        out.append(Sample(PORT, "link_width_lanes", int(lanes.group(1)), raw_key=key))
    return out


def _lane_values(value: object, where: Where) -> list[str]:
    if isinstance(value, dict):
        value = value.get("values", value.get("Values"))
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, list) and all(
        isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in value
    ):
        return [str(v).strip() for v in value]
    raise ParseError(NAME, *where, "expected a comma list of per-lane values")


def _lane_samples(key: str, norm: str, value: object, where: Where) -> list[Sample]:
    metric = _LANE_FIELDS[norm]
    convert = _int_counter if metric == "raw_physical_errors" else _ber
    return [
        Sample(f"{PORT}/lane{lane}", metric, convert(raw, where), raw_key=key)
        for lane, raw in enumerate(_lane_values(value, where))
    ]


def _keep_first(samples: list[Sample]) -> list[Sample]:
    """A field printed twice (e.g. in two sections) is reported once, from its first appearance."""
    seen: set[tuple[str, str]] = set()
    out = []
    for sample in samples:
        key = (sample.entity, sample.metric)
        if key in seen and sample.metric != "tool_error":
            continue
        seen.add(key)
        out.append(sample)
    return out


# --- text form -----------------------------------------------------------------------------------------------------


def _is_title(numbered: list[tuple[int, str]], index: int) -> bool:
    line = numbered[index][1]
    if not _TITLE.match(line):
        return False
    if _TITLE_WORD.search(line):
        return True
    following = next((text for _, text in numbered[index + 1 :] if text.strip()), "")
    return bool(_UNDERLINE.match(following))


def _parse_text(numbered: list[tuple[int, str]]) -> list[Sample]:
    samples: list[Sample] = []
    for index, (line_no, line) in enumerate(numbered):
        if is_noise(line) or _UNDERLINE.match(line) or _MESSAGE.match(line):
            continue
        message = nic_tool_error(line)
        if message is not None:
            samples.append(tool_error(PORT, message))
            continue
        match = _ROW.match(line)
        if match:
            samples.extend(_field_samples(match["key"], match["value"], (line_no, line)))
        elif not _is_title(numbered, index):
            raise ParseError(NAME, line_no, line)
    return samples


# --- JSON form -----------------------------------------------------------------------------------------------------


def _line_of(numbered: list[tuple[int, str]], needle: str | None = None) -> tuple[int, str]:
    """The first input line mentioning a JSON key (else the first non-blank line): errors still point at a line."""
    if needle is not None:
        for line_no, line in numbered:
            if f'"{needle}"' in line:
                return line_no, line
    return next(((n, text) for n, text in numbered if text.strip()), (1, ""))


def _parse_json(text: str, numbered: list[tuple[int, str]]) -> list[Sample]:
    try:
        document = json.loads(text)
    except RecursionError:
        raise ParseError(NAME, *_line_of(numbered), "JSON nested too deeply") from None
    except ValueError as exc:
        line_no = getattr(exc, "lineno", 1)
        line = dict(numbered).get(line_no, "")
        raise ParseError(NAME, line_no, line, f"invalid JSON ({getattr(exc, 'msg', exc)})") from None
    if not isinstance(document, dict):
        raise ParseError(NAME, *_line_of(numbered), "expected a JSON object")
    samples: list[Sample] = []
    status = document.get("status")
    result = document.get("result", document)
    output = result.get("output") if isinstance(result, dict) else None
    if output is None and isinstance(result, dict) and any(isinstance(v, dict) for v in result.values()):
        output = result  # sections straight under "result" (or at the top)
    if output is not None and not isinstance(output, dict):
        raise ParseError(NAME, *_line_of(numbered, "output"), "expected an object of sections")
    for fields in (output or {}).values():
        if not isinstance(fields, dict):
            continue  # a scalar or list under output is not a section of key/value rows
        for key, value in fields.items():
            samples.extend(_field_samples(str(key), value, _line_of(numbered, str(key))))
    samples.extend(_status_samples(status, numbered))
    if output is None and not samples:
        raise ParseError(NAME, *_line_of(numbered, "result"), "no mlxlink result in the JSON document")
    return samples


def _status_samples(status: object, numbered: list[tuple[int, str]]) -> list[Sample]:
    if status is None:
        return []
    if not isinstance(status, dict):
        raise ParseError(NAME, *_line_of(numbered, "status"), "expected a status object")
    code = status.get("code", 0)
    if code in (0, "0", None):
        return []
    message = status.get("message") or f"mlxlink status code {code}"
    return [tool_error(PORT, str(message).strip(), raw_key="status")]


def parse(text: str) -> list[Sample]:
    refuse_empty(NAME, "mlxlink", text)
    numbered = [(line_no, strip_ansi(line)) for line_no, line in lines(text)]
    first = next((line for _, line in numbered if not is_noise(line)), "")
    if first.lstrip().startswith("{"):
        # drop the noise lines (provenance comment, echoed command) but keep the line numbering for errors
        body = "\n".join(
            "" if is_noise(line) and not line.lstrip().startswith("{") else line for _, line in numbered
        )
        return _keep_first(_parse_json(body, numbered))
    return _keep_first(_parse_text(numbered))
