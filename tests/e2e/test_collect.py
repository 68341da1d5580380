"""End to end: `rdmatool collect` over real SSH (paramiko, netmiko's real drivers) to the simulated fabric.

The fabric is a real OpenSSH server on loopback; each target is its own 127.0.x.y address with its own fake sysfs,
tool shims or switch CLI. Nothing here is mocked.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from rdmatool import bundle as bundle_io
from rdmatool.table import frame as frames
from rdmatool.table import samples_store
from rdmatool.table.column_codes import as_texts
from tests.bundle_sides import outputs_of
from tests.e2e.helpers import REPO, collect, manifest, rdmatool, rewrite_inventory, sigint_default
from tests.fabric.fixtures import fabric_fixture
from tests.helpers import imported_modules

pytestmark = pytest.mark.e2e

healthy = fabric_fixture("healthy", scope="module")
degraded = fabric_fixture("degraded", scope="module")


@pytest.fixture(scope="module")
def healthy_bundle(healthy, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("collect") / "healthy"
    result = collect(healthy, out, "--interval", "1")
    assert result.returncode == 0, result.stderr
    return out


@pytest.fixture(scope="module")
def degraded_bundle(degraded, tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    out = tmp_path_factory.mktemp("collect") / "degraded"
    # gpu11's ethtool hangs by design and costs the per-command timeout at each call (six calls over the two
    # snapshots): a short one keeps this collection to seconds; every other command answers in well under a second.
    result = collect(degraded, out, "--interval", "1", "--timeout", "4")
    return out, result


def test_healthy_fabric_is_collected_and_every_file_parses(healthy, healthy_bundle: Path) -> None:
    data = manifest(healthy_bundle)
    assert data["format"] == "rdmatool-bundle/3"
    # format /3: each target's outputs of a snapshot in one pack, no folder, no file per output
    entries = list((healthy_bundle / "snapshots").glob("*/*"))
    assert len(entries) >= 2 * 20 and all(e.is_file() and e.name.endswith(".outputs") for e in entries)
    names = {t["name"] for t in data["targets"]}
    hosts = [t for t in data["targets"] if t["kind"] == "host"]
    switches = [t for t in data["targets"] if t["kind"] == "switch"]
    assert len(hosts) == 16 and len(switches) >= 4
    assert data["failures"] == []
    assert [s["index"] for s in data["snapshots"]] == [0, 1]
    loaded = bundle_io.read(healthy_bundle)
    collected = {e.target for e in loaded.entries}
    assert collected == names, f"targets with no output: {names - collected}"
    table = frames.from_bundle(loaded)
    assert table.parse_failures == [], [p.message for p in table.parse_failures[:5]]
    # every switch platform produced canonical PFC data, every host its port state
    per_platform = table.frame[table.frame["metric"].isin(["rx_pause_frames", "tx_pause_frames", "pfc_enabled"])]
    assert set(per_platform["platform"]) >= {"linux", "sonic", "cumulus", "onyx", "eos", "nxos"}
    # every switch platform reported its ports' speeds (the cabling judge's speed_mismatch), at the hosts' 200G
    rates = table.frame[(table.frame["metric"] == "link_rate_gbps") & (table.frame["kind"] == "switch")]
    assert set(rates["platform"]) == {"sonic", "cumulus", "onyx", "eos", "nxos"}
    assert set(rates["value"]) == {200}
    states = table.frame[(table.frame["metric"] == "port_state") & (table.frame["kind"] == "host")]
    assert set(states["target"]) == {t["name"] for t in hosts}
    assert set(states["text"]) == {"Active"}
    # the collector stored what it parsed: reading the bundle back takes it from the store, to the same table
    stored = samples_store.load(healthy_bundle)
    assert stored is not None and len(stored.arrays["value"]) == len(table.frame)
    pd.testing.assert_frame_equal(as_texts(frames.load(healthy_bundle, write_store=False).frame), as_texts(table.frame))


def test_second_snapshot_rereads_only_counters(healthy_bundle: Path) -> None:
    loaded = bundle_io.read(healthy_bundle)
    first = {e.result.parser for e in loaded.entries if e.snapshot == 0 and e.target == "gpu01"}
    second = {e.result.parser for e in loaded.entries if e.snapshot == 1 and e.target == "gpu01"}
    assert {"ibstat", "ibv_devinfo", "mlnx_qos", "ethtool_info"} <= first
    assert second and second < first
    assert {"sysfs_counters", "ethtool_stats"} <= second
    assert not {"ibstat", "ibv_devinfo", "mlnx_qos", "ethtool_info"} & second


def test_host_gets_one_exec_per_snapshot(healthy_bundle: Path) -> None:
    side, text = outputs_of(healthy_bundle, 0, "gpu01")["ibstat"]
    assert side["exit_code"] == 0 and side["command"] == "ibstat" and side["error"] is None
    # the raw output is what the host printed, byte for byte
    assert text.startswith("CA '")


def test_degraded_collection_records_failures_and_keeps_going(degraded_bundle) -> None:
    out, result = degraded_bundle
    assert result.returncode == 3, result.stderr
    data = manifest(out)
    by_target: dict[str, list[str]] = {}
    for failure in data["failures"]:
        by_target.setdefault(failure["target"], []).append(failure["error"])
    # unreachable target: a failure, the bundle still written
    assert any("refused" in e or "unreachable" in e for e in by_target["gpu12"])
    # missing tool: recorded as such, not a crash
    assert "perfquery not installed on gpu09" in by_target["gpu09"]
    # hanging command: the per-command timeout hit, the rest of that host and every other host finished
    assert any("ethtool" in e and "timed out" in e for e in by_target["gpu11"])
    loaded = bundle_io.read(out)
    gpu11 = {e.result.parser for e in loaded.entries if e.target == "gpu11"}
    assert {"ibstat", "sysfs_counters", "loadavg"} <= gpu11
    collected = {e.target for e in loaded.entries}
    lost = [f for f in data["failures"] if f["target"] not in collected]  # why, should a target be lost
    assert collected == {t["name"] for t in data["targets"]} - {"gpu12"}, (lost, result.stderr[-3000:])
    assert "gpu12" in result.stderr  # the summary names the failed target


def test_garbage_output_is_a_parse_failure_of_that_file_only(degraded_bundle) -> None:
    out, _ = degraded_bundle
    table = frames.from_bundle(bundle_io.read(out))
    assert frames.load(out, write_store=False).parse_failures == table.parse_failures  # the store kept them
    garbage = [p for p in table.parse_failures if p.target == "gpu10"]
    assert [p.parser for p in garbage] == ["ibstat"]
    assert "gpu10/ibstat" in garbage[0].message and ":1:" in garbage[0].message
    gpu10 = table.frame[table.frame["target"] == "gpu10"]
    assert {"port_state", "symbol_errors", "rx_pause_frames"} <= set(gpu10["metric"])  # sysfs/ethtool still parsed


def test_wrong_key_is_an_authentication_failure(healthy, tmp_path: Path) -> None:
    other_key = tmp_path / "other_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other_key)], check=True)

    def use_other_key(data: dict) -> None:
        data["defaults"]["identity_file"] = str(other_key)

    inventory = rewrite_inventory(healthy, tmp_path / "inv.yaml", use_other_key)
    result = collect(healthy, tmp_path / "b", "--interval", "0", "--limit", "gpu01,gpu02", inventory=inventory)
    assert result.returncode == 3
    errors = [f["error"] for f in manifest(tmp_path / "b")["failures"]]
    assert len(errors) == 2 and all("authentication failed" in e for e in errors)


def test_unknown_host_key_is_refused_unless_accepted(healthy, tmp_path: Path) -> None:
    empty = tmp_path / "known_hosts"
    empty.write_text("")
    refused = collect(healthy, tmp_path / "a", "--interval", "0", "--limit", "gpu01", known_hosts=empty)
    assert refused.returncode == 3
    (failure,) = manifest(tmp_path / "a")["failures"]
    assert "--accept-new-host-keys" in failure["error"]
    accepted = collect(healthy, tmp_path / "b", "--interval", "0", "--limit", "gpu01,leaf01",
                       "--accept-new-host-keys", known_hosts=empty)
    assert accepted.returncode == 0, accepted.stderr
    recorded = empty.read_text()
    assert f"[{healthy.address('gpu01')}]:{healthy.port}" in recorded
    # recorded keys are then verified like any other
    again = collect(healthy, tmp_path / "c", "--interval", "0", "--limit", "gpu01", known_hosts=empty)
    assert again.returncode == 0


def test_changed_host_key_is_refused_even_with_accept_new(healthy, tmp_path: Path) -> None:
    fake = tmp_path / "fake_host_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(fake)], check=True)
    key_type, key_b64 = Path(f"{fake}.pub").read_text().split()[:2]
    lines = Path(healthy.known_hosts).read_text().splitlines()
    target = f"[{healthy.address('gpu03')}]:{healthy.port}"
    changed = [line if not line.startswith(target + " ") else f"{target} {key_type} {key_b64}" for line in lines]
    assert changed != lines
    known = tmp_path / "known_hosts"
    known.write_text("\n".join(changed) + "\n")
    result = collect(healthy, tmp_path / "b", "--interval", "0", "--limit", "gpu03,gpu04",
                     "--accept-new-host-keys", known_hosts=known)
    assert result.returncode == 3
    (failure,) = manifest(tmp_path / "b")["failures"]
    assert failure["target"] == "gpu03" and "host key changed" in failure["error"]
    assert known.read_text().count(target) == 1  # never accepted, never rewritten


def test_shards_cover_every_target_exactly_once(healthy, tmp_path: Path) -> None:
    seen: list[str] = []
    for k in (1, 2, 3):
        result = rdmatool("inventory", "show", "-i", str(healthy.inventory_path), "--shard", f"{k}/3", "--json")
        assert result.returncode == 0, result.stderr
        seen += [t["name"] for t in json.loads(result.stdout)["targets"]]
    everything = json.loads(rdmatool("inventory", "show", "-i", str(healthy.inventory_path), "--json").stdout)["targets"]
    assert sorted(seen) == sorted(t["name"] for t in everything)
    assert len(seen) == len(set(seen))
    # and a shard really collects only its own targets
    result = collect(healthy, tmp_path / "s", "--interval", "0", "--shard", "2/3")
    assert result.returncode == 0, result.stderr
    shard_names = {t["name"] for t in manifest(tmp_path / "s")["targets"]}
    expected = json.loads(rdmatool("inventory", "show", "-i", str(healthy.inventory_path), "--shard", "2/3",
                                   "--json").stdout)["targets"]
    assert shard_names == {t["name"] for t in expected}


def test_interrupted_collection_leaves_no_bundle(healthy, tmp_path: Path) -> None:
    out = tmp_path / "bundle"
    process = subprocess.Popen(
        [sys.executable, "-m", "rdmatool", "collect", "-i", str(healthy.inventory_path), "-o", str(out),
         "--known-hosts", str(healthy.known_hosts), "--interval", "30"],
        cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        preexec_fn=sigint_default,
    )
    time.sleep(6)  # the first snapshot is in; the collector now waits for the second
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode != 0
    assert not out.exists()
    assert not list(tmp_path.glob(".bundle.partial-*")), "temporary bundle left behind"
    assert b"Traceback" not in stderr


def test_existing_bundle_is_replaced_only_when_the_new_one_is_complete(healthy, tmp_path: Path) -> None:
    out = tmp_path / "b"
    assert collect(healthy, out, "--interval", "0", "--limit", "gpu01").returncode == 0
    first = manifest(out)["created"]
    assert collect(healthy, out, "--interval", "0", "--limit", "gpu02").returncode == 0
    assert [t["name"] for t in manifest(out)["targets"]] == ["gpu02"]
    assert manifest(out)["created"] >= first
    assert not list(tmp_path.glob(".b.*"))


def test_bundle_show_summarises(healthy_bundle: Path) -> None:
    result = rdmatool("bundle", "show", str(healthy_bundle), "--json")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["targets"] >= 20 and summary["snapshots"] == 2
    assert summary["outputs_per_parser"]["ibstat"] == 16
    assert summary["failures"] == []


def test_inventory_values_never_reach_a_shell_unquoted(healthy, tmp_path: Path) -> None:
    def inject(data: dict) -> None:
        data["targets"] = [{"name": "gpu01;touch /tmp/pwned", "address": healthy.address("gpu01"), "group": "gpu"}]

    inventory = rewrite_inventory(healthy, tmp_path / "inv.yaml", inject)
    result = collect(healthy, tmp_path / "b", "--interval", "0", inventory=inventory)
    assert result.returncode == 2
    # refused at load, naming the file, line and value, before any connection
    assert "gpu01;touch /tmp/pwned" in result.stderr and "inv.yaml:" in result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_proxy_jump_reaches_a_host_through_a_bastion(healthy, tmp_path: Path) -> None:
    def through_gpu01(data: dict) -> None:
        data["targets"] = [{"name": "gpu02", "address": healthy.address("gpu02"), "group": "gpu",
                            "proxy_jump": f"root@{healthy.address('gpu01')}:{healthy.port}"}]

    inventory = rewrite_inventory(healthy, tmp_path / "inv.yaml", through_gpu01)
    result = collect(healthy, tmp_path / "b", "--interval", "0", inventory=inventory)
    assert result.returncode == 0, result.stderr
    assert outputs_of(tmp_path / "b", 0, "gpu02")["ibstat"][1].startswith("CA '")
    assert manifest(tmp_path / "b")["targets"][0]["proxy_jump"].startswith("root@")


def test_diagnose_live_collects_then_diagnoses(healthy, tmp_path: Path) -> None:
    saved = tmp_path / "live"
    result = rdmatool("diagnose", "-i", str(healthy.inventory_path), "--known-hosts", str(healthy.known_hosts),
                      "--interval", "1", "--save", str(saved), "--format", "json", "--limit", "gpu0[1-4],leaf01")
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["verdict"] in ("pass", "warn") and payload["failures"] == []
    assert {t["name"] for t in manifest(saved)["targets"]} == {"gpu01", "gpu02", "gpu03", "gpu04", "leaf01"}


def test_collect_imports_neither_pandas_nor_the_other_commands(healthy, tmp_path):
    # pandas costs ~0.3-0.7 s of client CPU at start, as much as ten hosts' transport: a fan-out pays for it once
    # per run and gains nothing, since the samples store is built from numpy arrays alone. The same holds for the
    # other command modules and rich (a collection that went well prints two plain lines).
    result = collect(healthy, tmp_path / "b", "--interval", "0", env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert result.returncode == 0, result.stderr
    imported = imported_modules(result.stderr)
    assert {"rdmatool.collect", "rdmatool.table.samples_store", "paramiko", "numpy"} <= imported
    assert (tmp_path / "b" / "samples.npz").is_file()
    assert not {m for m in imported if m == "pandas" or m.startswith("pandas.")}
    commands = {m for m in imported if m.startswith("rdmatool.cli.") and m.endswith("_cmd")}
    assert commands == {"rdmatool.cli.collect_cmd"}
    assert not {m for m in imported if m == "rich" or m.startswith("rich.")}
    assert "collected 21/21 targets, no errors" in result.stderr


def test_a_switch_slow_to_start_its_cli_is_waited_for_until_its_deadline(healthy, tmp_path: Path) -> None:
    """A switch whose management CPU is busy starts its CLI late: 22 s after the session opened, past netmiko's own
    fixed 20 s wait for the first prompt. The login may take until the target's deadline; with a deadline shorter
    than the delay the switch fails alone, with a line saying what it did not do."""
    from concurrent.futures import ThreadPoolExecutor

    for switch in ("leaf01", "leaf03"):  # SONiC (netmiko's Linux driver) and Onyx (ours)
        healthy.set_fault("slow_login", switch, value=22)
    try:
        with ThreadPoolExecutor(2) as pool:
            patient = pool.submit(collect, healthy, tmp_path / "patient", "--interval", "0", "--deadline", "60",
                                  "--limit", "leaf01,leaf03")
            hasty = pool.submit(collect, healthy, tmp_path / "hasty", "--interval", "0", "--deadline", "6",
                                "--limit", "gpu01,leaf03")
            patient, hasty = patient.result(), hasty.result()
    finally:
        healthy.reset()
    assert patient.returncode == 0, patient.stderr
    data = manifest(tmp_path / "patient")
    assert data["failures"] == []
    for switch in ("leaf01", "leaf03"):
        outputs = outputs_of(tmp_path / "patient", 0, switch)
        assert len(outputs) >= 3 and all(text for _, text in outputs.values()), outputs
    assert hasty.returncode == 3, hasty.stderr  # inconclusive: a target not read
    failures = manifest(tmp_path / "hasty")["failures"]
    assert [f["target"] for f in failures] == ["leaf03"], failures
    said = "logged in, but the CLI gave no prompt (or did not answer its session set-up) within"
    assert said in failures[0]["error"], failures
    assert "Traceback" not in hasty.stderr
    assert "ibstat" in outputs_of(tmp_path / "hasty", 0, "gpu01")
