"""`--limit` / `-x` on a saved bundle (diagnose, report, export, bundle show), through the real command line: a
nightly bundle narrowed to a job's nodes and the switches cabled to them. A fault on a selected host is reported, a
fault on a host left out is not (nor at the switch end of its cable), the switch port facing a selected host is kept,
the JSON names the selection, and a pattern matching nothing is one line and exit 2. On the demo bundle and on a
generated fabric with a PFC storm (tests/generated)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rdmatool.cli import app
from tests.helpers import REPO

DEMO = REPO / "examples" / "demo-bundle"
runner = CliRunner()


def run(*args: str, **env: str):
    result = runner.invoke(app, list(args), env=env or None)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


def places(doc: dict) -> set[tuple[str, str, str | None]]:
    return {(f["rule"], f["target"], f["entity"]) for f in doc["findings"]}


@pytest.fixture(scope="module")
def demo_gpu07() -> dict:
    """The demo narrowed to gpu07 (a port at 1 lane of 4), cabled to leaf02 swp2; leaf02 swp1 faces gpu02 (a PFC
    storm, left out) and swp3 gpu12 (unreachable, left out)."""
    result = run("diagnose", str(DEMO), "--limit", "gpu07", "--json")
    assert result.exit_code == 1, result.output
    return json.loads(result.stdout)


def test_a_fault_on_the_selected_host_is_reported_and_one_left_out_is_not(demo_gpu07: dict) -> None:
    found = places(demo_gpu07)
    assert ("port_width_degraded", "gpu07", "mlx5_0/1") in found
    assert {target for _, target, _ in found} <= {"gpu07", "leaf02"}
    assert not any(rule == "pfc_storm" for rule, _, _ in found)
    assert demo_gpu07["drain"] == ["gpu07"] and demo_gpu07["unreachable"] == []  # gpu12 left out: not inconclusive
    assert demo_gpu07["failures"] == []  # gpu09's and gpu11's failed commands are theirs


def test_the_switch_port_facing_the_selected_host_stays_and_the_others_go(demo_gpu07: dict) -> None:
    leaf02 = {entity for _, target, entity in places(demo_gpu07) if target == "leaf02"}
    assert "swp2" in leaf02  # the port cabled to gpu07
    assert not leaf02 & {"swp1", "swp3"}  # gpu02's PFC storm as leaf02 saw it (ecn_after_pfc, tail drops), gpu12's


def test_the_json_names_the_selection(demo_gpu07: dict) -> None:
    assert demo_gpu07["selection"] == {"bundle": str(DEMO), "limit": "gpu07", "exclude": None, "targets": ["gpu07"],
                                       "switches": {"leaf02": ["swp1", "swp3"]}, "of": 21}
    assert any(note.startswith("--limit gpu07: 1 of the bundle's 21 targets") for note in demo_gpu07["notes"])


@pytest.mark.parametrize("command", [["diagnose"], ["report", "-o", "r.html"], ["export", "prometheus"],
                                     ["bundle", "show"]])
@pytest.mark.parametrize(("selection", "said"), [
    (["--limit", "gpu99"], "--limit: gpu99: no such target or group in the bundle"),
    (["--limit", "gpu07", "-x", "gpu0*"], "select none of the bundle's 21 targets"),
    (["--limit", "gpu[07"], "--limit: unbalanced brackets"),
])
def test_a_pattern_matching_no_target_is_one_line_and_exit_2(command, selection, said, tmp_path: Path) -> None:
    if command[0] == "report":
        command = ["report", "-o", str(tmp_path / "r.html")]
    result = run(*command, str(DEMO), *selection)
    assert result.exit_code == 2, result.output
    (line,) = result.stderr.strip().splitlines()
    assert str(DEMO) in line and said in line, line


def test_bundle_show_and_export_are_of_the_selection() -> None:
    shown = run("bundle", "show", str(DEMO), "--limit", "gpu09", "--json")
    assert shown.exit_code == 0, shown.output
    doc = json.loads(shown.stdout)
    assert doc["path"] == str(DEMO) and doc["targets"] == 2 and doc["selection"]["switches"] == {
        "leaf04": ["Ethernet1", "Ethernet3"]}  # gpu09 on leaf04 Ethernet2; gpu04 and stor02 left out
    assert [f["target"] for f in doc["failures"]] == ["gpu09"]  # its own missing perfquery, no one else's
    exported = run("export", "prometheus", str(DEMO), "--limit", "gpu09")
    assert exported.exit_code == 0, exported.output
    assert 'target="gpu09"' in exported.stdout and 'target="leaf04"' in exported.stdout
    assert 'target="gpu04"' not in exported.stdout and "1 of the bundle's 21 targets" in exported.stderr


def test_the_report_is_of_the_selection(monkeypatch, tmp_path: Path) -> None:
    """The page the report draws (its plots are drawn elsewhere): the selection's findings, named as the bundle."""
    drawn = []
    monkeypatch.setattr("rdmatool.report.html.render", lambda page: drawn.append(page) or "<html></html>")
    result = run("report", str(DEMO), "--limit", "gpu07", "-o", str(tmp_path / "r.html"))
    assert result.exit_code == 1, result.output
    (page,) = drawn
    assert {f.target for f in page.result.findings} == {"gpu07", "leaf02"}
    assert page.result.source == f"{DEMO} --limit gpu07" and page.result.extra["selection"]["targets"] == ["gpu07"]


# --- a generated fabric: a PFC storm on one host, judged with and without it --------------------------------------


@pytest.fixture(scope="module")
def storm(tmp_path_factory):
    """A generated fabric (top-of-rack SONiC leaves) with a PFC storm on one host; its neighbour, another host on
    the same leaf; the ports of that leaf facing the storming host."""
    from rdmatool.topology.switches_for_hosts import from_bundle
    from tests.generated.bundle_writer import write
    from tests.generated.judge import FAULTS, faulted

    fabric, (stormer, _, _) = faulted(FAULTS["pfc_storm"], 1)
    bundle = write(fabric, tmp_path_factory.mktemp("generated") / "storm")
    links = [link for link in from_bundle(bundle) if link.switch.startswith("sw-")]  # the fabric, not the OOB
    leaf = next(link.switch for link in links if link.host == stormer)
    neighbour = next(link.host for link in links if link.switch == leaf and link.host != stormer)
    facing = {link.switch_port for link in links if link.switch == leaf and link.host == stormer}
    return bundle, {"RDMATOOL_CONFIG": str(bundle.parent / "storm.site.yaml")}, stormer, neighbour, leaf, facing


def test_generated_a_storm_on_a_host_left_out_is_not_reported(storm) -> None:
    bundle, env, stormer, neighbour, leaf, facing = storm
    result = run("diagnose", str(bundle), "--limit", neighbour, "--json", **env)
    doc = json.loads(result.stdout)
    assert doc["selection"]["targets"] == [neighbour] and leaf in doc["selection"]["switches"]
    assert not [f for f in doc["findings"] if f["target"] == stormer or (f["target"] == leaf and f["entity"] in facing)]
    assert not [f for f in doc["findings"] if f["severity"] in ("warning", "error", "critical")], doc["findings"]
    assert result.exit_code == 0, result.output


def test_generated_a_storm_on_the_selected_host_is_reported_at_both_ends(storm) -> None:
    bundle, env, stormer, neighbour, leaf, facing = storm
    result = run("diagnose", str(bundle), "--limit", stormer, "--json", **env)
    assert result.exit_code == 1, result.output
    doc = json.loads(result.stdout)
    assert any(f["rule"] == "pfc_storm" and f["target"] == stormer for f in doc["findings"])
    # the leaf's end of the storming cable (its ECN fires after PFC there) is the selection's: kept
    assert any(f["target"] == leaf and f["entity"] in facing and f["severity"] != "info" for f in doc["findings"])


# --- the narrowed bundle and the findings it keeps ---------------------------------------------------------------


def test_a_narrowed_bundle_links_the_kept_targets_files_and_lists_them_alone(tmp_path: Path) -> None:
    from rdmatool.bundle.select import Selection, narrowed

    source = tmp_path / "nightly"
    for snapshot in ("0", "1"):
        folder = source / "snapshots" / snapshot
        (folder / "gpu02").mkdir(parents=True)
        for name in ("gpu01.outputs", "gpu02.outputs", "leaf01.outputs", "gpu02/capture.mlx5_0.pcap"):
            (folder / name).write_text(name)
        (folder / "gpu01.outputs.secret").symlink_to("/etc/hostname")  # no target's file: not brought along
    (source / "perf").mkdir()
    (source / "perf" / "results.json").write_text("[]")
    (source / "samples.npz").write_text("a cache of every target")
    (source / "manifest.json").write_text(json.dumps({
        "format": "rdmatool-bundle/3", "created": "2026-12-02T05:18:50+00:00", "interval_s": 5.0,
        "snapshots": [{"index": 0}, {"index": 1}],
        "targets": [{"name": "gpu01"}, {"name": "gpu02"}, {"name": "leaf01", "kind": "switch"}],
        "failures": [{"target": "gpu01", "error": "timed out"}, {"target": "gpu02", "error": "refused"}]}))
    selection = Selection(of=str(source), chosen=("gpu02",), limit="gpu02", switches=("leaf01",), total=3)
    into = narrowed(source, selection, tmp_path / "narrowed")
    manifest = json.loads((into / "manifest.json").read_text())
    assert [t["name"] for t in manifest["targets"]] == ["gpu02", "leaf01"]
    assert manifest["failures"] == [{"target": "gpu02", "error": "refused"}]
    assert manifest["selection"]["targets"] == ["gpu02"] and manifest["selection"]["switches"] == {"leaf01": []}
    kept = sorted(str(p.relative_to(into)) for p in into.rglob("*") if p.is_file())
    assert kept == ["manifest.json", "perf/results.json",
                    *(f"snapshots/{s}/{name}" for s in "01" for name in ("gpu02.outputs", "gpu02/capture.mlx5_0.pcap",
                                                                          "leaf01.outputs"))]
    original = source / "snapshots" / "0" / "gpu02.outputs"
    assert (into / "snapshots" / "0" / "gpu02.outputs").stat().st_ino == original.stat().st_ino  # a link, no copy


def test_a_brought_in_switch_keeps_its_ports_facing_the_selection_whatever_their_spelling() -> None:
    from rdmatool.bundle.select import Selection
    from rdmatool.model import Finding, Severity

    def finding(target: str, entity: str | None, **evidence) -> Finding:
        return Finding("r", Severity.ERROR, target, entity, "", "", "", "", evidence=evidence)

    selection = Selection(of="b", chosen=("gpu01",), limit="gpu01", switches=("leaf01",),
                          left_out_ports={"leaf01": frozenset({"Ethernet1/2", "Ethernet1/3"})}, total=4)
    assert selection.keeps(finding("gpu01", "mlx5_0/1")) and not selection.keeps(finding("gpu02", "mlx5_0/1"))
    assert selection.keeps(finding("leaf01", "Ethernet1/1")) and selection.keeps(finding("leaf01", None))
    assert not selection.keeps(finding("leaf01", "Eth1/2"))  # NX-OS's short name of a port facing gpu02
    ports = [{"entity": "Ethernet1/2"}, {"entity": "Ethernet1/3"}]
    assert not selection.keeps(finding("leaf01", None, details={"ports": ports}))  # every port it names left out
    assert selection.keeps(finding("leaf01", None, details={"ports": [*ports, {"entity": "Ethernet1/1"}]}))
