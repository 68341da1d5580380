"""`rdmatool export prometheus`: every file parsed back with prometheus_client's own parser, on the demo bundle and on
a pod bundle of the tests — names by the Prometheus conventions, labels split (device / port / netdev / gpu ...,
none for a host-wide value), HELP from the glossary, one finding metric per (severity, rule, target), the verdict —,
`--per-target DIR` (each node's file holds only its series, the fleet-wide ones are written once, a hostile target
name never leaves DIR), the bound on series per target, and the atomic write."""

from __future__ import annotations

import functools
import os
import re
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest
from prometheus_client.parser import text_string_to_metric_families
from typer.testing import CliRunner

from rdmatool.cli import app, export_cmd
from rdmatool.metrics import GLOSSARY
from rdmatool.model import MetricKind
from rdmatool.report import prometheus
from rdmatool.report.prometheus import bound, names, textfiles
from rdmatool.table.analysis import analyse_path
from tests.helpers import REPO
from tests.pods import bundle as pods

DEMO = REPO / "examples" / "demo-bundle"
NAME = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")
ENTITY_LABELS = ("device", "port", "lane", "netdev", "gpu", "test", "peer", "object", "class")


@functools.lru_cache(maxsize=64)
def parse(text: str) -> dict:
    """The families of a text as prometheus_client's parser reads them (each text parsed once: do not modify)."""
    out = {}
    for family in text_string_to_metric_families(text):
        assert family.name not in out, f"family {family.name} twice"
        out[family.name] = family
    return out


@pytest.fixture(scope="module")
def demo() -> prometheus.Export:
    return prometheus.bundle_export(DEMO)


@pytest.fixture(scope="module")
def demo_text(demo) -> str:
    return demo.text()


@pytest.fixture(scope="module")
def families(demo_text) -> dict:
    return parse(demo_text)


@pytest.fixture(scope="module")
def pod(tmp_path_factory) -> prometheus.Export:
    return prometheus.bundle_export(pods.write(pods.healthy_pod(), tmp_path_factory.mktemp("pod") / "pod"))


@pytest.fixture(scope="module", params=["demo", "pod"])
def export(request, demo, pod) -> prometheus.Export:
    return {"demo": demo, "pod": pod}[request.param]


@pytest.fixture(scope="module")
def per_target(export, tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("textfiles")
    assert textfiles.write_per_target(folder, export) == []
    return folder


@functools.lru_cache(maxsize=64)
def samples_of(text: str) -> tuple[tuple[str, tuple], ...]:
    return tuple((s.name, tuple(sorted(s.labels.items()))) for f in parse(text).values() for s in f.samples)


# --- every file parses, with names by the conventions --------------------------------------------------------------

def test_every_file_parses_with_valid_names_and_no_sample_twice(export, per_target) -> None:
    texts = [export.text(), *(p.read_text() for p in sorted(per_target.iterdir()))]
    assert len(texts) == len(export.targets) + 2  # the one file; a file per node and the fleet file
    for text in texts:
        seen = Counter(samples_of(text))
        assert not [key for key, n in seen.items() if n > 1]
        for family in parse(text).values():
            assert NAME.match(family.name) and family.name.startswith("rdmatool_"), family.name
            assert family.documentation, family.name  # HELP on every family
            assert family.type in ("counter", "gauge"), family.name


def test_names_follow_the_conventions(export) -> None:
    families = parse(export.text())
    assert len(families) > 50
    for family in families.values():
        if family.type == "counter":
            assert all(s.name == family.name + "_total" for s in family.samples), family.name
        else:
            assert not family.name.endswith(("_total", "_count", "_sum", "_bucket", "_fraction")), family.name
    assert "rdmatool_port_pause_fraction" not in families and "rdmatool_nic_utilization" not in families
    assert {"rdmatool_port_pause_ratio", "rdmatool_nic_utilization_ratio"} <= set(families)


def test_every_glossary_metric_has_one_name_in_base_units() -> None:
    seen: dict[str, str] = {}
    for metric in GLOSSARY.values():
        if metric.kind is MetricKind.STATE:
            continue
        name, scale = names.base_name(metric)
        exported = [name] + ([name + "_per_second"] if metric.kind is MetricKind.COUNTER else [])
        for one in exported:
            assert one not in seen, f"{metric.name} and {seen[one]} are both {one}"
            seen[one] = metric.name
        if metric.unit in ("ratio", "%", "x typical"):
            assert name.endswith("_ratio") and scale == (0.01 if metric.unit == "%" else 1.0), metric.name
        if metric.unit in ("us", "ms", "s"):
            assert name.endswith("_seconds"), metric.name
        if metric.unit in ("Gb/s", "bytes/s", "packets/s", "Mpps"):
            assert name.endswith(("_bits_per_second", "_bytes_per_second", "_packets_per_second")), metric.name
    assert names.base_name(GLOSSARY["rx_pause_fraction"])[0] == "port_pause_ratio"
    assert names.base_name(GLOSSARY["gpu_pcie_tx_bytes_rate"])[0] == "gpu_pcie_tx_bytes_per_second"


def test_counters_carry_the_glossary_meaning_and_the_unit_read(families) -> None:
    symbol = families["rdmatool_symbol_errors"]
    assert symbol.type == "counter"
    assert GLOSSARY["symbol_errors"].meaning in symbol.documentation
    # a counter in µs is exported in seconds, its HELP saying what the bundle read
    pause = families["rdmatool_rx_pause_duration_seconds"]
    assert pause.type == "counter" and "(read in us)" in pause.documentation


# --- labels split ---------------------------------------------------------------------------------------------------

def test_labels_are_split_by_what_was_read(export) -> None:
    facts = facts_of(export.result.source)
    kinds = dict(zip(facts["target"], facts["kind"]))
    for family in parse(export.text()).values():
        for s in family.samples:
            labels = s.labels
            assert labels.get("port") != "host" and "/" not in labels.get("device", ""), (family.name, labels)
            if kinds.get(labels.get("target")) == "host" and "port" in labels:
                assert labels["port"].isdigit() and "device" in labels, (family.name, labels)
            assert not [v for v in (labels.get("port"), labels.get("netdev")) if re.fullmatch(r"gpu\d+", v or "")]
            if "gpu" in labels:
                assert labels["gpu"].isdigit()
    families = parse(export.text())
    # a host-wide value carries none of the entity labels
    for sample in families["rdmatool_psi_io_some_avg10_ratio"].samples:
        assert set(sample.labels) == {"target"}
    assert {s.labels["gpu"] for s in families["rdmatool_gpu_utilization_ratio"].samples} >= {"0", "1"}


@functools.lru_cache(maxsize=2)
def facts_of(bundle: str) -> pd.DataFrame:
    """The facts of a bundle (read once per bundle)."""
    return analyse_path(bundle).facts


def test_values_are_the_facts_in_base_units_under_split_labels(families, demo) -> None:
    facts = facts_of(demo.result.source)
    rate = facts[(facts["metric"] == "link_rate_gbps") & (facts["target"] == "gpu07") & (facts["entity"] == "mlx5_0/1")]
    exported = [s for s in families["rdmatool_link_rate_bits_per_second"].samples
                if s.labels == {"target": "gpu07", "device": "mlx5_0", "port": "1"}]
    assert len(exported) == 1 and exported[0].value == float(rate["value"].iloc[0]) * 1e9
    # a netdev's figure carries the netdev only; the RDMA port → netdev join is its own info series
    rx = [s for s in families["rdmatool_rx_bytes_per_second"].samples if s.labels["target"] == "gpu01"]
    assert {tuple(sorted(set(s.labels) - {"priority"})) for s in rx} == {("netdev", "target")}
    join = {(s.labels["device"], s.labels["port"], s.labels["netdev"]) for s in families["rdmatool_netdev_info"].samples
            if s.labels["target"] == "gpu01"}
    bound_to = facts[(facts["metric"] == "netdev") & (facts["target"] == "gpu01")]
    assert join == {(*entity.split("/"), text) for entity, text in zip(bound_to["entity"], bound_to["text"])} != set()
    per_s = facts[(facts["metric"] == "symbol_errors_per_s") & (facts["target"] == "gpu01")]
    samples = [s for s in families["rdmatool_symbol_errors_per_second"].samples if s.labels["target"] == "gpu01"]
    assert samples and families["rdmatool_symbol_errors_per_second"].type == "gauge"
    assert max(s.value for s in samples) == pytest.approx(float(per_s["value"].max()), rel=0.01)


def test_the_pause_ratio_is_per_port_and_priority(families, demo) -> None:
    family = families["rdmatool_port_pause_ratio"]
    assert family.type == "gauge"
    assert GLOSSARY["rx_pause_fraction"].meaning in family.documentation
    # the degraded demo has a PFC storm from gpu02: the leaf port it is cabled to (leaf02 swp1) is paused on 3
    facts = facts_of(demo.result.source)
    fact = facts[(facts["metric"] == "rx_pause_fraction") & (facts["target"] == "leaf02") & (facts["entity"] == "swp1")
                 & (facts["priority"] == 3)]
    sample = [s for s in family.samples if s.labels == {"target": "leaf02", "port": "swp1", "priority": "3"}]
    assert len(sample) == 1 and sample[0].value == pytest.approx(float(fact["value"].iloc[0])) and sample[0].value > 0.5
    assert max(family.samples, key=lambda s: s.value).labels["target"] == "leaf02"
    assert "rdmatool_port_tx_pause_ratio" in families


# --- findings and verdict -------------------------------------------------------------------------------------------

def test_one_finding_metric_per_severity_rule_and_target_and_the_verdict(families, demo) -> None:
    result = demo.result
    expected = Counter((f.severity.value, f.rule, f.target) for f in result.findings)
    samples = families["rdmatool_findings"].samples
    got = {(s.labels["severity"], s.labels["rule"], s.labels["target"]): s.value for s in samples}
    assert got == {key: float(n) for key, n in expected.items()}
    assert sum(got.values()) == len(result.findings) > 0
    fabric = {s.labels["severity"]: s.value for s in families["rdmatool_fabric_findings"].samples}
    assert fabric == {sev: float(n) for sev, n in Counter(f.severity.value for f in result.findings).items()}
    verdict = {s.labels["verdict"]: s.value for s in families["rdmatool_gate_verdict"].samples}
    assert verdict == {"pass": 0.0, "warn": 0.0, "fail": 1.0, "inconclusive": 0.0}
    assert result.verdict.value == "fail"


def test_a_healthy_pod_exports_a_pass_and_no_finding_of_error_severity(pod) -> None:
    families = parse(pod.text())
    verdict = {s.labels["verdict"]: s.value for s in families["rdmatool_gate_verdict"].samples}
    assert verdict["fail"] == 0.0 and verdict["pass"] + verdict["warn"] == 1.0
    assert not [s for s in families["rdmatool_findings"].samples if s.labels["severity"] in ("error", "critical")]
    # perftest results are gauges labelled with their test and message size
    samples = families["rdmatool_bw_avg_bits_per_second"].samples
    assert {"65536", "1048576"} <= {s.labels["size"] for s in samples}
    assert {s.labels["test"] for s in samples} == {"ib_write_bw"} and not [s for s in samples if "port" in s.labels]
    assert families["rdmatool_bundle_timestamp_seconds"].samples[0].value > 1.7e9


# --- one file per node ----------------------------------------------------------------------------------------------

def test_each_node_file_holds_only_its_series_and_the_fleet_ones_are_written_once(export, per_target) -> None:
    assert sorted(p.name for p in per_target.iterdir()) == sorted(
        ["rdmatool.prom", *(f"rdmatool-{t}.prom" for t in export.targets)])
    union: list = []
    for target in export.targets:
        samples = samples_of((per_target / f"rdmatool-{target}.prom").read_text())
        assert samples and all(dict(labels).get("target") == target for _, labels in samples), target
        union += list(samples)
    fleet = parse((per_target / textfiles.FLEET_FILE).read_text())
    assert {"rdmatool_gate_verdict", "rdmatool_fabric_findings", "rdmatool_collection_failures"} <= set(fleet)
    fleet_samples = samples_of((per_target / textfiles.FLEET_FILE).read_text())
    assert not [s for s in fleet_samples if dict(s[1]).get("target") in export.targets]
    # nothing lost, nothing written twice: the node files and the fleet file are the one file, split
    assert Counter(union + list(fleet_samples)) == Counter(samples_of(export.text()))


def test_a_hostile_target_name_never_names_a_file_outside_the_folder(tmp_path: Path, demo) -> None:
    hostile = ["../../escaped", "a/b", ".hidden", "gpu01\x1b[2J", "", "x" * 300]
    facts = pd.DataFrame({"target": ["gpu01", *hostile], "kind": "host", "platform": "linux", "role": None,
                          "entity": "host", "metric": "load1", "priority": pd.NA, "size_bytes": pd.NA, "value": 1.0,
                          "text": None, "raw_key": "load1", "window_s": None, "delta": None, "flag": ""})
    folder = tmp_path / "a" / "textfiles"
    folder.mkdir(parents=True)
    export = prometheus.build(facts, demo.result, targets=["gpu01", *hostile])
    refused = textfiles.write_per_target(folder, export)
    assert set(refused) == {prometheus.families.label_value(t) for t in hostile if t}
    assert sorted(os.listdir(folder)) == ["rdmatool-gpu01.prom", "rdmatool.prom"]
    assert os.listdir(tmp_path) == ["a"] and os.listdir(tmp_path / "a") == ["textfiles"]
    assert textfiles.target_file("gpu01.pod1.example.net") == "rdmatool-gpu01.pod1.example.net.prom"


# --- the bound ------------------------------------------------------------------------------------------------------

def test_the_bound_drops_whole_families_of_a_target_and_counts_them(demo) -> None:
    whole = demo
    small = prometheus.build(facts_of(demo.result.source), demo.result, targets=demo.targets, max_series=100)
    for target in whole.targets:
        everything = samples_of(whole.target_text(target))
        kept = samples_of(small.target_text(target))
        dropped = [s for s in kept if s[0] == bound.DROPPED]
        assert len(dropped) == 1 and len(kept) - 1 <= 100
        assert dropped[0] in everything  # ... as 0 without the bound
        theirs = {s for s in everything if s[0] != bound.DROPPED}
        mine = {s for s in kept if s[0] != bound.DROPPED}
        assert mine <= theirs
        value = [s.value for s in parse(small.target_text(target))["rdmatool_export_dropped_series"].samples]
        assert value == [float(len(theirs) - len(mine))]
        # whole families only: a family of this target is all there or not at all
        for name in {n for n, _ in theirs}:
            assert {s for s in theirs if s[0] == name} <= mine or not {s for s in mine if s[0] == name}, name
        findings = {s for s in theirs if s[0] == "rdmatool_findings"}
        assert findings <= mine  # its findings are kept first
    dropped = parse(small.text())["rdmatool_export_dropped_series"].samples
    assert len(dropped) == len(whole.targets) and sum(s.value for s in dropped) > 0  # the bound did bite
    assert all(s.value == 0 for s in parse(whole.text())["rdmatool_export_dropped_series"].samples)
    assert export_cmd.MAX_SERIES == bound.DEFAULT_MAX_SERIES


def test_over_the_bound_the_raw_counter_totals_go_before_the_rates_and_shares() -> None:
    def family(name: str, kind: str, n: int) -> prometheus.families.Family:
        made = prometheus.families.Family(name, "help", kind)
        for i in range(n):
            made.add("gpu01", (("target", "gpu01"), ("port", str(i))), i)
        return made

    families = [family("rdmatool_rx_bytes", "counter", 5), family("rdmatool_rx_bytes_per_second", "gauge", 5),
                family("rdmatool_port_pause_ratio", "gauge", 5), family("rdmatool_fw_version_info", "gauge", 1),
                family("rdmatool_findings", "gauge", 2)]
    fleet = prometheus.families.Family("rdmatool_gate_verdict", "help", "gauge")
    fleet.add(None, (("verdict", "fail"),), 1)
    kept = bound.bounded([*families, fleet], ["gpu01"], 12)
    assert {f.name: len(f.samples) for f in kept} == {
        "rdmatool_rx_bytes": 0, "rdmatool_rx_bytes_per_second": 5, "rdmatool_port_pause_ratio": 5,
        "rdmatool_fw_version_info": 0, "rdmatool_findings": 2, "rdmatool_gate_verdict": 1, bound.DROPPED: 1}
    assert kept[-1].samples == [("gpu01", (("target", "gpu01"),), 6.0)]


# --- the command ----------------------------------------------------------------------------------------------------

@pytest.fixture
def quick(monkeypatch, demo) -> None:
    """The command over the demo's export made once (its diagnosis is the slow part): what it writes is tested."""
    facts, real = facts_of(demo.result.source), prometheus.bundle_export

    def export(bundle, max_series, **options):
        if Path(bundle) != DEMO:  # not a bundle: the real reading refuses it
            return real(bundle, max_series, **options)
        return prometheus.build(facts, demo.result, targets=demo.targets, max_series=max_series)

    monkeypatch.setattr(prometheus, "bundle_export", export)


def test_cli_writes_the_file_atomically_and_replaces_the_old_one(tmp_path: Path, demo_text) -> None:
    out = tmp_path / "rdmatool.prom"
    out.write_text("# yesterday's figures\n")
    result = CliRunner().invoke(app, ["export", "prometheus", str(DEMO), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert out.read_text() == demo_text
    assert os.listdir(tmp_path) == ["rdmatool.prom"]  # no temporary file left beside it
    assert oct(out.stat().st_mode & 0o777) == "0o644"  # node_exporter runs as another user


def test_cli_writes_one_file_per_target_with_the_bound(tmp_path: Path, demo, quick) -> None:
    result = CliRunner().invoke(app, ["export", "prometheus", str(DEMO), "--per-target", str(tmp_path),
                                      "--max-series", "50"])
    assert result.exit_code == 0, result.output
    assert sorted(os.listdir(tmp_path)) == sorted(["rdmatool.prom", *(f"rdmatool-{t}.prom" for t in demo.targets)])
    gpu01 = parse((tmp_path / "rdmatool-gpu01.prom").read_text())
    assert sum(len(f.samples) for f in gpu01.values()) <= 51
    assert gpu01["rdmatool_export_dropped_series"].samples[0].value > 0
    assert oct((tmp_path / "rdmatool-gpu01.prom").stat().st_mode & 0o777) == "0o644"


def test_a_failed_write_leaves_the_old_file_whole(tmp_path: Path, monkeypatch, quick) -> None:
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


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, quick) -> None:
    runner = CliRunner()
    missing = runner.invoke(app, ["export", "prometheus", str(tmp_path / "nothing")])
    assert missing.exit_code == 2 and "Traceback" not in missing.output and len(missing.output.splitlines()) == 1
    unwritable = runner.invoke(app, ["export", "prometheus", str(DEMO), "-o", str(tmp_path / "no" / "x.prom")])
    assert unwritable.exit_code == 2 and "x.prom: cannot write" in unwritable.output
    no_dir = runner.invoke(app, ["export", "prometheus", str(DEMO), "--per-target", str(tmp_path / "no")])
    assert no_dir.exit_code == 2 and no_dir.output.strip().endswith("no: no such directory")
    both = runner.invoke(app, ["export", "prometheus", str(DEMO), "--per-target", str(tmp_path), "-o", "x.prom"])
    assert both.exit_code == 2 and "give one of them" in both.output and os.listdir(tmp_path) == []
    zero = runner.invoke(app, ["export", "prometheus", str(DEMO), "--max-series", "0"])
    assert zero.exit_code == 2
