"""`rdmatool plan storage`: the 3FS figure reproduced with its units named (9.0 TB/s = 8.19 TiB/s of line rate,
6.6 TiB/s read = 80.6 %, not the 73 % of TiB over TB), the aggregate at a given or measured efficiency, the verdict
against --need (exit 1 below it), a bundle without perftest results exit 3, bad input one line and exit 2."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from rdmatool import schemas
from rdmatool.cli import app
from rdmatool.plan import storage
from tests.helpers import REPO
from tests.pods import bundle as pods

DEMO = REPO / "examples" / "demo-bundle"


def run(*args: str):
    return CliRunner().invoke(app, ["plan", "storage", *args], env={"COLUMNS": "200"})


def test_the_3fs_fleet_reproduces_the_published_figure_in_both_units() -> None:
    plan = storage.storage_plan(180, 2, 200.0)
    assert plan["line_rate"]["gbps"] == pytest.approx(72_000)
    assert plan["line_rate"]["tb_per_s"] == pytest.approx(9.0)
    assert plan["line_rate"]["tib_per_s"] == pytest.approx(8.185, abs=5e-4)
    ref = plan["reference"]
    assert ref["efficiency"] == pytest.approx(0.806, abs=5e-4)
    assert ref["tib_over_tb_slip"] == pytest.approx(0.733, abs=5e-4)  # the slip the plan names, not its figure
    # with no efficiency given the aggregate is at the reference's: the fleet of the reference reads its 6.6 TiB/s
    assert plan["aggregate"]["tib_per_s"] == pytest.approx(6.6)
    assert plan["verdict"]["feasible"] is None


def test_the_text_names_every_unit() -> None:
    out = run("--nodes", "180", "--nics", "2x200G")
    assert out.exit_code == 0, out.output
    assert "72 Tb/s = 9.0 TB/s = 8.19 TiB/s" in out.stdout
    assert "7.26 TB/s = 6.6 TiB/s" in out.stdout
    assert "80.6% of line rate" in out.stdout and "would say 73%" in out.stdout
    assert "verdict" not in out.stdout  # nothing to judge against


@pytest.mark.parametrize(("text", "parsed"), [("2x200G", (2, 200.0)), ("2×200Gb/s", (2, 200.0)),
                                              ("400G", (1, 400.0)), ("4x0.4T", (4, 400.0))])
def test_nics_as_people_write_them(text: str, parsed: tuple) -> None:
    assert storage.parse_nics(text) == parsed


def test_rates_must_name_bytes_or_bits_and_decimal_or_binary() -> None:
    assert storage.parse_rate("6TiB/s") == 6 * 2**40
    assert storage.parse_rate("9TB/s") == 9e12
    assert storage.parse_rate("72Tbit/s") == 9e12 == storage.parse_rate("72Tb/s")  # b a bit, B a byte
    for vague in ("6T", "6", "6Ti", "6TiBs"):
        with pytest.raises(ValueError, match="unit named"):
            storage.parse_rate(vague)
    assert storage.parse_efficiency("81%") == pytest.approx(0.81) == storage.parse_efficiency("0.81")


def test_need_gives_the_verdict_and_the_exit_code() -> None:
    short = run("--nodes", "180", "--nics", "2x200G", "--efficiency", "70%", "--need", "6TiB/s")
    assert short.exit_code == 1, short.output
    last = short.stdout.strip().splitlines()[-1]
    assert last.startswith("verdict: NOT FEASIBLE: 6.3 TB/s = 5.73 TiB/s at 70.0% of line rate")
    assert "9.42 TB/s" in last  # the line rate that would carry it at that efficiency
    met = run("--nodes", "180", "--nics", "2x200G", "--need", "6TiB/s")
    assert met.exit_code == 0 and met.stdout.strip().splitlines()[-1].startswith("verdict: feasible: ")


@pytest.mark.parametrize("args", [["--nics", "2y200G"], ["--nics", "2x200G", "--need", "6T"],
                                  ["--nics", "2x200G", "--efficiency", "81"], ["--nics", "2x200G", "--nodes", "0"],
                                  ["--nics", "2x200G", "--format", "yaml"]])
def test_bad_input_is_one_line_and_exit_2(args: list[str]) -> None:
    out = run(*(["--nodes", "180"] if "--nodes" not in args else []), *args)
    assert out.exit_code == 2, out.output
    assert len(out.output.strip().splitlines()) == 1 and "Traceback" not in out.output


def test_a_bundle_gives_the_storage_hosts_measured_efficiency_and_the_json_conforms(tmp_path) -> None:
    pod = pods.healthy_pod()
    pod.host("stor01").bw = {1048576: 150.0}  # its 200 Gb/s port at 75 %; the GPU hosts read at 97.8 %
    bundle = pods.write(pod, tmp_path / "b")
    out = run("--nodes", "180", "--nics", "2x200G", "--bundle", str(bundle), "--json")
    assert out.exit_code == 0, out.output
    document = json.loads(out.stdout)
    assert schemas.tag("plan-storage") == storage.SCHEMA
    assert schemas.errors("plan-storage", document) == []
    assert document["measured"]["efficiency"] == pytest.approx(0.75)
    assert document["measured"]["basis"] == "perftest median of the storage hosts"
    assert document["aggregate"]["tb_per_s"] == pytest.approx(6.75)
    assert schemas.errors("plan-storage", {**document, "schema": "rdmatool-plan-storage/2"})  # the schema can say no


def test_a_bundle_without_perftest_results_is_inconclusive() -> None:
    out = run("--nodes", "180", "--nics", "2x200G", "--bundle", str(DEMO))
    assert out.exit_code == 3, out.output
    assert out.stdout.strip().splitlines()[-1] == "verdict: not judged: nothing measured: the bundle holds no perftest result"


def test_the_documented_example_is_what_the_command_prints() -> None:
    reference = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    block = next(b for b in reference.split("```console\n")[1:] if "$ rdmatool plan storage" in b).split("```", 1)[0]
    printed = [line for line in block.splitlines() if not line.startswith("$")]
    assert run("--nodes", "180", "--nics", "2x200G").stdout.splitlines() == printed
