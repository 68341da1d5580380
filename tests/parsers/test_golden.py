"""Golden pairs: tests/fixtures/parsers/<parser>/<case>.txt parses to exactly <case>.json.

A `<case>.error` file instead of `.json` holds the line number at which the parser must raise ParseError.
Pairs are discovered by file name (one parametrised test), and a guard fails when a parser has no pair.
"""

from __future__ import annotations

import json

import pytest

from rdmatool import metrics, parsers
from rdmatool.errors import ParseError
from tests.helpers import PARSER_FIXTURES, run


def _cases() -> list[tuple[str, str]]:
    return [
        (folder.name, raw.stem)
        for folder in sorted(p for p in PARSER_FIXTURES.iterdir() if p.is_dir())
        for raw in sorted(folder.glob("*.txt"))
    ]


@pytest.mark.parametrize(("parser", "case"), _cases())
def test_golden_pair(parser: str, case: str) -> None:
    raw = PARSER_FIXTURES / parser / f"{case}.txt"
    assert parser in parsers.names(), f"fixture folder {parser!r} names no parser"
    text = raw.read_bytes().decode("utf-8")  # keep CRLF fixtures as CRLF
    error_file = raw.with_suffix(".error")
    if error_file.exists():
        with pytest.raises(ParseError) as caught:
            run(parser, text)
        assert caught.value.line_no == int(error_file.read_text().strip())
        assert caught.value.parser == parser
        return
    expected_file = raw.with_suffix(".json")
    assert expected_file.exists(), f"{raw} has neither {expected_file.name} nor {error_file.name}"
    expected = json.loads(expected_file.read_text())
    assert expected, f"{parser}/{case}: an empty golden pair asserts nothing"
    got = [s.as_dict() for s in run(parser, text)]
    assert got == expected


def test_every_parser_has_a_golden_pair() -> None:
    missing = [name for name in parsers.names() if not any((PARSER_FIXTURES / name).glob("*.json"))]
    assert not missing, f"parsers without a golden fixture: {missing}"


def test_every_golden_pair_uses_the_glossary_and_public_keys() -> None:
    for parser, case in _cases():
        expected_file = PARSER_FIXTURES / parser / f"{case}.json"
        if not expected_file.exists():
            continue
        rows = json.loads(expected_file.read_text())
        unknown = {row["metric"] for row in rows if not metrics.is_known(row["metric"])}
        assert not unknown, f"{parser}/{case} emits metrics missing from the glossary: {sorted(unknown)}"
        for row in rows:
            assert list(row) == ["entity", "metric", "value", "text", "priority", "size_bytes", "raw_key"]
