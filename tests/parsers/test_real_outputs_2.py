"""Every file of the second real-output corpus meets the outcome its registry names (skipped when it is absent).

`registry.json` beside the files lists, per file, the `rdmatool parse` parser and the right outcome:
`parse` (exit 0 with samples), `parse_may_be_empty` (exit 0; no samples is right), `parse_or_error` (parsing is
best; otherwise one `NAME: FILE:LINE: reason` line and exit 1 - never a traceback). A `parse_or_error` file that
does parse was pasted with noise or cuts, so its parse notes (`parse_skipped_lines`) must say what was skipped:
a parse that drops lines without saying so is the silent partial parse the registry forbids.
"""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from rdmatool import metrics, parsers
from rdmatool.cli import app
from tests.helpers import REAL_OUTPUTS_2

OUTCOMES = {"parse", "parse_may_be_empty", "parse_or_error"}
runner = CliRunner()


def _registry() -> list[dict]:
    path = REAL_OUTPUTS_2 / "registry.json"
    if not path.is_file():
        return []
    return json.loads(path.read_text(encoding="utf-8"))


def _cases() -> list:
    entries = _registry()
    if not entries:
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"real-output corpus not present at {REAL_OUTPUTS_2}"))]
    return [pytest.param(entry, id=entry["path"]) for entry in entries]


def test_registry_names_known_parsers_and_outcomes() -> None:
    entries = _registry()
    if not entries:
        pytest.skip(f"real-output corpus not present at {REAL_OUTPUTS_2}")
    listed = {entry["path"] for entry in entries}
    on_disk = {str(p.relative_to(REAL_OUTPUTS_2)) for p in REAL_OUTPUTS_2.rglob("*.txt")}
    assert listed == on_disk, f"registry and folder differ: {sorted(listed ^ on_disk)}"
    assert {entry["parser"] for entry in entries} <= set(parsers.names())
    assert {entry["outcome"] for entry in entries} <= OUTCOMES


@pytest.mark.parametrize("entry", _cases())
def test_real_output_meets_its_registered_outcome(entry: dict) -> None:
    parser, outcome = entry["parser"], entry["outcome"]
    path = REAL_OUTPUTS_2 / entry["path"]
    result = runner.invoke(app, ["parse", parser, str(path), "--json"])
    if result.exit_code == 0:
        rows = json.loads(result.stdout)["samples"]
        assert all(metrics.is_known(row["metric"]) for row in rows), f"{path}: a metric outside the glossary"
        readings = [row for row in rows if row["metric"] != "parse_skipped_lines"]
        if outcome == "parse":
            assert readings, f"{path}: parsed to no samples"
        if outcome == "parse_or_error":
            assert readings, f"{path}: parsed to no samples (an error would say why)"
            notes = [row for row in rows if row["metric"] == "parse_skipped_lines"]
            assert notes, f"{path}: a pasted capture parsed without a note of what was skipped"
        return
    assert outcome == "parse_or_error", f"{path} must parse, got exit {result.exit_code}: {result.output}"
    assert isinstance(result.exception, SystemExit), f"{path}: traceback {result.exception!r}"
    assert result.exit_code == 1, result.output
    message = result.stderr.strip()
    assert "\n" not in message and "Traceback" not in message, message
    assert re.match(rf"^{re.escape(parser)}: {re.escape(str(path))}:\d+: \S", message), message
