"""End to end: hosts reached through a ProxyJump bastion share one connection to it.

The bastion is a second real OpenSSH server on loopback that only forwards (direct-tcpip), with `MaxStartups 1`:
it refuses a new connection while another is still unauthenticated, as a busy bastion under OpenSSH's default
`MaxStartups 10:30:100` does beyond ten. A collection that dialled the bastion once per host at once (the collector
did, up to --forks at a time) lost hosts at random there; with one bastion connection per collection every host is
collected, and the bastion's log shows one login. `perf run` (its PerfSession, as the gate's perf and incast
stages) connects to its hosts at once the same way and shares its bastion connection too.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.bundle_sides import outputs_of
from tests.e2e.helpers import collect, manifest, rdmatool, rewrite_inventory
from tests.fabric.fixtures import fabric_fixture
from tests.fabric.server import free_port, key_only_login, start_sshd
from tests.perf.test_e2e import perftest_processes

pytestmark = pytest.mark.e2e

healthy = fabric_fixture("healthy", scope="module")
BASTION = "127.0.3.1"


@pytest.fixture(scope="module")
def bastion(healthy, tmp_path_factory):
    """(address, port, log file) of a forwarding-only sshd with the fabric's host key and client key."""
    where = tmp_path_factory.mktemp("bastion")
    port = free_port()
    log = where / "sshd.log"
    config = where / "sshd_config"
    config.write_text("\n".join([
        f"ListenAddress {BASTION}:{port}",
        *key_only_login(healthy.host_key, healthy.state / "authorized_keys", where / "sshd.pid"),
        "MaxStartups 1",  # a second connection is refused while one is still unauthenticated
        "UsePAM no",
        "StrictModes no",
        "UseDNS no",
        "AllowTcpForwarding local",
        "ForceCommand /bin/false",  # a bastion forwards; it runs nothing
        "LogLevel INFO",
    ]) + "\n")
    sshd = start_sshd(config, log, BASTION, port)
    try:
        yield BASTION, port, log
    finally:
        sshd.terminate()
        sshd.wait(10)


def _behind(healthy, bastion, tmp_path: Path, hosts: list[str]) -> tuple[Path, Path]:
    """An inventory of these hosts, each reached through the bastion, and a known_hosts file that knows the bastion
    too: (inventory, known_hosts)."""
    address, port, _ = bastion

    def through_bastion(data: dict) -> None:
        data["targets"] = [{"name": name, "address": healthy.address(name), "group": "gpu",
                            "proxy_jump": f"root@{address}:{port}"} for name in hosts]

    known = tmp_path / "known_hosts"
    key_type, key_b64 = Path(f"{healthy.host_key}.pub").read_text().split()[:2]
    known.write_text(Path(healthy.known_hosts).read_text() + f"[{address}]:{port} {key_type} {key_b64}\n")
    return rewrite_inventory(healthy, tmp_path / "inv.yaml", through_bastion), known


def test_every_host_behind_a_strict_bastion_is_collected_over_one_connection(healthy, bastion, tmp_path: Path):
    log = bastion[2]
    hosts = [t["name"] for t in healthy.targets if t["kind"] == "host" and not t["unreachable"]]
    assert len(hosts) >= 4  # enough hosts at once to exceed the bastion's start-ups if each dialled it
    inventory, known = _behind(healthy, bastion, tmp_path, hosts)
    logins_before = log.read_text().count("Accepted publickey")
    result = collect(healthy, tmp_path / "b", "--interval", "0", "--forks", str(len(hosts)), inventory=inventory,
                     known_hosts=known)
    assert result.returncode == 0, result.stderr
    assert manifest(tmp_path / "b").get("failures") in (None, []), manifest(tmp_path / "b")["failures"]
    for name in hosts:
        assert outputs_of(tmp_path / "b", 0, name)["ibstat"][1].startswith("CA '"), name
    assert log.read_text().count("Accepted publickey") - logins_before == 1, log.read_text()


def test_sessions_ending_together_leave_the_bastion_connection_up(healthy, bastion, tmp_path: Path):
    """Hosts that finish at the same moment close their channels while their reader threads may still be answering
    the hosts' own close: nothing may follow a channel's CLOSE on the bastion's connection, or OpenSSH drops that
    connection ("data packet referred to nonexistent channel") and every host still behind it fails with EOFError.
    Before JumpSocket, about two collections in five lost hosts so on this fabric; three in a row must all be whole."""
    hosts = [t["name"] for t in healthy.targets if t["kind"] == "host" and not t["unreachable"]]
    inventory, known = _behind(healthy, bastion, tmp_path, hosts)
    for attempt in range(3):
        out = tmp_path / f"b{attempt}"
        result = collect(healthy, out, "--interval", "0", "--forks", str(len(hosts)), inventory=inventory,
                         known_hosts=known)
        assert result.returncode == 0, (attempt, result.stderr)
        assert manifest(out).get("failures") in (None, []), (attempt, manifest(out)["failures"])
    assert "nonexistent channel" not in bastion[2].read_text()


def test_an_unknown_bastion_key_fails_every_host_behind_it_and_the_bastion_is_dialled_once(
        healthy, bastion, tmp_path: Path):
    address, port, log = bastion
    hosts = [t["name"] for t in healthy.targets if t["kind"] == "host" and not t["unreachable"]][:3]
    inventory, _ = _behind(healthy, bastion, tmp_path, hosts)  # the bastion's key is not passed on: unknown
    connections_before = log.read_text().count("Connection closed") + log.read_text().count("Connection reset")
    result = collect(healthy, tmp_path / "b", "--interval", "0", "--forks", "3", inventory=inventory)
    assert result.returncode == 3, result.stderr  # nothing collected: inconclusive, never a pass or a fail
    assert "Traceback" not in result.stderr and f"unknown host key for [{address}]:{port}" in result.stderr
    failures = {f["target"]: f["error"] for f in manifest(tmp_path / "b")["failures"]}
    assert set(failures) == set(hosts), failures  # each host says why: its bastion's key
    assert all(f"unknown host key for [{address}]:{port}" in error for error in failures.values()), failures
    # the bastion was refused once for the collection (its key is unknown), not once per host
    after = log.read_text().count("Connection closed") + log.read_text().count("Connection reset")
    assert after - connections_before <= 1, log.read_text()


def test_perf_run_behind_a_strict_bastion_reaches_every_host_over_one_connection(healthy, bastion, tmp_path: Path):
    """`perf run` connects to its hosts at once (up to --forks) as a collection does: one bastion login for the run,
    and every perftest ended on its host before that connection is closed."""
    log = bastion[2]
    hosts = [t["name"] for t in healthy.targets if t["kind"] == "host" and not t["unreachable"]][:4]
    assert len(hosts) == 4  # two ring rounds of two pairs: a few seconds, and four connections at once
    inventory, known = _behind(healthy, bastion, tmp_path, hosts)
    logins_before = log.read_text().count("Accepted publickey")
    out = tmp_path / "perf"
    # a wide slack: a pair slowed by other work on the machine is not cut off as an error
    result = rdmatool("perf", "run", "-i", str(inventory), "--known-hosts", str(known), "--mode", "ring",
                      "--out", str(out), "--duration", "1", "--slack", "30", timeout=180)
    assert "Traceback" not in result.stderr and "unreachable" not in result.stderr, result.stderr
    attribution = json.loads((out / "attribution.json").read_text())
    assert attribution["missing"] == [] and attribution["errors"] == [], attribution
    assert result.returncode == 0, result.stderr
    assert log.read_text().count("Accepted publickey") - logins_before == 1, log.read_text()
    assert perftest_processes(healthy) == []
