"""Test helpers shared by several test modules (paths, the real-output corpus, parse shortcuts)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rdmatool import parsers
from rdmatool.model import Sample

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures"
PARSER_FIXTURES = FIXTURES / "parsers"
# Verbatim outputs of the real tools sit beside the repository, not inside it (they are not ours to commit).
REAL_OUTPUTS = Path(os.environ.get("RDMATOOL_REAL_OUTPUTS", REPO.parent / "shared" / "real-outputs"))
# The second corpus carries a registry.json naming each file's parser and the right outcome.
REAL_OUTPUTS_2 = Path(os.environ.get("RDMATOOL_REAL_OUTPUTS_2", REPO.parent / "shared" / "real-outputs-2"))


def real_output_files(*relative: str) -> list[Path]:
    """Every sample file under REAL_OUTPUTS/<relative>; skips the calling test when the corpus is absent."""
    folder = REAL_OUTPUTS.joinpath(*relative)
    if not folder.is_dir():
        pytest.skip(f"real-output corpus not present at {folder}")
    files = sorted(p for p in folder.iterdir() if p.is_file() and p.suffix == ".txt")
    assert files, f"no samples in {folder}"
    return files


def real_output(*relative: str) -> str:
    """One sample file's text; skips the calling test when the corpus is absent."""
    path = REAL_OUTPUTS.joinpath(*relative)
    if not REAL_OUTPUTS.is_dir():
        pytest.skip(f"real-output corpus not present at {REAL_OUTPUTS}")
    return path.read_text(encoding="utf-8", errors="replace")


def run(name: str, text: str) -> list[Sample]:
    """Call a parser module directly, so that any exception other than ParseError surfaces as a test failure."""
    return parsers.get(name).parse(text)


def pick(samples: list[Sample], entity: str | None = None, metric: str | None = None, **extra) -> list[Sample]:
    out = [
        s
        for s in samples
        if (entity is None or s.entity == entity)
        and (metric is None or s.metric == metric)
        and all(getattr(s, k) == v for k, v in extra.items())
    ]
    return out


def one(samples: list[Sample], entity: str | None = None, metric: str | None = None, **extra) -> Sample:
    found = pick(samples, entity, metric, **extra)
    assert len(found) == 1, f"expected one sample for {entity}/{metric} {extra}, found {len(found)}: {found[:5]}"
    return found[0]


def data(samples: list[Sample]) -> list[Sample]:
    """The samples that carry readings: without the counts of noise lines a parser skipped (parse_skipped_lines)."""
    return [s for s in samples if s.metric != "parse_skipped_lines"]


def imported_modules(stderr: str) -> set[str]:
    """The modules a Python process imported, from its `-X importtime` (or PYTHONPROFILEIMPORTTIME) log on stderr."""
    return {line.rsplit("|", 1)[-1].strip() for line in stderr.splitlines() if line.startswith("import time:")}
