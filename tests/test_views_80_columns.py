"""Every table view at COLUMNS=80 with long keys (a host's fully qualified name, an IPv6 address and flow, a long
metric, entity or setting): no line is wider than 80 characters and every key is shown whole on one line, never cut
to `10.0.…`. The suggested commands of the on-call view are the one exception, on purpose: they are printed on one
line each whatever the width, ready to paste (rdmatool.report.text). A diff's long values are cut around what
changed, not at their end. COLUMNS is honoured: the same view at 200 columns is wider."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from rdmatool.cli import app
from tests.helpers import REPO

DEMO = REPO / "examples" / "demo-bundle"
BASELINE = REPO / "baselines" / "demo-healthy.json"
WIDTH = 80
# the demo's hosts under the names of a site that spells them in full
LONG = {f"gpu0{i}": f"gpu-a100-rack17-slot0{i}.dc1.example" for i in range(1, 5)}
V6_A, V6_B = "fd00:1234:5678:9abc:def0:1234:5678:9abc", "fd00:1234:5678:9abc:def0:1234:5678:9abd"
runner = CliRunner()


def shown(args: list[str], columns: int = WIDTH, **env: str):
    result = runner.invoke(app, args, env={"COLUMNS": str(columns), **env})
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


def assert_fits(text: str, keys, exempt=()) -> None:
    """Each line at most WIDTH characters (but the `exempt` ones: whole commands), each key whole on one line."""
    lines = text.splitlines()
    over = [line for line in lines if len(line) > WIDTH and not any(e in line for e in exempt)]
    assert not over, "\n".join(over)
    missing = [key for key in keys if not any(key in line for line in lines)]
    assert not missing, f"not whole on one line: {missing}\n{text}"


def widest(text: str) -> int:
    return max(map(len, text.splitlines()))


def test_inventory_show_keeps_names_and_addresses_whole(tmp_path: Path) -> None:
    inventory = tmp_path / "inv.yaml"
    inventory.write_text(
        "defaults: {user: operations-automation}\n"
        "groups:\n  gpu: {kind: host, platform: linux, role: compute}\n  leaf: {kind: switch, platform: sonic}\n"
        "targets:\n"
        '  - {name: "gpu-a100-rack17-slot[01-03].dc1.example", address: "10.200.117.[201-203]", group: gpu,'
        " identity_file: /home/operations/.ssh/id_ed25519_fabric}\n"
        f'  - {{name: leaf-rack17-top.dc1.example, address: "{V6_A}", group: leaf}}\n')
    narrow = shown(["inventory", "show", "-i", str(inventory)])
    assert narrow.exit_code == 0, narrow.output
    assert_fits(narrow.stdout, [*(f"gpu-a100-rack17-slot0{i}.dc1.example" for i in (1, 2, 3)),
                                *(f"10.200.117.{i}" for i in (201, 202, 203)), "leaf-rack17-top.dc1.example", V6_A])
    wide = shown(["inventory", "show", "-i", str(inventory)], columns=200).stdout
    assert widest(wide) > WIDTH and "identity_file" in wide  # COLUMNS honoured: a column per field when it fits


def test_pcap_keeps_flows_whole(tmp_path: Path) -> None:
    from tests.capture.build import pfc_frame, roce, write

    packets = [p for i in range(20) for p in (roce(src=V6_A, dst=V6_B, qp=0x123456, psn=i, ipv6=True),
                                              roce(src="10.200.117.201", dst="10.200.118.202", qp=0x11, psn=i))]
    capture = write(tmp_path / "flows.pcap", [*packets, pfc_frame({3: 500})])
    result = shown(["pcap", str(capture)])
    assert result.exit_code in (0, 1), result.output
    assert_fits(result.stdout, [V6_A, V6_B, "10.200.117.201", "10.200.118.202", "qp 1193046", "02:00:00:00:00:09"])


def test_parse_keeps_entities_metrics_and_values_whole() -> None:
    sample = REPO / "tests" / "fixtures" / "parsers" / "iblinkinfo" / "degraded.txt"
    result = shown(["parse", "iblinkinfo", str(sample)])
    assert result.exit_code == 0, result.output
    # an entity of several words wraps between them beside the metric and the value: each word whole
    assert_fits(result.stdout, ["ib_link_phys_state", "ib_link_rate_gbps", "(0x248a0703005c1f20)/1", "Technologies/1"])
    sample = REPO / "tests" / "fixtures" / "parsers" / "cumulus_roce_status" / "swp3_lossless.txt"
    result = shown(["parse", "cumulus_roce_status", str(sample)])
    assert_fits(result.stdout, ["buffer_pool_max_usage_bytes", "roce-reserved-ingress"])


def test_baseline_show_keeps_metrics_whole() -> None:
    result = shown(["baseline", "show", str(BASELINE), "--metric", "_per_s"])
    assert result.exit_code == 0, result.output
    assert_fits(result.stdout, ["port_rcv_remote_physical_errors_per_s", "fw_version_by_board_id", "MT_0000000838"])
    assert widest(shown(["baseline", "show", str(BASELINE), "--metric", "_per_s"], columns=200).stdout) > WIDTH


def test_baseline_diff_shows_the_change_and_where_a_long_value_differs(tmp_path: Path) -> None:
    doc = json.loads(BASELINE.read_text())
    row = next(r for r in doc["rule_stats"] if r["metric"] == "port_rcv_remote_physical_errors_per_s")
    row["median"] = row["median"] * 3 + 1
    profile = doc["reference"]["ecn_by_profile"]["cumulus/qos"]
    profile["value"] = profile["value"].replace("min=153600,min=153600", "min=100000,min=153600")
    changed = tmp_path / "changed.json"
    changed.write_text(json.dumps(doc))
    result = shown(["baseline", "diff", str(BASELINE), str(changed)])
    assert result.exit_code == 0, result.output
    assert_fits(result.stdout, ["port_rcv_remote_physical_errors_per_s", "ecn_by_profile", "cumulus/qos"])
    # the change itself, not the two equal beginnings of a 160-character value
    (row,) = [line for line in result.stdout.splitlines() if "cumulus/qos" in line]
    assert "…153600,min=153600" in row and "…100000,min=153600" in row, row
    (moved,) = [line for line in result.stdout.splitlines() if "port_rcv_remote_physical_errors_per_s" in line]
    assert re.search(r"│ +(\+[\d.]+%|new) │$", moved), moved  # the change, whole, on the metric's line


def test_bundle_show_keeps_parsers_and_targets_whole() -> None:
    result = shown(["bundle", "show", str(DEMO)])
    assert result.exit_code == 0, result.output
    assert_fits(result.stdout, ["cumulus_interface_status", "onyx_interface_counters", "gpu12", "ibstat (parse)"])


def test_bundle_diff_cuts_a_long_value_around_its_change(monkeypatch) -> None:
    before = "leaf-rack17-top.dc1.example Ethernet12 (sonic 202311, port channel none, mtu 9216, speed 400G)"
    after = before.replace("Ethernet12", "Ethernet16")
    where = LONG["gpu01"]
    diff = {
        "schema": "rdmatool-bundle-diff/1", "a": "/srv/bundles/nightly-2026-12-01", "b": "/srv/bundles/nightly-2026-12-02",
        "created_a": "2026-12-01T02:00:00+00:00", "created_b": "2026-12-02T02:00:00+00:00", "tolerance": 0.5,
        "min_rate": 1.0, "changes": 3,
        "targets": {"added": [], "removed": [], "recovered": [], "unreachable": [], "still_unreachable": []},
        "config": [{"target": where, "entity": "mlx5_1/1", "setting": "firmware_version_with_board", "priority": None,
                    "size_bytes": None, "before": "28.39.1002 (MT_0000000838, PSID MT_0000000838, rev 0x00a1)",
                    "after": "28.40.1000 (MT_0000000838, PSID MT_0000000838, rev 0x00a1)"}],
        "cabling": [{"target": where, "port": "mlx5_1/1", "before": before, "after": after}],
        "rates": [{"target": where, "entity": "mlx5_1/1", "metric": "port_rcv_remote_physical_errors_per_s",
                   "unit": "/s", "priority": None, "size_bytes": None, "before": 0.0, "after": 50.0,
                   "relative": None}],
    }
    monkeypatch.setattr("rdmatool.bundle_ops.diff.diff_paths", lambda *a, **k: SimpleNamespace(as_json=lambda: diff))
    result = shown(["bundle", "diff", "a", "b"])
    assert result.exit_code == 1, result.output
    assert_fits(result.stdout, [f"{where} mlx5_1/1", "firmware_version_with_board", "28.39.1002", "28.40.1000",
                                "port_rcv_remote_physical_errors_per_s", "new"])
    assert "Ethernet12" in result.stdout and "Ethernet16" in result.stdout  # where the two differ, not cut
    assert "…" in result.stdout  # the rest of them is


def _renamed(value, names: dict[str, str]):
    """`value` with every short host name of `names` spelled in full (strings, dataclasses, lists, dicts)."""
    if type(value) is str:  # not an enum spelled as a string (a severity)
        return re.sub(r"\b(" + "|".join(names) + r")\b", lambda m: names[m.group(1)], value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.replace(value, **{f.name: _renamed(getattr(value, f.name), names)
                                             for f in dataclasses.fields(value) if f.init})
    if isinstance(value, list | tuple):
        return type(value)(_renamed(v, names) for v in value)
    if isinstance(value, dict):
        return {k: _renamed(v, names) for k, v in value.items()}
    return value


@pytest.fixture(scope="module")
def long_named_diagnosis():
    from rdmatool.diagnose.pipeline import diagnose_bundle

    return _renamed(diagnose_bundle(DEMO), LONG)


def test_diagnose_table_keeps_names_whole(monkeypatch, long_named_diagnosis) -> None:
    from rdmatool.outcome.result import unique_suggestions

    monkeypatch.setattr("rdmatool.diagnose.pipeline.diagnose_bundle", lambda *a, **k: long_named_diagnosis)
    result = shown(["diagnose", str(DEMO), "--all"])
    assert result.exit_code == 1, result.output
    commands = [c for s, _ in unique_suggestions(long_named_diagnosis.findings)
                for cs in s.commands.values() for c in cs]
    assert_fits(result.stdout, LONG.values(), exempt=commands)
    assert any(len(line) > WIDTH for line in result.stdout.splitlines())  # a long command stays whole


def test_gate_table_fits() -> None:
    result = shown(["gate", "--replay", str(DEMO)])
    assert result.exit_code == 1, result.output
    assert_fits(result.stdout, ["drain (6): gpu[01-04,06-07]", "gpu12"], exempt=["nv set qos", "mlnx_qos -i"])


def test_config_show_wraps_a_long_value_under_itself(tmp_path: Path) -> None:
    store = "/srv/fabric-operations/baselines/" + "nightly-rail-optimised-pod-a/" * 3
    config = tmp_path / "config.yaml"
    config.write_text(f"store: {store}\n")
    result = shown(["config", "show"], RDMATOOL_CONFIG=str(config))
    assert result.exit_code == 0, result.output
    assert_fits(result.stdout, ["limits.capture_packets", "site.cable_length_m", "gate_profile"])
    assert store.replace("/", "").replace("-", "") in re.sub(r"[\s/-]", "", result.stdout)  # all of it, folded


def test_doctor_wraps_a_long_reason(monkeypatch) -> None:
    import rdmatool.cli.doctor_cmd as doctor

    tools = {tool: None for tool, _ in doctor.SCRIPT_TOOLS}
    report = {"rdmatool": "0", "host": LONG["gpu01"], "python": "/opt/fabric-operations/venvs/rdmatool/bin/python3",
              "python_version": "3.11.7",
              "pyverbs": {"usable": False, "status": "failed", "devices": [], "path": None,
                          "reason": "the verbs read failed (exit 1) " + "libibverbs: Warning: couldn't load driver " * 3},
              "sysfs_devices": None, "tools": tools}
    monkeypatch.setattr(doctor, "examine", lambda: report)
    result = shown(["doctor"])
    assert result.exit_code == 0, result.output
    assert_fits(result.stdout, [LONG["gpu01"], "mlnx_qos (mlnx-tools)"])


def test_perf_attribution_table_keeps_the_place_whole(monkeypatch, capsys, tmp_path: Path) -> None:
    from rdmatool.cli import perf_cmd
    from rdmatool.pairs.model import Attribution

    a, b = LONG["gpu01"], LONG["gpu02"]
    attribution = Attribution(bad_nodes=(a,), bad_links=((a, b),),
                              evidence={a: {"expected_gbps": 400, "measured": {b: {"measured": [180.5, 181.0]}}},
                                        f"{a}<->{b}": {"measured": 180.5, "expected": 400}},
                              errors=((a, b, "ib_write_bw: couldn't connect to " + b + " port 18515 " * 3),))
    monkeypatch.setenv("COLUMNS", str(WIDTH))
    perf_cmd._summary([], attribution, tmp_path, {})
    err = capsys.readouterr().err
    assert_fits(err, [a, b, "bad node", "bad link"])
    assert re.search(re.escape(a) + r"\s+│", err)  # a place alone in its cell, whole


def test_a_wide_terminal_is_used() -> None:
    """The same table at 200 columns takes the width its values need: COLUMNS is read when the view prints."""
    assert widest(shown(["bundle", "show", str(DEMO)], columns=200).stdout) > WIDTH
