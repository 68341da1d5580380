"""Every JSON output names its shape (`schema`) and validates against the schema shipped for it (jsonschema):
diagnose on the demo, pcap on a written capture, perf's attribution.json, bundle show, bundle diff; `rdmatool schema
NAME` prints a valid JSON Schema. The gate's output is validated end to end on the simulated fabric (tests/e2e)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from rdmatool import schemas
from rdmatool.cli import app
from rdmatool.perf.attribution import attribute
from rdmatool.perf.model import PairResult
from rdmatool.perf.output import write_results
from rdmatool.result import SCHEMA
from tests.capture.build import pcap_cli, pfc_frame, roce, write
from tests.helpers import REPO
from tests.pods import bundle as pods

DEMO = REPO / "examples" / "demo-bundle"
OUTPUTS = ("diagnose", "gate", "pcap", "perf", "bundle-show", "bundle-diff")
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
