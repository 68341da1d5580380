"""One host's snapshot is bounded as it arrives, in bytes and in lines: the reading stops at the first chunk over a
cap, what came before is kept, and the failure says what the host gave."""

from __future__ import annotations

import time
import tracemalloc

from rdmatool import commands
from rdmatool.transport import host_framing, output_cap
from rdmatool.transport.local import LocalSession, local_target


def _feed(stream: output_cap.CappedStream, data: bytes, chunk: int = 65536) -> str | None:
    for start in range(0, len(data), chunk):
        error = stream.add(data[start:start + chunk])
        if error:
            return error
    return None


def test_bare_newlines_stop_at_the_line_cap_and_what_came_before_is_kept() -> None:
    stream = output_cap.CappedStream(max_bytes=1 << 30, max_lines=100_000)
    error = _feed(stream, b"\n" * 1_000_000, chunk=4096)
    assert error is not None and error.startswith("the host sent more than 100000 lines for one snapshot")
    assert stream.lines <= 100_000 and stream.bytes == stream.lines  # whole chunks kept, the one over dropped
    assert f"({stream.bytes} bytes, {stream.lines} lines)" in error
    assert stream.text() == "\n" * stream.lines and stream.chunks == []


def test_bytes_stop_at_the_byte_cap() -> None:
    stream = output_cap.CappedStream(max_bytes=10_000, max_lines=1_000_000)
    error = _feed(stream, b"x" * 50_000, chunk=3000)
    assert error is not None and "more than 10000 bytes" in error
    assert stream.bytes == 9000 and stream.text() == "x" * 9000


def test_an_ordinary_snapshot_passes_whole() -> None:
    stream = output_cap.CappedStream()
    body = b"rx_packets: 1\n" * 20_000
    assert _feed(stream, body) is None and stream.text() == body.decode()


def test_a_flood_of_newlines_from_the_script_is_cut_and_named() -> None:
    session = LocalSession(local_target("node1"), max_output_bytes=output_cap.MAX_SNAPSHOT_BYTES)
    flood = b"while :; do printf '\\n\\n\\n\\n\\n\\n\\n\\n\\n\\n\\n\\n\\n\\n\\n\\n'; done\n"
    text, error = session._run_script(["sh", "-s"], flood, time.monotonic() + 60, None)
    assert error is not None and f"more than {output_cap.MAX_SNAPSHOT_LINES} lines" in error
    assert 0 < text.count("\n") <= output_cap.MAX_SNAPSHOT_LINES


def test_the_framing_check_of_a_capped_flood_stays_within_a_bounded_memory() -> None:
    """The worst a host can send within the caps — lines as short as they get inside one open section — costs the
    framing check a bounded multiple of the byte cap (the documented --forks x cap bound rests on it). Lines of 32
    bytes are the costly shape: both caps are reached together, each line a string of its own."""
    token = commands.new_token()
    head = f"{commands.MARKER} {token} BEGIN 1 ibstat - 1700000000.0 ibstat\n".encode()
    stream = output_cap.CappedStream()
    assert stream.add(head) is None
    assert _feed(stream, (b"x" * 31 + b"\n") * (2 * output_cap.MAX_SNAPSHOT_LINES), chunk=32 * 2048) is not None
    assert stream.lines > 0.9 * output_cap.MAX_SNAPSHOT_LINES
    tracemalloc.start()
    try:
        sections, broken = host_framing.split_sections(stream.text(), token)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert broken is None and len(sections) == 1 and sections[0].exit_code is None  # cut off, kept
    assert peak < 7 * output_cap.MAX_SNAPSHOT_BYTES, peak  # ~180 MB measured; 4.7 GB before the caps
