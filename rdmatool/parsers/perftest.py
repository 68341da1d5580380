"""perftest (ib_write_bw, ib_read_bw, ib_send_bw, ib_*_lat): bandwidth, message rate and latency per message size.

Command: `ib_write_bw|ib_read_bw|ib_send_bw|ib_atomic_bw [-a] [-D s] [--report_gbits] [--run_infinitely] [server]`
    and `ib_write_lat|ib_read_lat|ib_send_lat|ib_atomic_lat [-a] [-D s] [server]` (client, server, or both in one file).
Emits (entity = the test name derived from the title, `size_bytes` = the `#bytes` column on every row sample):
    bandwidth rows: `iterations`, `bw_peak_gbps`, `bw_avg_gbps` (Gb/s = 10^9 bit/s; `MB/sec` columns are 2^20 B/s
    and are converted, rounded to 6 decimals), `msg_rate_mpps`;
    latency rows: `iterations`, `lat_min_us`, `lat_max_us`, `lat_typical_us`, `lat_avg_us`, `lat_stdev_us`,
    `lat_p99_us`, `lat_p999_us` (older perftest: only the first five columns); `-D` duration rows
    (`#bytes #iterations t_avg[usec] tps average`): `iterations`, `lat_avg_us`, `msg_rate_mpps` (tps / 10^6);
    header facts: `perftest_test` (title text), `perftest_device`, `perftest_link_type`, `perftest_connection`,
    `perftest_data_exchange` (text), `perftest_mtu`, `perftest_gid_index`, `perftest_qps` (values);
    the tool's own failures: `tool_error` (entity = the test name, or `perftest` before any title).
    Title -> entity: `<Verb> [<atomic op>] [Bidirectional] [Post List] BW|Latency Test` -> `ib_<verb>_bw|lat` with
    Send -> send, RDMA_Write -> write, RDMA_Read -> read, Atomic -> atomic; `Bidirectional` (-b) keeps the tool's
    name (`RDMA_Write Bidirectional BW Test` -> `ib_write_bw`), its `perftest_test` text tells the two apart.
    `raw_key` = the column header as printed (`BW average[MB/sec]`, `t_typical[usec]`) or the parameter key.
Example:
                        RDMA_Write BW Test
     Dual-port       : OFF          Device         : mlx5_0
     ...
     #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]
     65536      5000             11634.55            11633.98              0.186144
Caveats: server and client output captured into one file repeat the header and the rows; each header fact is
    emitted once per distinct value and a row identical to one already emitted (same test, columns and values) is
    dropped, so an exactly repeated `--run_infinitely` interval row also appears once, while differing interval
    rows of the same size are all kept in order; a repeated failure message is likewise emitted once.
    `N/A` cells give value None; after `WARNING: BW peak won't be measured` a printed peak of 0 gives value None.
    A `Name : Value` field of the test-information block the parser has no meaning for is kept as text
    (`perftest_parameter`, raw_key = the name); after the table header such a line is a ParseError, as are unknown
    table columns (`--cpu_util`, per-port, QoS, latency in cycles with -C), `-U`/histogram dumps and `--output=`
    single numbers. Failure lines mid-run (`Couldn't ...`, `Failed to ...`, `Unable to ...`,
    `ethernet_read_keys: ...`, `pp_read_keys: Success`) are `tool_error` samples, not parse errors.
    A row whose columns run together (Soft-RoCE `rxe` latencies wider than perftest's printf field:
    `218304.517731.80`) is a ParseError naming the line, never a guess at where one value ends.
    Noise is skipped and counted (`parse_skipped_lines`, entity = the class): a shell prompt or a bare echoed
    perftest command line before the report (`command_echo`), a prompt glued to the line after it
    (`[user@host ~]$ Using sampled CPU speed ...`: `shell_prompt`, the rest of the line is read on), job-control
    lines such as `[1] 12345` or `[1]+  Done ...` (`job_control`), a `...` line where whoever pasted the output
    cut it (`elided`), and the libibverbs/CUDA/perftest chatter listed in `_NOISE` (`library`): among it UD's
    `Max msg size in UD is MTU 4096` / `Changing to this MTU`, `--use_cuda_dmabuf`'s
    `Calling ibv_reg_dmabuf_mr(...) for QP #0`, and the `Connected:` / `Completed:` / `Total run time:` lines of
    vendor builds.
    A leading `# ...` provenance comment is skipped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rdmatool.errors import ParseError
from rdmatool.model import Sample
from rdmatool.parsers._common import Noise, lines, tool_error_message
from rdmatool.parsers._samples import gauge, tool_error

NAME = "perftest"

# --- line shapes -----------------------------------------------------------------------------------------------------

_TITLE = re.compile(
    r"^\s*(?P<verb>Send|RDMA_Write|RDMA_Read|Atomic)(?: (?:CMP_AND_SWAP|FETCH_AND_ADD))?(?: Bidirectional)?"
    r"(?: Post List)?(?: (?P<kind>BW|Latency))?(?: forwarding)?(?: Multicast)? Test\s*$"
)
_VERBS = {"Send": "send", "RDMA_Write": "write", "RDMA_Read": "read", "Atomic": "atomic"}
_KINDS = {"BW": "bw", "Latency": "lat"}

_SEPARATOR = re.compile(r"^\s*-{20,}\s*$")
_STARS = re.compile(r"^\s*\*+\s*$")
_ADDRESS = re.compile(r"^\s*(?:local|remote) address:\s*LID\b", re.IGNORECASE)
_GID = re.compile(r"^\s*GID:\s*[0-9A-Fa-f:.]+\s*$")
_HEADER = re.compile(r"^\s*#bytes\b")
_PROMPT = re.compile(r"^(?:\S*|\[[^\]]*\])[#$>]\s*(?:sudo\s+)?(?:\S*/)?(?:ib_\w+|raw_ethernet_\w+)(?:\s.*)?$")
# The command itself echoed before the report (`+ ib_write_bw ...` from `set -x`, `sudo taskset -c 3 ib_write_bw`).
_ECHOED_COMMAND = re.compile(r"^\s*(?:\+\s+)?(?:sudo\s+)?(?:taskset\s+-c\s+\S+\s+)?(?:numactl\s+\S+\s+)?"
                             r"(?:\S*/)?(?:ib_\w+|raw_ethernet_\w+)(?:\s.*)?$")
# A shell's job control: `[1] 12345` when a server is put in the background, `[1]+  Done   ib_write_bw ...`.
_JOB_CONTROL = re.compile(r"^\s*\[\d+\][+-]?\s+(?:\d+(?:\s+\d+)*|Done|Running|Stopped|Terminated|Killed|Exit \d+)"
                          r"(?:\s.*)?$")
_PEAK_NOT_MEASURED = re.compile(r"^\s*WARNING: BW peak won't be measured in this run\.?\s*$", re.IGNORECASE)

# Informational lines perftest, libibverbs and the CUDA memory backend print around the report; none carries data.
_NOISE = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        r"^\s*\* Waiting for client to connect\.\.\. \*\s*$",
        r"^\s*Waiting for client rdma_cm QP to connect\s*$",
        r"^\s*Please run the same command with the IB/RoCE interface IP\s*$",
        r"^\s*Conflicting CPU frequency values detected: .*$",
        r"^\s*CPU Frequency is not max\.?\s*$",
        r"^\s*libibverbs: Warning: .*$",
        r"^\s*Test with events\. Using \S+\s*$",
        r"^\s*MultiCast runs on UD!\s*$",
        r"^\s*Requested mtu is higher than active mtu\s*$",
        r"^\s*Changing to active mtu - \d+\s*$",
        r"^\s*Device not recognized to implement inline feature\. Disabling it\s*$",
        r"^\s*Post List requested - CQ moderation will be the size of the post list\s*$",
        r"^\s*Perftest doesn't supports? CUDA tests with inline messages: inline size set to 0\s*$",
        # --use_cuda (GPUDirect) set-up and tear-down chatter
        r"^\s*(?:initializing CUDA|creating CUDA Ctx|making it the current CUDA Ctx|destroying current CUDA Ctx)\s*$",
        r"^\s*Listing all CUDA devices in system:\s*$",
        r"^\s*CUDA device \d+: PCIe address is [0-9A-F]+:[0-9A-F]+\s*$",
        r"^\s*CUDA device integrated: [0-9A-F]+\s*$",
        r"^\s*Picking (?:device No\.|GPU number) \d+\s*$",
        r"^\s*Finding PCIe BUS \S+\s*$",
        r"^\s*\[pid = \d+, dev = \d+\] device name = \[.*\]\s*$",
        r"^\s*(?:allocated GPU buffer|using DMA-BUF for GPU buffer|deallocating GPU buffer) .*$",
        r"^\s*(?:cuMemAlloc\(\) of a \d+ bytes GPU buffer|Starting GPU touching process|stopping CUDA gpu touch).*$",
        r"^\s*(?:using|registering|registered) (?:a )?dma-?buf\b.*$",
        r"^\s*allocated mmap buffer of size \d+ at 0x[0-9A-Fa-f]+\s*$",
        r"^\s*Requested SQ size might be too big\. Try reducing TX depth and/or inline size\.?\s*$",
        # UD (-c UD) caps the message size at the MTU and says so before the report
        r"^\s*Max msg size in UD is MTU \d+\s*$",
        r"^\s*Changing to this MTU\s*$",
        # --use_cuda_dmabuf: one registration line per QP
        r"^\s*Calling ibv_reg_(?:dmabuf_)?mr\(.*\) for QP #\d+\s*$",
        # builds that time the run (vendor perftest forks) and sample the CPU clock themselves
        r"^\s*Using sampled CPU speed \d+ MHz over reported speed \d+ MHz\s*$",
        r"^\s*(?:Connected|Completed): \w{3} \w{3} +\d{1,2} \d\d:\d\d:\d\d \d{4}\s*$",
        r"^\s*Total run time: \d+(?:\.\d+)?\s*s\s*$",
    )
)
# Whoever pasted the output cut part of it (`...`, `......`): counted, so the cut shows in the notes.
_ELIDED = re.compile(r"^\s*\.{3,}\s*$")
# A shell prompt glued to the start of the line that follows it (a server put in the background writes its first
# line after the prompt): `[user@host ~]$ Using sampled CPU speed ...`, `root@gpu01:~# ...`.
_GLUED_PROMPT = re.compile(r"^(?:\[[^\]\n]{1,80}\]|[\w.-]{1,64}@[\w.-]{1,64}:\S{0,80}?)[#$]\s+(?P<rest>\S.*)$")

# perftest's own failure messages beyond the shared ones (`Couldn't connect to`, `Failed status 12`, ...).
_PERFTEST_ERRORS = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        r"^\s*(?:\w+:\s*)?(?:couldn'?t|could not|unable to|failed|cannot|can'?t)\b.*$",
        # `pp_read_keys: Success`: the key exchange read nothing (perror with errno 0: the peer went away)
        r"^\s*\w+_read_keys:\s.*$",
        r"^\s*error\b.*$",
        r"^\s*port number \d+ state is \w+\s*$",
        r"^\s*scnt=\d+, ccnt=\d+\s*$",
    )
)

# Every parameter key perftest prints in its test-information block (both spellings where versions differ).
_KNOWN_KEYS = {
    "dual-port", "device", "number of qps", "transport type", "connection type", "using srq", "pcie relax order",
    "ibv_wr* api", "tx depth", "rx depth", "post list", "cq moderation", "mtu", "link type", "buffer size",
    "gid index", "gid index2", "max inline data", "outstand reads", "rdma_cm qps", "data ex. method", "tos",
    "lock-free", "using ddp", "using enhanced reorder", "burst size", "rate limiter", "rate limit type",
}  # fmt: skip
_TEXT_FACTS = {
    "device": "perftest_device",
    "link type": "perftest_link_type",
    "connection type": "perftest_connection",
    "data ex. method": "perftest_data_exchange",
}
_NUMBER_FACTS = {"mtu": "perftest_mtu", "gid index": "perftest_gid_index", "number of qps": "perftest_qps"}
# Two printed decimals with no space between them: `218304.517731.80`.
_GLUED_NUMBERS = re.compile(r"^-?\d+\.\d+\.\d")
_PARAM_KEY = re.compile(r"^[A-Za-z][\w .*/()\-]*$")

# --- table columns ---------------------------------------------------------------------------------------------------

MIB_PER_S_IN_GBPS = 1048576 * 8 / 1e9  # perftest's MB/sec is 2^20 bytes/s


@dataclass(frozen=True)
class _Column:
    raw: str  # as printed, kept as raw_key
    metric: str | None  # None: the #bytes column, which becomes size_bytes
    scale: float | None = None  # multiply (and round) the printed value; None keeps it as printed


_COLUMN = re.compile(
    r"#bytes|#iterations|BW (?:peak|average)\[(?:MB|MiB|Gb)/sec\]|MsgRate\[Mpps\]"
    r"|t_(?:min|max|typical|avg|stdev)\[\w+\]|99(?:\.9)?% percentile\[\w+\]|tps average"
)
_LATENCY_METRICS = {
    "t_min": "lat_min_us",
    "t_max": "lat_max_us",
    "t_typical": "lat_typical_us",
    "t_avg": "lat_avg_us",
    "t_stdev": "lat_stdev_us",
    "99% percentile": "lat_p99_us",
    "99.9% percentile": "lat_p999_us",
}


def _column(raw: str) -> _Column | str:
    """The meaning of one printed column header, or an error message."""
    if raw == "#bytes":
        return _Column(raw, None)
    if raw == "#iterations":
        return _Column(raw, "iterations")
    if raw == "MsgRate[Mpps]":
        return _Column(raw, "msg_rate_mpps")
    if raw == "tps average":
        return _Column(raw, "msg_rate_mpps", 1e-6)
    if raw.startswith("BW "):
        metric = "bw_peak_gbps" if "peak" in raw else "bw_avg_gbps"
        return _Column(raw, metric, None if "Gb/sec" in raw else MIB_PER_S_IN_GBPS)
    name, unit = raw[:-1].split("[")
    if unit != "usec":
        return f"latency reported in {unit!r}, only usec is understood (drop -C)"
    return _Column(raw, _LATENCY_METRICS[name])


def _header_columns(line_no: int, line: str) -> tuple[_Column, ...]:
    columns: list[_Column] = []
    position = 0
    for match in _COLUMN.finditer(line):
        if line[position : match.start()].strip():
            break
        column = _column(match.group())
        if isinstance(column, str):
            raise ParseError(NAME, line_no, line, column)
        columns.append(column)
        position = match.end()
    if line[position:].strip() or len(columns) < 3 or columns[0].metric is not None:
        raise ParseError(NAME, line_no, line, "unknown perftest table columns")
    return tuple(columns)


# --- parse -----------------------------------------------------------------------------------------------------------


@dataclass
class _State:
    test: str | None = None
    columns: tuple[_Column, ...] | None = None
    peak_unmeasured: bool = False
    samples: list[Sample] = field(default_factory=list)
    seen: set = field(default_factory=set)
    noise: Noise = field(default_factory=Noise)
    started: bool = False  # a title or a header line was seen: an echoed command can only come before

    @property
    def entity(self) -> str:
        return self.test or NAME

    def emit_once(self, key: tuple, samples: list[Sample]) -> None:
        """Interleaved server and client output repeats headers and rows: keep the first of each."""
        if key not in self.seen:
            self.seen.add(key)
            self.samples.extend(samples)


def _is_layout(line: str) -> bool:
    """Blank lines, rules and the connection lines: the report's own layout, skipped without a count."""
    return not line.strip() or bool(_SEPARATOR.match(line) or _STARS.match(line) or _ADDRESS.match(line)
                                    or _GID.match(line))


def _noise_kind(state: _State, line: str) -> str | None:
    """The class of a recognised noise line, or None when the line is not noise."""
    if _PROMPT.match(line):
        return "command_echo"
    if not state.started and _ECHOED_COMMAND.match(line):
        return "command_echo"
    if _JOB_CONTROL.match(line):
        return "job_control"
    if _ELIDED.match(line):
        return "elided"
    if any(p.match(line) for p in _NOISE):
        return "library"
    return None


def _error_message(line: str) -> str | None:
    message = tool_error_message(line)
    if message is None and any(p.match(line) for p in _PERFTEST_ERRORS):
        message = line.strip()
    return message


def _title(state: _State, match: re.Match[str]) -> None:
    kind = _KINDS.get(match["kind"] or "", "bw")  # a title without BW/Latency is a bandwidth flavour
    state.test = f"ib_{_VERBS[match['verb']]}_{kind}"
    state.columns = None
    title = match.string.strip()
    state.emit_once(("title", state.test, title), [Sample(state.test, "perftest_test", text=title)])


def _parameter_pairs(line_no: int, line: str) -> list[tuple[str, str]]:
    """`Key : Value` pairs; perftest prints up to two per line separated by tabs (or spaces after copy-paste)."""
    parts = line.split(":")
    pairs: list[tuple[str, str]] = []
    key = parts[0].strip()
    for index, part in enumerate(parts[1:], start=1):
        if index < len(parts) - 1:
            pieces = re.split(r"\t+|\s{2,}", part.strip(), maxsplit=1)
            if len(pieces) != 2:
                raise ParseError(NAME, line_no, line, "malformed perftest parameter line")
            value, next_key = pieces[0].strip(), pieces[1].strip()
        else:
            value, next_key = part.strip(), ""
        if not value or not _PARAM_KEY.match(key):
            raise ParseError(NAME, line_no, line, "malformed perftest parameter line")
        pairs.append((key, value))
        key = next_key
    return pairs


def _parameters(state: _State, line_no: int, line: str) -> None:
    for key, value in _parameter_pairs(line_no, line):
        canonical = " ".join(key.lower().split())
        if canonical not in _KNOWN_KEYS:
            if state.columns is not None:  # inside the table: not a header field, an unknown line
                raise ParseError(NAME, line_no, line, f"unknown perftest parameter {key!r}")
            # a field of a perftest version the parser has not seen: kept as printed, never a reason to fail
            sample = Sample(state.entity, "perftest_parameter", text=value, raw_key=key)
        elif canonical in _TEXT_FACTS:
            sample = Sample(state.entity, _TEXT_FACTS[canonical], text=value, raw_key=key)
        elif canonical in _NUMBER_FACTS:
            number = re.fullmatch(r"(\d+)(?:\[B\]|B)?", value)
            if number is None:
                raise ParseError(NAME, line_no, line, f"expected a number for {key!r}, got {value!r}")
            sample = Sample(state.entity, _NUMBER_FACTS[canonical], int(number.group(1)), raw_key=key)
        else:
            continue  # informational settings (TX depth, CQ Moderation ...) carry no metric
        state.emit_once(("fact", sample.entity, sample.metric, sample.value, sample.text), [sample])


def _row(state: _State, line_no: int, line: str) -> None:
    if state.columns is None:
        raise ParseError(NAME, line_no, line, "data row before the #bytes column header")
    cells = line.split()
    glued = next((cell for cell in cells if _GLUED_NUMBERS.match(cell)), None)
    if glued is not None:  # a value wider than its printf field runs into the next (Soft-RoCE's huge t_max)
        raise ParseError(NAME, line_no, line, f"two columns run together in {glued!r}")
    if len(cells) != len(state.columns):
        raise ParseError(NAME, line_no, line, f"expected {len(state.columns)} columns, got {len(cells)}")
    values = [gauge(NAME, line_no, line, cell) for cell in cells]
    size = values[0]
    if not isinstance(size, int) or size < 0:
        raise ParseError(NAME, line_no, line, "the #bytes column must be a whole number")
    samples = []
    for column, value in zip(state.columns[1:], values[1:], strict=True):
        if column.metric == "iterations" and value is not None and not isinstance(value, int):
            raise ParseError(NAME, line_no, line, "the #iterations column must be a whole number")
        if column.metric == "bw_peak_gbps" and state.peak_unmeasured and value == 0:
            value = None  # duration mode prints 0.00 for the peak it did not measure
        if column.scale is not None and value is not None:
            value = round(value * column.scale, 6)
        samples.append(Sample(state.entity, column.metric or "", value, size_bytes=size, raw_key=column.raw))
    state.emit_once(("row", state.entity, tuple(c.raw for c in state.columns), tuple(values)), samples)


def _line(state: _State, line_no: int, line: str, leading: bool) -> None:
    if leading and line.lstrip().startswith("#") and not _HEADER.match(line):
        return  # a provenance comment added by whoever captured the output
    if _is_layout(line):
        return
    kind = _noise_kind(state, line)
    if kind is not None:
        state.noise.skip(kind)
        return
    if _PEAK_NOT_MEASURED.match(line):
        state.peak_unmeasured = True
        return
    title = _TITLE.match(line)
    if title:
        state.started = True
        _title(state, title)
        return
    message = _error_message(line)
    if message is not None:
        state.emit_once(("error", state.entity, message), [tool_error(state.entity, message)])
        return
    if _HEADER.match(line):
        state.started = True
        state.columns = _header_columns(line_no, line)
        return
    first = line.split()[0]
    if first[0].isdigit():
        _row(state, line_no, line)
        return
    glued = _GLUED_PROMPT.match(line)
    if glued:
        state.noise.skip("shell_prompt")
        _line(state, line_no, glued.group("rest"), leading=False)
        return
    if ":" in line and state.test is not None:
        _parameters(state, line_no, line)
        return
    raise ParseError(NAME, line_no, line)


def parse(text: str) -> list[Sample]:
    state = _State()
    leading = True
    for line_no, line in lines(text):
        _line(state, line_no, line, leading)
        leading = leading and (not line.strip() or line.lstrip().startswith("#"))
    return state.samples + state.noise.samples()
