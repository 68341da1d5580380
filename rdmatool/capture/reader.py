"""Streaming pcap / pcapng framing: scapy's RawPcapReader / RawPcapNgReader hand out each record's bytes; nothing
is dissected here (see rdmatool.capture.decode for the header walk).

`open_capture(path) -> Capture` checks the file header itself first, so a file that is not a capture, or one cut
inside its header, is a CaptureError naming the file and the byte offset. scapy's readers treat a record cut short
at the end, or a block of impossible length, as a quiet end of file; `Capture.check_end()` looks at where reading
stopped and turns such an end into a CaptureError with the offset of the record that is incomplete. A packet block
whose captured length does not fit inside the block (scapy would cut the packet short and read on) is a CaptureError
with the block's offset as it is read.

Only regular files are opened, never through a symlink (rdmatool.files): a capture may come from a bundle written
elsewhere. Memory does not depend on the file's size: records are read one at a time.
"""

from __future__ import annotations

import logging
import os
import struct
from dataclasses import dataclass

from rdmatool import extras, files
from rdmatool.errors import RdmatoolError

PCAP_MAGICS = {
    b"\xd4\xc3\xb2\xa1": ("<", 1e-6), b"\xa1\xb2\xc3\xd4": (">", 1e-6),
    b"\x4d\x3c\xb2\xa1": ("<", 1e-9), b"\xa1\xb2\x3c\x4d": (">", 1e-9),
}
PCAPNG_MAGIC = b"\x0a\x0d\x0d\x0a"
# A record longer than this is not a packet: the file is corrupt (or the framing lost), not a jumbo frame.
MAX_RECORD = 256 * 1024


class CaptureError(RdmatoolError):
    """A capture file that cannot be read: `FILE: byte offset N: reason`."""

    def __init__(self, path: str | os.PathLike, offset: int, reason: str) -> None:
        self.path, self.offset, self.reason = str(path), offset, reason
        super().__init__(f"{self.path}: byte offset {offset}: {reason}")


@dataclass
class Capture:
    """One open capture: `format` (pcap | pcapng), `reader` (scapy's, iterate it for (bytes, metadata)),
    `linktype` (pcap: the file's; pcapng: per record in the metadata), `tick` (pcap: seconds per fraction unit)."""

    path: str
    format: str
    reader: object
    handle: object
    size: int
    linktype: int | None = None
    tick: float = 1e-6
    snaplen: int = 0
    endian: str = "<"

    def tell(self) -> int:
        return self.handle.tell()

    def close(self) -> None:
        self.handle.close()

    def check_end(self, last_good: int, last_start: int = 0) -> None:
        """After the reader stopped: CaptureError unless it stopped exactly at the end of the file. `last_good` is
        where the last complete record ended (pcap: Σ of the record lengths; pcapng: the position before the read
        that stopped), `last_start` where the last pcap record began."""
        if self.format == "pcap":
            _check_pcap_end(self, last_good, last_start)
        else:
            _check_pcapng_blocks(self, last_good)


def open_capture(path: str | os.PathLike, max_bytes: int | None = None) -> Capture:
    """The capture at `path`, header checked; CaptureError (FILE, offset, reason) when it is no capture, the file
    is unsafe (not a regular file, over `max_bytes`) or unreadable. MissingExtra when scapy is not installed."""
    extras.require("capture", "reading a packet capture")
    name = str(path)
    try:
        checked = files.open_regular(name, max_bytes)
    except FileNotFoundError:
        raise CaptureError(name, 0, "no such file") from None
    except files.UnsafeFileError as exc:
        raise CaptureError(name, 0, exc.reason) from None
    try:  # the same checked descriptor, with a buffer that suits reading a few hundred MB record by record
        handle = os.fdopen(os.dup(checked.fileno()), "rb", buffering=1 << 20)
    finally:
        checked.close()
    try:
        size = os.fstat(handle.fileno()).st_size
        head = handle.read(24)
        handle.seek(0)
        return _open_reader(name, handle, head, size)
    except CaptureError:
        handle.close()
        raise
    except OSError as exc:
        handle.close()
        raise CaptureError(name, 0, f"unreadable ({exc.strerror or exc})") from None


def _open_reader(name: str, handle, head: bytes, size: int) -> Capture:
    from scapy.error import Scapy_Exception
    from scapy.utils import RawPcapReader

    _quiet_scapy()
    if len(head) < 4:
        raise CaptureError(name, 0, f"not a pcap or pcapng file (only {len(head)} bytes)")
    magic = head[:4]
    if magic in PCAP_MAGICS:
        endian, tick = PCAP_MAGICS[magic]
        if len(head) < 24:
            raise CaptureError(name, len(head), f"pcap file header cut short ({len(head)} of 24 bytes)")
        major, _minor, _zone, _sig, snaplen, linktype = struct.unpack(endian + "HHiIII", head[4:24])
        if major != 2:
            raise CaptureError(name, 4, f"unsupported pcap version {major}")
        try:
            reader = RawPcapReader(handle)
        except (Scapy_Exception, EOFError, OSError) as exc:
            raise CaptureError(name, 0, f"unreadable pcap header ({exc})") from None
        return Capture(name, "pcap", reader, handle, size, linktype=linktype & 0x0FFFFFFF, tick=tick,
                       snaplen=snaplen, endian=endian)
    if magic == PCAPNG_MAGIC:
        if len(head) < 12:
            raise CaptureError(name, 0, f"pcapng section header cut short ({len(head)} bytes)")
        bom = head[8:12]
        if bom not in (b"\x4d\x3c\x2b\x1a", b"\x1a\x2b\x3c\x4d"):
            raise CaptureError(name, 8, "pcapng section header: bad byte-order magic")
        endian = "<" if bom == b"\x4d\x3c\x2b\x1a" else ">"
        (length,) = struct.unpack(endian + "I", head[4:8])
        if length < 28 or length % 4 or length > size:
            raise CaptureError(name, 0, f"pcapng section header: impossible block length {length}")
        try:
            reader = _checked_pcapng_reader()(handle)
        except (Scapy_Exception, EOFError, OSError) as exc:
            raise CaptureError(name, 0, f"unreadable pcapng section header ({exc})") from None
        reader.path = name
        return Capture(name, "pcapng", reader, handle, size, endian=endian)
    raise CaptureError(name, 0, f"not a pcap or pcapng file (magic {magic.hex()})")


_CHECKED_READER: list[type] = []


def _checked_pcapng_reader() -> type:
    """scapy's RawPcapNgReader, with each packet block's captured length checked against the block that holds it:
    scapy slices `block[20:20 + caplen]`, so an EPB claiming 100,000 bytes in a 40-byte block gave a short packet
    and the file read as valid. The class is made on first use (scapy is imported only when a capture is read)."""
    if _CHECKED_READER:
        return _CHECKED_READER[0]
    from scapy.utils import RawPcapNgReader

    class CheckedPcapNgReader(RawPcapNgReader):
        path = ""
        block_start = 0

        def _read_block(self, size=65535):  # noqa: ANN001, ANN202 - scapy's signature
            self.block_start = self.f.tell()
            return super()._read_block(size)

        def _disagrees(self, block_length: int, what: str, caplen: int, room: int) -> CaptureError:
            return CaptureError(self.path, self.block_start, f"pcapng {what} claims {caplen} captured bytes but its "
                                                             f"block of {block_length} bytes holds at most {room}")

        def _check_caplen(self, block: bytes, what: str) -> None:
            """An EPB's or PB's captured length (bytes 12-16 of the body, after a 20-byte fixed part) fits its block."""
            if len(block) >= 20:
                (caplen,) = struct.unpack(self.endian + "I", block[12:16])
                if caplen > len(block) - 20:
                    raise self._disagrees(len(block) + 12, what, caplen, len(block) - 20)

        def _read_block_epb(self, block, size):  # noqa: ANN001, ANN202
            self._check_caplen(block, "enhanced packet block")
            return super()._read_block_epb(block, size)

        def _read_block_pkt(self, block, size):  # noqa: ANN001, ANN202
            self._check_caplen(block, "packet block")
            return super()._read_block_pkt(block, size)

        def _read_block_spb(self, block, size):  # noqa: ANN001, ANN202
            if len(block) >= 4 and self.interfaces:
                (wirelen,) = struct.unpack(self.endian + "I", block[:4])
                snaplen = self.interfaces[0][1]
                caplen = min(wirelen, snaplen) if snaplen else wirelen
                if caplen > len(block) - 4:
                    raise self._disagrees(len(block) + 12, "simple packet block", caplen, len(block) - 4)
            return super()._read_block_spb(block, size)

    _CHECKED_READER.append(CheckedPcapNgReader)
    return CheckedPcapNgReader


def _quiet_scapy() -> None:
    """scapy logs 'packet has been truncated' and the like for every odd record: the end check reports them once."""
    logging.getLogger("scapy.runtime").setLevel(logging.ERROR)
    logging.getLogger("scapy").setLevel(logging.ERROR)


def _check_pcap_end(cap: Capture, records_end: int, last_start: int) -> None:
    """pcap: the records read end at `records_end` (the last one began at `last_start`); the file must end there."""
    if records_end == cap.size:
        return
    if records_end > cap.size:  # the last record announced more bytes than the file holds
        raise CaptureError(cap.path, last_start, f"packet record cut short (needs {records_end - last_start} bytes, "
                                                 f"{cap.size - last_start} left)")
    left = cap.size - records_end
    if left < 16:
        raise CaptureError(cap.path, records_end, f"packet record header cut short ({left} of 16 bytes)")
    raise CaptureError(cap.path, records_end, "unreadable packet record")


def _check_pcapng_blocks(cap: Capture, start: int) -> None:
    """Walk the blocks from `start` (block type, length, trailing length) to the end of the file; the first one
    that does not fit is the error."""
    fmt_endian = cap.endian
    handle = cap.handle
    offset = start
    while offset < cap.size:
        handle.seek(offset)
        head = handle.read(12)
        if len(head) < 8:
            raise CaptureError(cap.path, offset, f"pcapng block header cut short ({len(head)} of 8 bytes)")
        if head[:4] == PCAPNG_MAGIC and len(head) == 12:
            bom = head[8:12]
            if bom == b"\x4d\x3c\x2b\x1a":
                fmt_endian = "<"
            elif bom == b"\x1a\x2b\x3c\x4d":
                fmt_endian = ">"
            else:
                raise CaptureError(cap.path, offset + 8, "pcapng section header: bad byte-order magic")
        (length,) = struct.unpack(fmt_endian + "I", head[4:8])
        if length < 12 or length % 4:
            raise CaptureError(cap.path, offset, f"pcapng block with impossible length {length}")
        if offset + length > cap.size:
            raise CaptureError(cap.path, offset, f"pcapng block cut short (needs {length} bytes, "
                                                 f"{cap.size - offset} left)")
        handle.seek(offset + length - 4)
        (trailer,) = struct.unpack(fmt_endian + "I", handle.read(4))
        if trailer != length:
            raise CaptureError(cap.path, offset, f"pcapng block length {length} does not match its trailer "
                                                 f"{trailer}")
        block_type = struct.unpack(fmt_endian + "I", head[:4])[0]
        least = _LEAST_BLOCK.get(block_type, 12)
        if length < least:
            raise CaptureError(cap.path, offset, f"pcapng block of type {block_type} too short ({length} bytes, "
                                                 f"at least {least})")
        if block_type in (2, 3, 6) and length > MAX_RECORD:
            raise CaptureError(cap.path, offset, f"pcapng packet block of {length} bytes")
        offset += length


# The smallest well-formed block of each type scapy reads (header and trailer included): IDB, PB, SPB, EPB.
_LEAST_BLOCK = {1: 20, 2: 32, 3: 16, 6: 32}
