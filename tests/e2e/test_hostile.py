"""End to end: hostile hosts and a hostile switch on the simulated fabric must not hurt the collector.

- gpu02..gpu04 are compromised: their `sh` knows the run's marker token and forges a section whose parser name is
  a relative path out of the bundle, an absolute path, or an unknown parser;
- gpu05's `ibstat` prints forged markers without the token (what a log line or a crafted name could do);
- leaf02 (Cumulus) advertises an LLDP neighbour on a local port named `swp2\\n`: a per-port command built from it
  would reach the switch shell as two lines, the second running the `counters` canary.
The collection must write nothing outside the bundle, collect every other target, and report each hostile host.
"""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
import yaml

from tests.bundle_sides import outputs_of
from tests.e2e.helpers import collect, manifest, rewrite_inventory
from tests.fabric import scenario as scenario_mod
from tests.fabric.fixtures import sim_fabric
from tests.fabric.scenario import SCENARIOS

pytestmark = pytest.mark.e2e

ABSOLUTE_CANARY = Path("/tmp/rdmatool-hostile-absolute")


def _scenario(relative: str) -> scenario_mod.Scenario:
    data = yaml.safe_load((SCENARIOS / "healthy.yaml").read_text())
    data["name"] = "hostile"
    data["hosts"] = [{"name": "gpu[01-05]", "address": "127.0.1.[1-5]", "role": "compute", "nics": "compute"}]
    data["switches"] = [{"name": "leaf01", "platform": "sonic", "address": "127.0.2.1"},
                        {"name": "leaf02", "platform": "cumulus", "address": "127.0.2.2"}]
    data["faults"] = [
        {"kind": "forged_markers", "target": "gpu02", "tool": "sh", "value": relative},
        {"kind": "forged_markers", "target": "gpu03", "tool": "sh", "value": str(ABSOLUTE_CANARY / "pwned")},
        {"kind": "forged_markers", "target": "gpu04", "tool": "sh", "value": "no_such_parser"},
        {"kind": "forged_markers", "target": "gpu05", "tool": "ibstat", "value": relative},
        {"kind": "lldp_port_newline", "target": "leaf02", "value": "swp2\n"},
    ]
    return scenario_mod.from_dict(data)


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory):
    work = tmp_path_factory.mktemp("hostile")
    # From snapshots/<i>/<target>/ of the bundle being built under work/out, five levels up is `work` itself (a
    # target folder of format /2; in a pack of /3 the name is a header value, never a path, and is refused alike).
    relative = "../../../../../escaped"
    with sim_fabric(_scenario(relative)) as fab:
        # leaf02 must discover its ports from LLDP (where the hostile name comes from), not from the inventory.
        def drop_ports(data: dict) -> None:
            for entry in data["targets"]:
                if entry.get("name") == "leaf02":
                    entry.pop("ports", None)

        inventory = rewrite_inventory(fab, work / "inventory.yaml", drop_ports)
        before = set(work.parent.iterdir())
        out = work / "out" / "bundle"
        result = collect(fab, out, "--interval", "0", inventory=inventory)
        after = set(work.parent.iterdir())
        injected = fab.state / "injected" / "leaf02"
        yield {"work": work, "out": out, "result": result, "new_siblings": after - before,
               "injected": injected.read_text() if injected.exists() else "", "fabric": fab,
               "inventory": inventory}


def test_nothing_is_written_outside_the_bundle(hostile_run) -> None:
    work, out = hostile_run["work"], hostile_run["out"]
    assert hostile_run["new_siblings"] == set()
    assert not ABSOLUTE_CANARY.exists()
    files = {p.relative_to(work) for p in work.rglob("*") if p.is_file()}
    outside = {p for p in files if p.parts[:2] != ("out", "bundle")} - {Path("inventory.yaml")}
    assert outside == set()
    assert not any("escaped" in p.name or "pwned" in p.name or "no_such_parser" in p.name
                   for p in out.rglob("*"))


def test_the_hostile_hosts_fail_alone_and_say_why(hostile_run) -> None:
    result, out = hostile_run["result"], hostile_run["out"]
    assert result.returncode == 3, result.stderr  # some targets failed, the bundle is written
    failures = {f["target"]: f["error"] for f in manifest(out)["failures"] if not f.get("parser")}
    assert set(failures) == {"gpu02", "gpu03", "gpu04"}, failures
    for name, error in failures.items():
        assert "framing" in error and "cannot come first" in error, (name, error)
        assert "\n" not in error
    assert "gpu02" in result.stderr and "framing" in result.stderr


def test_every_other_target_is_collected(hostile_run) -> None:
    out = hostile_run["out"]
    collected = {name: outputs_of(out, 0, name) for name in ("gpu01", "gpu05", "leaf01", "leaf02")}
    for name, outputs in collected.items():
        assert "loadavg" in outputs or "lldpctl" in outputs, name
    assert "ethtool_stats.ens1f0np0" in collected["gpu01"]
    # the tool that printed markers without the token is just a tool with odd output, kept as its own output
    ibstat = collected["gpu05"]["ibstat"][1]
    assert "@@RDMATOOL@@" in ibstat and "pwned" in ibstat
    assert "loadavg" in collected["gpu05"]


def test_a_switch_port_name_with_a_newline_never_reaches_the_switch(hostile_run) -> None:
    out = hostile_run["out"]
    assert hostile_run["injected"] == "", "a command line carried a second line to the switch shell"
    commands = [side["command"] for side, _ in outputs_of(out, 0, "leaf02").values()]
    per_port = [c for c in commands if c.startswith("nv show interface")]
    assert per_port, "the good LLDP ports of leaf02 are still collected"
    assert all("\n" not in c for c in commands)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_run_that_collects_nothing_never_replaces_a_good_bundle(hostile_run, tmp_path) -> None:
    fab, work = hostile_run["fabric"], hostile_run["work"]
    good = tmp_path / "night"
    first = collect(fab, good, "--interval", "0", inventory=hostile_run["inventory"])
    assert first.returncode == 3 and (good / "manifest.json").exists()
    before = (good / "manifest.json").read_text()
    port = _closed_port()

    def everything_down(data: dict) -> None:
        data["defaults"]["port"] = port
        for entry in data["targets"]:
            entry.pop("port", None)

    down = rewrite_inventory(fab, work / "down.yaml", everything_down)
    refused = collect(fab, good, "--interval", "0", inventory=down)
    assert refused.returncode == 3
    assert "no target was collected; the existing bundle is kept (--force replaces it anyway)" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert (good / "manifest.json").read_text() == before
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".night")], "no partial bundle left behind"

    forced = collect(fab, good, "--interval", "0", "--force", inventory=down)
    assert forced.returncode == 3
    replaced = manifest(good)
    assert {f["target"] for f in replaced["failures"]} == {t["name"] for t in replaced["targets"]}
    # a new bundle name is written even when empty: there is nothing to lose
    fresh = collect(fab, tmp_path / "fresh", "--interval", "0", inventory=down)
    assert fresh.returncode == 3 and (tmp_path / "fresh" / "manifest.json").exists()


def test_a_missing_key_file_is_named_as_such(hostile_run) -> None:
    fab, work = hostile_run["fabric"], hostile_run["work"]

    def missing_key(data: dict) -> None:
        data["defaults"]["identity_file"] = "~/.ssh/no-such-key-for-rdmatool"

    inventory = rewrite_inventory(fab, work / "nokey.yaml", missing_key)
    result = collect(fab, work / "nokey", "--interval", "0", "--limit", "gpu01,leaf01", inventory=inventory)
    assert result.returncode == 3
    errors = {f["target"]: f["error"] for f in manifest(work / "nokey")["failures"]}
    for name in ("gpu01", "leaf01"):
        assert "identity file ~/.ssh/no-such-key-for-rdmatool not found on this machine" in errors[name], errors
        assert "unreachable" not in errors[name]


def test_a_known_host_presenting_a_new_key_type_is_refused_unless_both_options_say_so(hostile_run, tmp_path) -> None:
    """gpu01 is known with an ECDSA key only; its sshd presents ed25519: a man in the middle would look like this."""
    import paramiko

    fab = hostile_run["fabric"]
    ecdsa = paramiko.ECDSAKey.generate()
    known = tmp_path / "known_hosts"
    known.write_text(f"[{fab.address('gpu01')}]:{fab.port} {ecdsa.get_name()} {ecdsa.get_base64()}\n")
    args = ("--interval", "0", "--limit", "gpu01")
    refused = collect(fab, tmp_path / "a", *args, "--accept-new-host-keys", known_hosts=known)
    assert refused.returncode == 3
    error = manifest(tmp_path / "a")["failures"][0]["error"]
    assert "gpu01" in error and "refusing to connect" in error and "--accept-new-key-types" in error, error
    assert "ssh-ed25519" not in known.read_text()
    usage = collect(fab, tmp_path / "b", *args, "--accept-new-key-types", known_hosts=known)
    assert usage.returncode == 2 and "--accept-new-key-types only applies together" in usage.stderr
    accepted = collect(fab, tmp_path / "c", *args, "--accept-new-host-keys", "--accept-new-key-types",
                       known_hosts=known)
    assert accepted.returncode == 0, accepted.stderr
    assert "ssh-ed25519" in known.read_text()
