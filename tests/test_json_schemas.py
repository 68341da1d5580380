"""Every JSON output names its shape (`schema`) and validates against the schema shipped for it (jsonschema):
diagnose on the demo, pcap on a written capture, perf's attribution.json, bundle show, bundle diff, doctor, config
show, inventory show, parse, plan; `rdmatool schema NAME` prints a valid JSON Schema. Every command with `--json` is
mapped to its schema here, so that a new one cannot ship without. The gate's output is validated end to end on the
simulated fabric (tests/e2e) and here on a replay of the demo."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import typer.main
from typer.testing import CliRunner

from rdmatool import schemas
from rdmatool.cli import app
from rdmatool.outcome.result import SCHEMA
from rdmatool.perf.attribution import attribute
from rdmatool.perf.model import PairResult
from rdmatool.perf.output import write_results
from tests.capture.build import pcap_cli, pfc_frame, roce, write
from tests.helpers import REPO
from tests.pods import bundle as pods

DEMO = REPO / "examples" / "demo-bundle"
OUTPUTS = ("diagnose", "gate", "pcap", "perf", "bundle-show", "bundle-diff", "doctor", "config-show", "inventory-show",
           "parse", "plan-bandwidth", "plan-checkpoint", "plan-storage", "baseline-save", "baseline-show", "baseline-diff",
           "trial")
# Every command with --json and the schema of what it prints (perf run writes attribution.json: `perf`).
JSON_COMMANDS = {
    ("diagnose",): "diagnose", ("gate",): "gate", ("pcap",): "pcap", ("bundle", "show"): "bundle-show",
    ("bundle", "diff"): "bundle-diff", ("doctor",): "doctor", ("config", "show"): "config-show",
    ("inventory", "show"): "inventory-show", ("parse",): "parse", ("plan", "bandwidth"): "plan-bandwidth",
    ("plan", "checkpoint"): "plan-checkpoint", ("baseline", "list"): "baseline-list",
    ("plan", "storage"): "plan-storage",  # conformance: tests/test_plan_storage.py
    ("trial",): "trial",  # conformance: tests/trial/test_trial.py
    ("baseline", "save"): "baseline-save", ("baseline", "show"): "baseline-show", ("baseline", "diff"): "baseline-diff",
    ("nccl", "env"): "nccl-env", ("nccl", "check"): "nccl-check",  # conformance: tests/nccl/test_cli.py
}
runner = CliRunner()


def conforms(name: str, document: dict) -> None:
    assert document["schema"] == schemas.tag(name)
    assert schemas.errors(name, document) == []


@pytest.mark.parametrize("name", schemas.names())
def test_every_shipped_schema_is_a_valid_json_schema(name: str) -> None:
    jsonschema.Draft202012Validator.check_schema(schemas.load(name))


def test_the_output_schemas_are_shipped_and_tagged() -> None:
    assert set(OUTPUTS) <= set(schemas.names())
    tags = [schemas.tag(n) for n in OUTPUTS]
    assert len(set(tags)) == len(tags) and all(t.startswith("rdmatool-") and t.endswith("/1") for t in tags)
    assert schemas.tag("diagnose") == SCHEMA == "rdmatool-diagnosis/1"


def test_schema_command_prints_the_schema_and_refuses_an_unknown_name() -> None:
    out = runner.invoke(app, ["schema", "diagnose"])
    assert out.exit_code == 0
    printed = json.loads(out.stdout)
    jsonschema.Draft202012Validator.check_schema(printed)
    assert printed == schemas.load("diagnose")
    listed = runner.invoke(app, ["schema"])
    assert listed.exit_code == 0 and listed.stdout.split() == schemas.names()
    bad = runner.invoke(app, ["schema", "nope"])
    assert bad.exit_code == 2 and "diagnose" in bad.output and "Traceback" not in bad.output


def test_diagnose_json_conforms_and_the_schema_can_say_no() -> None:
    out = runner.invoke(app, ["diagnose", str(DEMO), "--format", "json"])
    document = json.loads(out.stdout)
    conforms("diagnose", document)
    broken = {**document, "findings": [{**document["findings"][0], "severity": "mild"}]}
    assert any("severity" in line for line in schemas.errors("diagnose", broken))
    assert schemas.errors("diagnose", {k: v for k, v in document.items() if k != "schema"})


def test_bundle_show_json_conforms() -> None:
    out = runner.invoke(app, ["bundle", "show", str(DEMO), "--json"])
    assert out.exit_code == 0, out.output
    document = json.loads(out.stdout)
    conforms("bundle-show", document)
    assert document["failures"]  # the demo's failures are in it, each of the schema's shape


@pytest.mark.parametrize("command", [("diagnose",), ("bundle", "show")])
def test_a_selection_is_declared_where_it_is_printed(command: tuple[str, ...]) -> None:
    out = runner.invoke(app, [*command, str(DEMO), "--limit", "gpu01", "--json"])
    assert out.exit_code in (0, 1), out.output
    document = json.loads(out.stdout)
    name = "-".join(command)
    conforms(name, document)
    assert document["selection"]["targets"] == ["gpu01"] and document["selection"]["of"] > 1
    truncated = {**document, "selection": {k: v for k, v in document["selection"].items() if k != "targets"}}
    assert any("targets" in line for line in schemas.errors(name, truncated))


def test_pcap_json_conforms(tmp_path: Path) -> None:
    path = write(tmp_path / "c.pcap", [roce(psn=i) for i in range(10)] + [pfc_frame({5: 200})])
    out = pcap_cli(str(path), "--json")
    document = json.loads(out.stdout)
    conforms("pcap", document)
    assert document["findings"] and document["summary"]["packets"] == 11
    empty = write(tmp_path / "empty.pcap", [])
    out = pcap_cli(str(empty), "--json")
    assert out.returncode == 3
    conforms("pcap", json.loads(out.stdout))


def test_perf_attribution_conforms(tmp_path: Path) -> None:
    results = [PairResult("a", "b", "ib_write_bw", 65536, 193.0, None, None, None, 0, "", "", 1.0),
               PairResult("c", "a", "ib_write_bw", 65536, 60.0, None, None, None, 0, "", "", 1.0),
               PairResult("b", "c", "ib_write_bw", 65536, None, None, None, "client c: refused", 0, "", "", 1.0)]
    write_results(results, attribute(results, 200.0), tmp_path)
    conforms("perf", json.loads((tmp_path / "attribution.json").read_text()))


def test_bundle_diff_json_conforms(tmp_path: Path) -> None:
    before = pods.write(pods.healthy_pod(), tmp_path / "a")
    pod = pods.healthy_pod(gpus=4)
    pod.host("gpu02").port("mlx5_1").active_mtu = 1024
    pods.bump(pod.host("gpu03").port("mlx5_0").pma, "symbol_error", 500)
    after = pods.write(pod, tmp_path / "b")
    out = runner.invoke(app, ["bundle", "diff", str(before), str(after), "--format", "json"])
    assert out.exit_code == 1, out.output
    document = json.loads(out.stdout)
    conforms("bundle-diff", document)
    assert document["targets"]["added"] == ["gpu04"] and document["config"] and document["rates"]


def _json_commands(group=None, prefix: tuple[str, ...] = ()) -> set[tuple[str, ...]]:
    group = group or typer.main.get_command(app)
    if getattr(group, "commands", None):
        return {path for name, sub in group.commands.items() for path in _json_commands(sub, (*prefix, name))}
    return {prefix} if any("--json" in p.opts for p in group.params) else set()


def test_every_command_with_json_has_its_schema() -> None:
    commands = _json_commands()
    assert ("diagnose",) in commands and ("plan", "checkpoint") in commands  # the walk read the app
    unmapped = commands - set(JSON_COMMANDS)
    assert not unmapped, f"--json without a schema: {sorted(unmapped)}"
    assert set(JSON_COMMANDS) <= commands  # no stale entry
    assert set(JSON_COMMANDS.values()) <= set(schemas.names())


def _json(args: list[str], code: int = 0, **kwargs) -> dict:
    out = runner.invoke(app, args, **kwargs)
    assert out.exit_code == code, out.output
    return json.loads(out.stdout)


def test_doctor_json_conforms() -> None:
    document = _json(["doctor", "--json"])
    conforms("doctor", document)
    assert set(document["tools"]) >= {"ibstat", "ethtool"}


def test_config_show_json_conforms(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("store: /srv/baselines\nsite:\n  roce_dscp: 24\n")
    document = _json(["config", "show", "--json"], env={"RDMATOOL_CONFIG": str(config)})
    conforms("config-show", document)
    assert {"key": "site.roce_dscp", "value": 24, "source": f"{config}:3"} in document["settings"]
    conforms("config-show", _json(["config", "show", "--format", "json"], env={"RDMATOOL_CONFIG": ""}))


def test_inventory_show_json_conforms() -> None:
    inventory = REPO / "examples" / "inventories" / "cluster.yaml"
    document = _json(["inventory", "show", "-i", str(inventory), "--json"])
    conforms("inventory-show", document)
    assert document["inventory"] == str(inventory) and len(document["targets"]) > 2
    assert {t["kind"] for t in document["targets"]} == {"host", "switch"}


def test_parse_json_conforms() -> None:
    path = REPO / "tests" / "fixtures" / "parsers" / "mlnx_qos" / "ofed23_dscp_trust.txt"
    document = _json(["parse", "mlnx_qos", str(path), "--json"])
    conforms("parse", document)
    assert document["parser"] == "mlnx_qos" and document["source"] == str(path)
    assert any(s["priority"] is not None for s in document["samples"])
    loadavg = (REPO / "tests" / "fixtures" / "parsers" / "loadavg" / "busy.txt").read_text()
    piped = _json(["parse", "loadavg", "--json"], input=loadavg)
    conforms("parse", piped)
    assert piped["source"] == "<stdin>" and [s["metric"] for s in piped["samples"]] == ["load1", "load5", "load15"]


def test_plan_json_conforms() -> None:
    from rdmatool.plan import bandwidth, checkpoint

    assert schemas.tag("plan-bandwidth") == bandwidth.SCHEMA and schemas.tag("plan-checkpoint") == checkpoint.SCHEMA
    plain = _json(["plan", "bandwidth", "--params", "7e9", "--iterations-per-s", "1", "--json"])
    conforms("plan-bandwidth", plain)
    assert plain["ring"] is None and plain["measured"] is None
    ring = _json(["plan", "bandwidth", "--params", "7e9", "--iterations-per-s", "1", "--nodes", "8", "--bundle",
                  str(DEMO), "--json"], code=1)  # not feasible on the degraded demo fabric
    conforms("plan-bandwidth", ring)
    assert ring["ring"]["nodes"] == 8 and ring["measured"]["source"] == "bundle"
    document = _json(["plan", "checkpoint", "--size", "100GB", "--interval", "1h", "--stall", "5min", "--json"])
    conforms("plan-checkpoint", document)
    assert schemas.errors("plan-checkpoint", {**document, "lost_share": 2})  # the schema can say no


def test_gate_json_carries_the_diagnosis_counts_unreachable_and_suggestions() -> None:
    document = _json(["gate", "--replay", str(DEMO), "--json"], code=1)
    conforms("gate", document)
    # the keys the Slurm and Kubernetes hooks of examples/ read are still there
    assert {"verdict", "drain", "drain_reasons", "stages", "findings"} <= set(document)
    findings = document["findings"]
    ids = [f["id"] for f in findings]
    assert len(set(ids)) == len(ids)
    assert document["counts"] == {s: sum(f["severity"] == s for f in findings)
                                  for s in ("info", "warning", "error", "critical")}
    assert document["counts"]["critical"] and document["counts"]["error"]
    assert document["unreachable"] == ["gpu12"]  # the demo's connection failure
    assert document["suggestions"] and all(set(s["findings"]) <= set(ids) for s in document["suggestions"])
    answered = {i for s in document["suggestions"] for i in s["findings"]}
    assert answered == {f["id"] for f in findings if f["suggestions"]}
    # the same shapes as the diagnosis: the gate's schema holds the diagnosis' own definitions
    gate, diagnose = schemas.load("gate"), schemas.load("diagnose")
    for key in ("counts", "unreachable"):
        assert {k: v for k, v in gate["properties"][key].items() if k != "description"} == \
            {k: v for k, v in diagnose["properties"][key].items() if k != "description"}
    for name in ("finding", "suggestion", "listed_suggestion"):
        assert gate["$defs"][name] == diagnose["$defs"][name]


def test_the_baseline_store_outputs_conform(tmp_path) -> None:
    store = tmp_path / "store"
    saved = _json(["baseline", "save", str(DEMO), "--store", str(store), "--name", "night", "--json"])
    conforms("baseline-save", saved)
    assert saved["verdict"] == "fail" and saved["counted"] is False  # the demo fails: kept out of the statistics
    shown = _json(["baseline", "show", "night", "--store", str(store), "--json"])
    conforms("baseline-show", shown)
    assert [n["verdict"] for n in shown["nights"]] == ["fail"]
    moved = _json(["baseline", "diff", str(REPO / "baselines" / "demo-healthy.json"), "night", "--store", str(store),
                   "--json"])
    conforms("baseline-diff", moved)
    assert moved["a"].endswith("demo-healthy.json") and moved["b"] == "night"
