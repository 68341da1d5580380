"""Collect then diagnose (rdmatool.diagnose.collect_diagnose): the bundle goes to a temporary folder removed afterwards unless
kept, the outcomes are handed over before the diagnosis, and a collection in which no target answered is NoData."""

from __future__ import annotations

from pathlib import Path

import pytest

from rdmatool.collect import CollectOptions, TargetOutcome
from rdmatool.diagnose.collect_diagnose import collect_and_diagnose
from rdmatool.errors import NoData
from rdmatool.model import Target

DEMO = Path(__file__).resolve().parent.parent / "examples" / "demo-bundle"
TARGETS = [Target("gpu01", "10.0.0.1"), Target("gpu02", "10.0.0.2")]


def test_nothing_answered_is_no_data_naming_the_source_and_the_temporary_folder_is_removed():
    seen = []

    def collect(targets, options, out):
        seen.append(Path(out))
        assert Path(out).parent.is_dir()  # the collection writes into a folder that exists
        return [TargetOutcome(t, error=f"{t.name}: connection refused") for t in targets], out

    with pytest.raises(NoData, match=r"^inv\.yaml: no data: none of the 2 targets answered \(gpu01: connection refused"):
        collect_and_diagnose(TARGETS, CollectOptions(), source="inv.yaml", collect=collect,
                             on_collected=lambda outcomes: pytest.fail("no diagnosis of nothing"))
    assert seen and seen[0].name == "bundle" and not seen[0].parent.exists()


def test_a_kept_bundle_is_collected_where_asked_and_diagnosed_after_the_outcomes_are_shown(tmp_path):
    events = []

    def collect(targets, options, out):
        events.append(("collect", out))
        return [TargetOutcome(t) for t in targets], str(DEMO)  # the bundle the collection committed

    result = collect_and_diagnose(TARGETS, CollectOptions(), str(tmp_path / "kept"), source="inv.yaml",
                                  collect=collect, on_collected=lambda outcomes: events.append(("shown", len(outcomes))),
                                  on_skipped=lambda line: events.append(("skipped", line)))
    assert events[:2] == [("collect", str(tmp_path / "kept")), ("shown", 2)]
    assert result.source == str(DEMO) and result.verdict.value == "fail" and "gpu01" in result.drain
