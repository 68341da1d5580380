"""A pcapng packet block whose captured length does not fit inside the block is a malformed file: exit 2 naming
the file and the block's byte offset, never a short packet read as if the file were whole (it used to exit 0)."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from rdmatool.capture.reader import CaptureError, open_capture
from tests.capture.build import pcap_cli, roce, write


def _good(tmp_path: Path) -> bytes:
    return write(tmp_path / "ok.pcapng", [roce(psn=i) for i in range(3)], fmt="pcapng").read_bytes()


def _block(block_type: int, body: bytes) -> bytes:
    """One little-endian pcapng block: type, total length, body (padded to 4), total length again."""
    body += bytes(-len(body) % 4)
    length = 12 + len(body)
    return struct.pack("<II", block_type, length) + body + struct.pack("<I", length)


def _epb(caplen: int, data: bytes = bytes(8)) -> bytes:
    """An enhanced packet block on interface 0 claiming `caplen` captured bytes around `data`."""
    return _block(6, struct.pack("<IIIII", 0, 0, 0, caplen, caplen) + data)


@pytest.mark.parametrize(("block", "claim"), [
    (_epb(100_000), "enhanced packet block claims 100000 captured bytes but its block of 40 bytes holds at most 8"),
    (_epb(9), "enhanced packet block claims 9 captured bytes but its block of 40 bytes holds at most 8"),
    (_block(2, struct.pack("<HHIIII", 0, 0, 0, 0, 64, 64) + bytes(4)),
     "packet block claims 64 captured bytes but its block of 36 bytes holds at most 4"),
    (_block(3, struct.pack("<I", 500) + bytes(16)),
     "simple packet block claims 500 captured bytes but its block of 32 bytes holds at most 16"),
])
def test_a_block_whose_lengths_disagree_is_exit_2_with_its_offset(tmp_path: Path, block: bytes, claim: str) -> None:
    good = _good(tmp_path)
    bad = tmp_path / "bad.pcapng"
    bad.write_bytes(good + block)
    out = pcap_cli(str(bad))
    assert out.returncode == 2, out.stdout
    assert out.stderr == f"rdmatool pcap: {bad}: byte offset {len(good)}: pcapng {claim}\n"


def test_the_bad_block_in_the_middle_stops_the_read_at_its_offset(tmp_path: Path) -> None:
    good = _good(tmp_path)
    bad = tmp_path / "middle.pcapng"
    bad.write_bytes(good + _epb(100_000) + _epb(8))  # a well-formed block after it changes nothing
    cap = open_capture(bad)
    try:
        with pytest.raises(CaptureError) as caught:
            for _ in cap.reader:
                pass
    finally:
        cap.close()
    assert caught.value.offset == len(good) and "claims 100000 captured bytes" in caught.value.reason


def test_a_block_that_holds_what_it_claims_reads(tmp_path: Path) -> None:
    path = tmp_path / "fits.pcapng"
    path.write_bytes(_good(tmp_path) + _epb(8))
    cap = open_capture(path)
    try:
        lengths = [len(data) for data, _meta in cap.reader]
    finally:
        cap.close()
    assert lengths[-1] == 8 and len(lengths) == 4
