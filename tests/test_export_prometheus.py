"""`rdmatool export prometheus`: the text parsed back with prometheus_client's own parser — names, labels, types,
HELP from the glossary, counters with _total, one finding metric per (severity, rule, target), the verdict — and the
atomic write (a failed write leaves the old file whole and no temporary behind)."""

from __future__ import annotations

import os
import re
from collections import Counter
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families
from typer.testing import CliRunner

from rdmatool.analysis import analyse_path
from rdmatool.cli import app
from rdmatool.diagnose import diagnose_bundle
from rdmatool.metrics import GLOSSARY
from rdmatool.report import prometheus
from tests.helpers import REPO
from tests.pods import bundle as pods

DEMO = REPO / "examples" / "demo-bundle"
NAME = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")


@pytest.fixture(scope="module")
def demo_text() -> str:
    text, _ = prometheus.bundle_exposition(DEMO)
    return text


@pytest.fixture(scope="module")
def families(demo_text) -> dict:
    out = {}
    for family in text_string_to_metric_families(demo_text):
        assert family.name not in out, f"family {family.name} twice"
        out[family.name] = family
    return out


def test_every_name_is_valid_and_prefixed_and_no_sample_is_repeated(demo_text, families) -> None:
    assert len(families) > 50
    seen = Counter()
    for family in families.values():
        assert NAME.match(family.name) and family.name.startswith("rdmatool_"), family.name
        for sample in family.samples:
            seen[(sample.name, tuple(sorted(sample.labels.items())))] += 1
    repeated = [key for key, n in seen.items() if n > 1]
    assert not repeated, repeated[:5]


def test_counters_end_in_total_and_carry_the_glossary_meaning(families) -> None:
    counters = [f for f in families.values() if f.type == "counter"]
    assert counters
    for family in counters:
        assert all(s.name == family.name + "_total" for s in family.samples), family.name
    symbol = families["rdmatool_symbol_errors"]
    assert symbol.type == "counter"
    assert GLOSSARY["symbol_errors"].meaning in symbol.documentation
    # a counter in µs is exported in seconds, its HELP saying what the bundle read
    pause = families["rdmatool_rx_pause_duration_seconds"]
    assert pause.type == "counter" and "(read in us)" in pause.documentation


def test_values_are_the_facts_in_base_units(families) -> None:
    facts = analyse_path(DEMO).facts
    rate = facts[(facts["metric"] == "link_rate_gbps") & (facts["target"] == "gpu07") & (facts["entity"] == "mlx5_0/1")]
    exported = [s for s in families["rdmatool_link_rate_bits_per_second"].samples
                if s.labels == {"target": "gpu07", "port": "mlx5_0/1"}]
    assert len(exported) == 1 and exported[0].value == float(rate["value"].iloc[0]) * 1e9
    per_s = facts[(facts["metric"] == "symbol_errors_per_s") & (facts["target"] == "gpu01")]
    samples = [s for s in families["rdmatool_symbol_errors_per_second"].samples if s.labels["target"] == "gpu01"]
    assert samples and families["rdmatool_symbol_errors_per_second"].type == "gauge"
    assert max(s.value for s in samples) == pytest.approx(float(per_s["value"].max()))


def test_the_pause_fraction_has_target_port_and_priority(families) -> None:
    family = families["rdmatool_port_pause_fraction"]
    assert family.type == "gauge"
    assert GLOSSARY["rx_pause_fraction"].meaning in family.documentation
    assert {"target", "port", "priority"} <= set(family.samples[0].labels)
    # the degraded demo has a PFC storm from gpu02: the leaf port it is cabled to (leaf02 swp1) is paused on 3
    facts = analyse_path(DEMO).facts
    fact = facts[(facts["metric"] == "rx_pause_fraction") & (facts["target"] == "leaf02") & (facts["entity"] == "swp1")
                 & (facts["priority"] == 3)]
    sample = [s for s in family.samples if s.labels == {"target": "leaf02", "port": "swp1", "priority": "3"}]
    assert len(sample) == 1 and sample[0].value == pytest.approx(float(fact["value"].iloc[0])) and sample[0].value > 0.5
    assert max(family.samples, key=lambda s: s.value).labels["target"] == "leaf02"
    assert "rdmatool_port_tx_pause_fraction" in [f for f in families]


def test_one_finding_metric_per_severity_rule_and_target_and_the_verdict(families) -> None:
    result = diagnose_bundle(DEMO)
    expected = Counter((f.severity.value, f.rule, f.target) for f in result.findings)
    samples = families["rdmatool_findings"].samples
    got = {(s.labels["severity"], s.labels["rule"], s.labels["target"]): s.value for s in samples}
    assert got == {key: float(n) for key, n in expected.items()}
    assert sum(got.values()) == len(result.findings) > 0
    verdict = {s.labels["verdict"]: s.value for s in families["rdmatool_gate_verdict"].samples}
    assert verdict == {"pass": 0.0, "warn": 0.0, "fail": 1.0, "inconclusive": 0.0}
    assert result.verdict.value == "fail"


def test_a_healthy_pod_exports_a_pass_and_no_finding_of_error_severity(tmp_path: Path) -> None:
    path = pods.write(pods.healthy_pod(), tmp_path / "pod")
    families = {f.name: f for f in text_string_to_metric_families(prometheus.bundle_exposition(path)[0])}
    verdict = {s.labels["verdict"]: s.value for s in families["rdmatool_gate_verdict"].samples}
    assert verdict["fail"] == 0.0 and verdict["pass"] + verdict["warn"] == 1.0
    assert not [s for s in families["rdmatool_findings"].samples if s.labels["severity"] in ("error", "critical")]
    # perftest results are gauges labelled with their message size
    sizes = {s.labels["size"] for s in families["rdmatool_bw_avg_bits_per_second"].samples}
    assert {"65536", "1048576"} <= sizes
    assert families["rdmatool_bundle_timestamp_seconds"].samples[0].value > 1.7e9


def test_cli_writes_the_file_atomically_and_replaces_the_old_one(tmp_path: Path, demo_text) -> None:
    out = tmp_path / "rdmatool.prom"
    out.write_text("# yesterday's figures\n")
    result = CliRunner().invoke(app, ["export", "prometheus", str(DEMO), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert out.read_text() == demo_text
    assert os.listdir(tmp_path) == ["rdmatool.prom"]  # no temporary file left beside it
    assert oct(out.stat().st_mode & 0o777) == "0o644"  # node_exporter runs as another user


def test_a_failed_write_leaves_the_old_file_whole(tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "rdmatool.prom"
    out.write_text("# yesterday's figures\n")

    def broken_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    result = CliRunner().invoke(app, ["export", "prometheus", str(DEMO), "-o", str(out)])
    assert result.exit_code == 2
    assert "rdmatool.prom: cannot write: No space left on device" in result.output
    assert out.read_text() == "# yesterday's figures\n"
    assert os.listdir(tmp_path) == ["rdmatool.prom"]


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path) -> None:
    runner = CliRunner()
    missing = runner.invoke(app, ["export", "prometheus", str(tmp_path / "nothing")])
    assert missing.exit_code == 2 and "Traceback" not in missing.output and len(missing.output.splitlines()) == 1
    unwritable = runner.invoke(app, ["export", "prometheus", str(DEMO), "-o", str(tmp_path / "no" / "x.prom")])
    assert unwritable.exit_code == 2 and "x.prom: cannot write" in unwritable.output
