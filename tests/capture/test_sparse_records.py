"""A capture of records that hold no packet bytes (a sparse file of zeros after a valid header) is refused within
seconds with the byte offset, instead of being walked record by record."""

from __future__ import annotations

import struct
import time
from pathlib import Path

from rdmatool.capture import CaptureError, Options, analyse_file
from rdmatool.capture.scan import MAX_EMPTY_RECORDS
from tests.capture.build import pcap_cli, roce, write

HEADER = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)


def _sparse(path: Path, size: int) -> Path:
    with path.open("wb") as handle:
        handle.write(HEADER)
        handle.truncate(size)  # a hole of zeros: every 16 bytes an empty record at time 0
    return path


def test_a_sparse_capture_is_refused_fast_with_the_offset(tmp_path: Path) -> None:
    path = _sparse(tmp_path / "sparse.pcap", 1 << 30)
    t0 = time.monotonic()
    try:
        analyse_file(path, Options())
    except CaptureError as exc:
        message = str(exc)
    else:
        raise AssertionError("a sparse capture was read as packets")
    assert time.monotonic() - t0 < 20
    expected_offset = 24 + 16 * MAX_EMPTY_RECORDS
    assert f"byte offset {expected_offset}: more than {MAX_EMPTY_RECORDS} records without a byte of packet" in message


def test_the_command_says_so_in_one_line(tmp_path: Path) -> None:
    path = _sparse(tmp_path / "sparse.pcap", 64 << 20)
    result = pcap_cli(str(path))
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "records without a byte of packet" in result.stderr


def test_a_few_empty_records_among_packets_are_still_read(tmp_path: Path) -> None:
    path = write(tmp_path / "some.pcap", [roce(psn=p) for p in range(5)])
    with path.open("ab") as handle:
        handle.write(struct.pack("<IIII", 1_700_000_001, 0, 0, 0) * 10)
    summary, _ = analyse_file(path, Options())
    assert summary["roce"]["packets"] == 5 and summary["packets"] == 15
