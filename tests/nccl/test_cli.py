"""`rdmatool nccl env` and `rdmatool nccl check` at the command line: each format on the demo, the JSON against its
schema, --limit on a bundle, usage errors in one line, a log checked against the demo's recipe."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from rdmatool import schemas
from rdmatool.cli import app
from tests.helpers import REPO

DEMO = REPO / "examples" / "demo-bundle"
runner = CliRunner()


def run(*args: str):
    return runner.invoke(app, ["nccl", *args], env={"COLUMNS": "120", "RDMATOOL_CONFIG": ""})


def test_env_json_conforms_and_says_why() -> None:
    out = run("env", str(DEMO), "--format", "json")
    assert out.exit_code == 1, out.output  # the demo's gpu06 has its rail down: an error finding
    document = json.loads(out.stdout)
    assert schemas.errors("nccl-env", document) == []
    assert document["schema"] == "rdmatool-nccl-env/1" and document["fits_all"] is True
    assert document["fleet"]["env"]["NCCL_IB_HCA"] == "=mlx5_0:1"
    gpu01 = next(h for h in document["hosts"] if h["host"] == "gpu01")
    assert gpu01["env"]["NCCL_IB_HCA"]["why"].startswith("the active compute rails mlx5_0:1")
    assert gpu01["env"]["NCCL_SOCKET_IFNAME"] == {"value": None, "why": gpu01["env"]["NCCL_SOCKET_IFNAME"]["why"]}
    assert {f["rule"] for f in document["findings"]} == {"nccl_no_compute_rail", "nccl_storage_nic_in_default_hca"}
    broken = {**document, "fits_all": "yes"}
    assert schemas.errors("nccl-env", broken)


def test_env_formats_print_the_fleets_environment_and_findings_on_stderr() -> None:
    shell = run("env", str(DEMO), "--format", "env")
    assert "export NCCL_IB_HCA==mlx5_0:1\n" in shell.stdout and "export UCX_NET_DEVICES=mlx5_0:1\n" in shell.stdout
    assert "rdmatool: error: nccl_no_compute_rail: gpu06" in shell.stderr
    slurm = run("env", str(DEMO), "--format", "slurm").stdout
    assert slurm.startswith("#!/bin/sh") and "echo 'export NCCL_IB_SL=0'" in slurm
    k8s = run("env", str(DEMO), "--format", "k8s").stdout
    assert '  - name: NCCL_IB_HCA\n    value: "=mlx5_0:1"' in k8s
    table = run("env", str(DEMO), "--limit", "gpu0[1-2]").stdout
    assert "one recipe fits all 2 compute hosts" in table and "gpu03" not in table


def test_env_refuses_bad_input_in_one_line(tmp_path: Path) -> None:
    both = run("env", str(DEMO), "-i", "inv.yaml")
    assert both.exit_code == 2 and "give either a BUNDLE or -i INVENTORY" in both.stderr
    site = run("env", str(DEMO), "--site", "roce_dscp=99")
    assert site.exit_code == 2 and "roce_dscp" in site.stderr and "Traceback" not in site.output
    nothing = run("env", str(DEMO), "--limit", "stor01")
    assert nothing.exit_code == 3 and "no compute host" in nothing.stderr
    unknown = run("env", str(DEMO), "--limit", "gpu99")
    assert unknown.exit_code == 2 and "gpu99" in unknown.stderr
    missing = run("env", str(tmp_path / "nope"))
    assert missing.exit_code == 2 and len(missing.stderr.strip().splitlines()) == 1


def test_check_against_the_demo_names_a_storage_nic_and_conforms(tmp_path: Path) -> None:
    log = tmp_path / "job.log"
    log.write_text("gpu01:100:100 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/RoCE [RO]; OOB ib0:1.2.3.4<0>\n"
                   "gpu01:100:100 [0] NCCL INFO Using network IB\n"
                   "gpu02:200:200 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:1.2.3.5<0>\n")
    out = run("check", str(log), "--bundle", str(DEMO), "--json")
    assert out.exit_code == 1, out.output
    document = json.loads(out.stdout)
    assert schemas.errors("nccl-check", document) == []
    assert [(f["rule"], f["target"]) for f in document["findings"]] == [("nccl_hca_not_on_compute_rails", "gpu01")]
    assert document["findings"][0]["entity"] == "mlx5_1/1" and "gpu01:100" in document["findings"][0]["symptom"]
    clean = tmp_path / "clean.log"
    clean.write_text("gpu02:200:200 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:1.2.3.5<0>\n")
    assert run("check", str(clean), "--bundle", str(DEMO)).exit_code == 0


def test_check_without_nccl_lines_is_inconclusive_and_a_bad_file_is_usage(tmp_path: Path) -> None:
    quiet = tmp_path / "quiet.log"
    quiet.write_text("step 1 loss 2.3\n")
    out = run("check", str(quiet))
    assert out.exit_code == 3 and "NCCL_DEBUG=INFO" in out.stderr
    missing = run("check", str(tmp_path / "none.log"))
    assert missing.exit_code == 2 and "none.log: no such file" in missing.stderr
