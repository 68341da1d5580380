"""The nccl_debug parser on every real output of the two corpora that holds an NCCL record (skipped when a corpus is
absent): nccl-tests runs with NCCL INFO lines among their rows. The parser reads them without a ParseError, and what
it did not read is counted, line for line, in `parse_skipped_lines`."""

from __future__ import annotations

import re

import pytest

from rdmatool.parsers import nccl_debug
from tests.helpers import REAL_OUTPUTS, REAL_OUTPUTS_2

RECORD = re.compile(r"\S+:\d+:\d+ \[\d+\] NCCL (?:INFO|WARN|TRACE)")


def _logs() -> list:
    found = [path for root in (REAL_OUTPUTS, REAL_OUTPUTS_2) if root.is_dir()
             for path in sorted(root.rglob("*.txt")) if RECORD.search(path.read_text(errors="replace"))]
    if not found:
        return [pytest.param(None, marks=pytest.mark.skip(reason="no real-output corpus with an NCCL record here"))]
    return [pytest.param(path, id=path.name) for path in found]


@pytest.mark.parametrize("path", _logs())
def test_a_real_log_parses_and_counts_what_it_skipped(path) -> None:
    text = path.read_text(errors="replace")
    samples = nccl_debug.parse(text)
    read = [s for s in samples if s.metric != "parse_skipped_lines"]
    skipped = sum(s.value for s in samples if s.metric == "parse_skipped_lines")
    lines = [line for line in text.splitlines() if line.strip()]
    banners = sum(1 for s in read if s.metric == "nccl_version")
    records = sum(len(RECORD.findall(line)) for line in lines)
    assert records >= 1
    # every line that is no record and no banner is counted; a record of a kind not read (`Launch mode`) too
    assert len(lines) - records - banners <= skipped <= len(lines) - banners
    assert all(s.entity.endswith(tuple(f":{pid}" for pid in re.findall(r":(\d+):\d+ \[", text)))
               for s in read if s.entity != "log")
