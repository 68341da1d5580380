"""A baseline learns only healthy nights: `baseline save` records each night's verdict, a failing night is kept and
listed but left out of the statistics (unless --include-failed), the baseline rules never judge their own nights,
and --keep bounds the nights that count and those that do not separately."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rdmatool import baseline, schemas
from rdmatool.cli import app
from rdmatool.errors import BaselineError
from tests.baseline._bundles import Host, write_bundle

runner = CliRunner()
SIZE = 65536


def _cli(*args: str):
    result = runner.invoke(app, list(args), env={"COLUMNS": "200"})  # a table's cells on one line each
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def _fleet(bw: list[float]) -> list[Host]:
    return [Host(f"gpu{i:02d}", link_rate=100, bw={SIZE: b}) for i, b in enumerate(bw)]


HEALTHY = [92.0, 93.0, 94.0]  # >= 90 % of the line rate: the night warns (optional counters missing), never fails
FAILING = [45.0, 46.0, 47.0]  # half the line rate on every host: bandwidth_below_line_rate, an error


def _bw_row(rows: list[dict]) -> dict:
    (row,) = [r for r in rows if r["metric"] == "bw_avg_gbps" and r["size_bytes"] == SIZE]
    return row


def _listed(store: str) -> dict:
    code, out, err = _cli("baseline", "list", "--store", store, "--json")
    assert code == 0 and err == "", err
    document = json.loads(out)
    assert schemas.errors("baseline-list", document) == []
    (entry,) = document["baselines"]
    return entry


def test_a_failing_night_is_kept_listed_and_left_out_of_the_statistics(tmp_path: Path) -> None:
    store = str(tmp_path / "store")
    bad = write_bundle(tmp_path / "bad", _fleet(FAILING), night=1)
    good = write_bundle(tmp_path / "good", _fleet(HEALTHY), night=0)

    # the first night fails: saved (exit 0, the diagnose job is the one that pages), and no statistics yet
    code, out, _ = _cli("baseline", "save", str(bad), "--store", store)
    assert code == 0
    assert "night FAIL" in out and "kept out of the statistics" in out and "no night is in the statistics yet" in out
    assert baseline.load(Path(store) / "default.json")["rule_stats"] == []
    assert baseline.stats_for_rules(Path(store) / "default.json").empty  # the deviation rules compare with nothing
    code, out, _ = _cli("baseline", "save", str(good), "--store", store, "--json")
    assert code == 0 and json.loads(out)["verdict"] == "warn" and json.loads(out)["counted"] is True

    entry = _listed(store)
    assert [(n["bundle"], n["verdict"], n["counted"], n["status"]) for n in entry["nights"]] == [
        (str(good), "warn", True, "yes"), (str(bad), "fail", False, "excluded: FAIL")]
    assert entry["nights"][1]["counts"]["error"] == len(FAILING) and entry["counted"] == 1
    code, out, _ = _cli("baseline", "list", "--store", store)
    assert code == 0 and "excluded: FAIL" in out and "WARN" in out

    # the failing values do not move the statistics: they are the healthy night's alone
    row = _bw_row(baseline.stats_for_rules(Path(store) / "default.json").to_dict("records"))
    assert (row["median"], row["n"], row["nights"]) == (statistics.median(HEALTHY), len(HEALTHY), 1)

    # so a host at 60 Gb/s is still below the baseline (against both nights pooled its median would be 69.5 and
    # its MAD 23.5: no finding)
    today = write_bundle(tmp_path / "today", _fleet([60.0, *HEALTHY[1:]]), night=2)
    code, out, _ = _cli("diagnose", str(today), "--baseline", "default", "--store", store, "--format", "json")
    below = [f["target"] for f in json.loads(out)["findings"] if f["rule"] == "bandwidth_below_baseline"]
    assert code == 1 and below == ["gpu00"]

    # counted by hand: the same bundle saved again with --include-failed replaces the night, now in the statistics
    code, out, _ = _cli("baseline", "save", str(bad), "--store", store, "--include-failed")
    assert code == 0 and "in the statistics, by --include-failed" in out
    entry = _listed(store)
    assert [(n["counted"], n["status"]) for n in entry["nights"]] == [(True, "yes"),
                                                                      (True, "included by hand: FAIL")]
    row = _bw_row(baseline.load(Path(store) / "default.json")["rule_stats"])
    assert (row["median"], row["n"]) == (statistics.median(HEALTHY + FAILING), 2 * len(HEALTHY))
    # and saved again without it, out again: the latest save of a bundle decides
    _cli("baseline", "save", str(bad), "--store", store)
    assert [n["counted"] for n in _listed(store)["nights"]] == [True, False]


def test_a_drift_the_baseline_rules_fail_never_keeps_its_own_night_out(tmp_path: Path) -> None:
    # A site that made its bandwidth deviation rule an error: today's drift fails `diagnose --baseline`, yet the
    # night is judged without the baseline when saved, so it counts and the baseline follows the fabric.
    playbooks = tmp_path / "playbooks"
    playbooks.mkdir()
    (playbooks / "drift.yaml").write_text(
        "rules:\n  - id: bandwidth_drift\n    kind: deviation\n    metric: bw_avg_gbps\n    direction: below\n"
        "    mad_factor: 5\n    min_deviation: 5\n    severity: error\n    symptom: \"{target} drifted\"\n"
        "    cause: \"a change\"\n    check: \"baseline diff\"\n    fix: \"find it\"\n", encoding="utf-8")
    store = tmp_path / "store"
    baseline.save(write_bundle(tmp_path / "before", _fleet(HEALTHY)), store)
    slower = write_bundle(tmp_path / "after", _fleet([b - 20.0 for b in HEALTHY]), night=1)
    code, out, _ = _cli("diagnose", str(slower), "--baseline", "default", "--store", str(store), "--playbooks",
                        str(playbooks), "--format", "json")
    assert code == 1 and {f["rule"] for f in json.loads(out)["findings"]} == {"bandwidth_drift"}
    code, out, _ = _cli("baseline", "save", str(slower), "--store", str(store), "--playbooks", str(playbooks),
                        "--json")
    saved = json.loads(out)
    assert code == 0 and (saved["verdict"], saved["counted"], saved["nights_counted"]) == ("pass", True, 2)


def _night(day: int, verdict: str | None, value: float) -> dict:
    created = f"2024-05-{day:02d}T02:00:00+00:00"
    night = {"id": f"{created}|/b{day}", "bundle": f"/b{day}", "created": created, "saved": created, "targets": 1,
             "values": [{"metric": "bw_avg_gbps", "kind": "host", "role": "compute", "platform": None,
                         "ca_type": None, "link_rate_gbps": None, "priority": None, "size_bytes": SIZE,
                         "values": [value]}], "facts": {}}
    diagnosis = None if verdict is None else {"verdict": verdict, "counts": {}, "failures": 0}
    return baseline.judged(night, diagnosis)


def test_keep_bounds_the_nights_that_count_and_those_that_do_not_apart(tmp_path: Path) -> None:
    store = tmp_path / "store"
    # a healthy week, then a broken one: the broken nights never push the healthy ones out of the statistics
    verdicts = ["pass", "warn", "inconclusive", None, "fail", "fail", "fail", "fail"]
    for day, verdict in enumerate(verdicts, start=1):
        doc = baseline.add_night(store, "default", _night(day, verdict, 100.0 + day if verdict != "fail" else 1.0),
                                 keep=3)
    assert [(n["bundle"], baseline.counted(n)) for n in doc["nights"]] == [
        ("/b2", True), ("/b3", True), ("/b4", True), ("/b6", False), ("/b7", False), ("/b8", False)]
    row = _bw_row(doc["rule_stats"])
    assert (row["median"], row["n"], row["nights"]) == (103.0, 3, 3)  # warn, inconclusive, no verdict: all count
    assert [baseline.status(n) for n in doc["nights"]] == [
        "yes", "yes", "yes (no verdict recorded)", "excluded: FAIL", "excluded: FAIL", "excluded: FAIL"]


@pytest.mark.parametrize(("key", "value", "message"), [
    ("diagnosis", {"verdict": "maybe"}, "nights[0].diagnosis.verdict is the string 'maybe', not one of"),
    ("diagnosis", {"verdict": "fail", "counts": {"error": -1}}, "nights[0].diagnosis.counts.error is the number -1"),
    ("included_by_hand", "yes", "nights[0].included_by_hand is the string 'yes', not a boolean"),
])
def test_a_recorded_verdict_is_checked_on_load(tmp_path: Path, key: str, value, message: str) -> None:
    path = tmp_path / "default.json"
    doc = baseline.add_night(tmp_path, "default", _night(1, "pass", 1.0))
    doc["nights"][0][key] = value
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(BaselineError) as caught:
        baseline.load(path)
    assert str(caught.value).startswith(f"{path}: corrupt baseline, {message}")


def test_save_help_says_what_a_failing_night_does() -> None:
    result = runner.invoke(app, ["baseline", "save", "--help"], env={"COLUMNS": "200"})
    text = " ".join(result.output.split())
    assert result.exit_code == 0
    assert "--include-failed" in text and "The exit code is 0 whatever the verdict once the night is saved" in text
