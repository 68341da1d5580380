"""What one host may send for one snapshot, counted as it arrives: bytes and lines.

A host is data, and a compromised one can print without end: 256 MiB of bare newlines once took the collector to
4.7 GB, and with `--forks` hosts at a time an OOM kill ends everyone's collection. So each snapshot's stream is
counted chunk by chunk while it is received, and the reading stops at the first chunk over either cap: what came
before it is kept (the host fails alone, named, with the sections it gave) and nothing more is held.

The caps are the run's `limits.snapshot_bytes` (32 MiB by default) and `limits.snapshot_lines` (1,000,000), settings
of the configuration file (rdmatool.limits). What a host costs the collector at most is about six times the byte cap
(the chunks, their join, the decoded text, its lines and the sections' texts at the peak of the framing check):
~200 MB by default, so `--forks` × 200 MB bounds the collection's memory. A switch is counted the same way
(rdmatool.transport.switch), its commands' outputs together making its snapshot.
"""

from __future__ import annotations

from rdmatool import limits

MAX_SNAPSHOT_BYTES = limits.DEFAULTS["snapshot_bytes"]
MAX_SNAPSHOT_LINES = limits.DEFAULTS["snapshot_lines"]


class CappedStream:
    """A snapshot's chunks as they arrive, within a byte and a line cap. `add` returns the failure once a chunk
    would go over either (that chunk is not kept), None otherwise."""

    def __init__(self, max_bytes: int | None = None, max_lines: int | None = None,
                 source: str = "the host sent") -> None:
        self.max_bytes = max_bytes or limits.value("snapshot_bytes")
        self.max_lines = max_lines or limits.value("snapshot_lines")
        self.source = source
        self.chunks: list[bytes] = []
        self.bytes = 0
        self.lines = 0
        self.over = False  # a chunk went over a cap: the stream ends there

    def add(self, data: bytes) -> str | None:
        if self.bytes + len(data) > self.max_bytes:
            return self._over(f"more than {self.max_bytes} bytes")
        lines = data.count(b"\n")
        if self.lines + lines > self.max_lines:
            return self._over(f"more than {self.max_lines} lines")
        self.chunks.append(data)
        self.bytes += len(data)
        self.lines += lines
        return None

    def _over(self, what: str) -> str:
        self.over = True
        return f"{self.source} {what} for one snapshot; output so far kept ({self.bytes} bytes, {self.lines} lines)"

    def text(self) -> str:
        """The stream so far as text (bad bytes replaced); the chunks are let go of first, so the bytes and the text
        are not held twice longer than the decode."""
        data = b"".join(self.chunks)
        self.chunks = []
        return data.decode("utf-8", errors="replace")
