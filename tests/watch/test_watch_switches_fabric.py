"""End to end over the real sshd: `rdmatool watch` with the inventory's `links:` reads the leaves cabled to the
watched hosts every --switch-every intervals, over the switch CLI (netmiko, one session kept open), and keeps the
ports facing the watched hosts only. One run, two phases (a second run would double the test's time):

- healthy: silent, the leaf's series in its textfile with per-second rates (taken over the two intervals between
  reads, not per interval), none for its ports facing hosts nobody watches; a leaf that refuses the connection is a
  gap, and the summary counts the switches read ("1 of 2 switches");
- then the leaf's queue toward gpu01 starts dropping (fault switch_port_drops, injected into the running fabric):
  one finding names the switch, the port, the counter and the class.

Beside it, without the fabric: the switches the readers are built for (--exclude leaves one out), a switch that
takes the connection and never answers (a gap within the interval's deadline; a host too, without a traceback), and a switch's textfile between two
of its reads.
"""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from rdmatool.cli.watch_cmd import _switch_readers
from rdmatool.model import Platform, Target, TargetKind
from rdmatool.watch.history import Shape
from rdmatool.watch.loop import Watch, WatchOptions
from rdmatool.watch.switches import SwitchReader
from tests.e2e.helpers import REPO, rewrite_inventory
from tests.fabric.fixtures import fabric_fixture
from tests.fabric.server import free_port
from tests.watch.fakes import FakeHost, steady
from tests.watch.test_switches import _Session

healthy = fabric_fixture("healthy", scope="module")
# gpu01 and gpu06 on leaf01 (SONiC: Ethernet0, Ethernet4; its Ethernet8 and Ethernet12 face gpu11 and stor04, not
# watched), gpu02 on leaf02 (refused here)
WATCHED = "gpu01,gpu06,gpu02"
READS_BEFORE = 4  # leaf01 reads before its drops start: 6 flat intervals at --switch-every 2 (a growth's baseline)
ECN = re.compile(r'^rdmatool_ecn_marked_packets_total\{port="Ethernet0",priority="3",target="leaf01"\} (\S+)$', re.M)


def _inventory(fabric, path: Path) -> Path:
    """The fabric's inventory with its cabling as `links:`, leaf02 on a closed port (connection refused)."""
    def change(data: dict) -> None:
        data["links"] = [{"host": link.host, "nic": link.nic, "switch": link.switch, "switch_port": link.switch_port}
                         for link in fabric.scenario.links]
        next(t for t in data["targets"] if t["name"] == "leaf02")["port"] = free_port()

    return rewrite_inventory(fabric, path, change)


def _rate(text: str, family: str, port: str) -> float:
    found = re.search(rf'^rdmatool_{family}_per_second\{{port="{port}",priority="3",target="leaf01"\}} (\S+)$',
                      text, re.M)
    assert found, (family, port, text)
    return float(found[1])


@pytest.mark.e2e
def test_watch_reads_the_facing_leaf_ports_every_n_intervals_and_names_a_port_that_starts_dropping(
        healthy, tmp_path: Path) -> None:
    textfiles = tmp_path / "textfiles"
    textfiles.mkdir()
    args = ["watch", "-i", str(_inventory(healthy, tmp_path / "inventory.yaml")), "--known-hosts",
            str(healthy.known_hosts), "--limit", WATCHED, "--interval", "1", "--switch-every", "2", "--duration", "0",
            "--timeout", "10", "--textfile", str(textfiles)]
    process = subprocess.Popen([sys.executable, "-m", "rdmatool", *args], cwd=REPO, text=True,
                               env={**os.environ, "PYTHONPATH": str(REPO)}, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    lines: queue.Queue[str] = queue.Queue()
    reader = threading.Thread(target=lambda: [lines.put(line) for line in process.stdout], daemon=True)
    reader.start()
    try:
        # Healthy: leaf01's file after each of its reads (each read a new ECN total); its drops start after the
        # READS_BEFORE-th, so the watch has a flat baseline whatever the machine's load made of its start.
        reads, leaf, until = set(), "", time.monotonic() + 30
        while len(reads) < READS_BEFORE and time.monotonic() < until and process.poll() is None:
            text = _read(textfiles / "rdmatool-leaf01.prom")
            if ECN.search(text):
                reads.add(ECN.search(text)[1])
                leaf = text if "_per_second{" in text else leaf
            time.sleep(0.1)
        assert len(reads) >= READS_BEFORE, (_read(textfiles / "rdmatool-leaf01.prom"), process.poll())
        assert lines.empty(), lines.get()  # a healthy fabric is silent
        assert healthy.inject("switch_port_drops", "gpu01", nic="mlx5_1", value=time.time()) == [
            healthy.address("leaf01")]
        event = lines.get(timeout=20)  # the growth: 3 intervals growing after the 6 flat, some 6 s
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
        try:
            _, stderr = process.communicate(timeout=15)
        finally:
            if process.poll() is None:
                process.kill()
    reader.join(5)
    events = [json.loads(event), *(json.loads(line) for line in _drain(lines))]
    assert process.returncode == 0, stderr  # a warning: the run ends 0

    # The leaf's series: the ports facing watched hosts, their per-second rates (40 marks and 2 pause frames a
    # second on priority 3 in the fabric's healthy profile; per interval, read every second one, would be twice; the
    # margin is a loaded machine's: each command runs some 0.1-0.3 s after the read's time, a different lag each read).
    assert _rate(leaf, "ecn_marked_packets", "Ethernet0") == pytest.approx(40, rel=0.25)
    assert _rate(leaf, "ecn_marked_packets", "Ethernet4") == pytest.approx(40, rel=0.25)
    assert _rate(leaf, "tx_pause_frames", "Ethernet0") == pytest.approx(2, abs=0.75)
    assert 'rdmatool_queue_drops_per_second{port="Ethernet4",priority="3",target="leaf01"} 0.0' in leaf
    every = "".join(_read(f) for f in textfiles.iterdir())
    assert 'port="Ethernet8"' not in every and 'port="Ethernet12"' not in every  # gpu11's, stor04's: not watched
    assert 'target="leaf01"' not in _read(textfiles / "rdmatool-gpu01.prom")  # a switch's series in its own file
    assert "leaf02: not read (" in stderr
    assert "3 of 3 hosts read, 1 of 2 switches" in stderr and "(stopped)" in stderr, stderr

    # The fault: the switch, its port, the counter, the class, the rate a second (5,000, less in the two intervals the
    # drops started in; per interval it would be twice).
    assert [(e["event"], e["rule"], e["target"], e["entity"], e["counter"], e["priority"]) for e in events] == [
        ("finding", "watch_counter_starts_growing", "leaf01", "Ethernet0", "queue_drops", 3)], events
    assert 1000 < events[0]["growth_rate"] <= 6500, events[0]


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except FileNotFoundError:
        return ""


def _drain(lines: queue.Queue) -> list[str]:
    out = []
    while not lines.empty():
        out.append(lines.get())
    return out


INVENTORY = """\
defaults: {user: root}
groups:
  gpu: {kind: host, platform: linux}
  sonic: {kind: switch, platform: sonic}
  cumulus: {kind: switch, platform: cumulus}
targets:
  - {name: "gpu[01-03]", address: "127.0.9.[1-3]", group: gpu}
  - {name: leaf01, address: 127.0.9.11, group: sonic, ports: [Ethernet0, Ethernet4, Ethernet8]}
  - {name: leaf02, address: 127.0.9.12, group: cumulus, ports: [swp1, swp2]}
  - {name: leaf03, address: 127.0.9.13, group: sonic, ports: [Ethernet0]}
links:
  - {host: gpu01, nic: mlx5_1, switch: leaf01, switch_port: Ethernet0}
  - {host: gpu02, nic: mlx5_1, switch: leaf01, switch_port: Ethernet4}
  - {host: gpu03, nic: mlx5_1, switch: leaf01, switch_port: Ethernet8}
  - {host: gpu01, nic: mlx5_0, switch: leaf02, switch_port: swp1}
  - {host: gpu03, nic: mlx5_0, switch: leaf03, switch_port: Ethernet0}
"""


def test_the_switches_read_are_those_cabled_to_a_watched_host_on_those_ports_less_the_excluded(
        tmp_path: Path) -> None:
    path = tmp_path / "inventory.yaml"
    path.write_text(INVENTORY)
    hosts = [Target(name, "127.0.9.1") for name in ("gpu01", "gpu02")]

    def read(exclude: str | None) -> dict[str, list[str]]:
        readers = _switch_readers(str(path), hosts, 2, 10, None, False, exclude)
        assert {r.every for r in readers} == {2}
        return {r.target.name: r.ports for r in readers}

    assert read(None) == {"leaf01": ["Ethernet0", "Ethernet4"], "leaf02": ["swp1"]}  # leaf03: gpu03's, not watched
    assert read("leaf02") == {"leaf01": ["Ethernet0", "Ethernet4"]}
    assert read("@cumulus,gpu01") == {"leaf01": ["Ethernet0", "Ethernet4"]}  # a host's name: the hosts' business


def test_a_switch_that_takes_the_connection_and_never_answers_is_a_gap_within_the_deadline(tmp_path: Path) -> None:
    """A hung sshd or a pegged management CPU: the kernel completes the connection, no SSH banner ever comes. The
    read gives up at the interval's deadline (it waited the fixed 10 s connect timeout, every interval of its turn
    and the hosts' readings with it)."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(4)  # never accepted: the connection completes in the kernel's backlog, nothing is said
        path = tmp_path / "inventory.yaml"
        path.write_text(INVENTORY.replace("address: 127.0.9.11,", f"address: 127.0.0.1, port: {silent.getsockname()[1]},"))
        (tmp_path / "known_hosts").write_text("")
        [reader] = _switch_readers(str(path), [Target("gpu01", "127.0.9.1")], 1, 10, str(tmp_path / "known_hosts"),
                                   False, "leaf02")
        t0 = time.monotonic()
        reading, error = reader.read(t0 + 1.0)
        took = time.monotonic() - t0
    assert reading is None and error, (reading, error)
    assert took < 3.5, took  # the deadline, at least a second for the set-up; was 10 s


_SILENT_READS = """
import sys, time
from rdmatool.cli.watch_cmd import _opener, _switch_readers
from rdmatool.model import Target
from rdmatool.watch.light import HostReader

port, inventory, known = int(sys.argv[1]), sys.argv[2], sys.argv[3]
host = HostReader(Target("gpu01", "127.0.0.1", port=port), _opener(False, known, False))
[switch] = _switch_readers(inventory, [Target("gpu01", "127.0.9.1")], 1, 10, known, False, "leaf02")
for reader in (host, switch):
    t0 = time.monotonic()
    reading, error = reader.read(t0 + 1.0)
    print(reader.target.name, reading is None and bool(error), round(time.monotonic() - t0, 1))
"""


def test_a_host_and_a_switch_that_never_answer_are_gaps_within_the_deadline_said_without_tracebacks(
        tmp_path: Path) -> None:
    """A host's session set-up ends at the interval's deadline as a switch's does (it was a fixed 10 s), and a failed
    handshake is the reader's one line, never paramiko's traceback on stderr (what a device does is not put in front
    of the operator as a crash). In a process of its own: pytest's log capture would hide a traceback."""
    (tmp_path / "known_hosts").write_text("")
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(4)
        port = silent.getsockname()[1]
        path = tmp_path / "inventory.yaml"
        path.write_text(INVENTORY.replace("address: 127.0.9.11,", f"address: 127.0.0.1, port: {port},"))
        done = subprocess.run([sys.executable, "-c", _SILENT_READS, str(port), str(path), str(tmp_path / "known_hosts")],
                              cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True,
                              timeout=60)
    assert done.returncode == 0, done.stderr
    lines = [line.split() for line in done.stdout.splitlines()]
    assert [(name, gap) for name, gap, _ in lines] == [("gpu01", "True"), ("leaf01", "True")], done.stdout
    assert all(float(took) < 3.5 for _, _, took in lines), done.stdout
    assert "Traceback" not in done.stderr and "Exception" not in done.stderr, done.stderr


def test_a_switch_between_two_of_its_reads_keeps_its_series_in_its_textfile(tmp_path: Path) -> None:
    leaf = Target("leaf01", "127.0.2.1", kind=TargetKind.SWITCH, platform=Platform("sonic"))
    reader = SwitchReader(leaf, ["Ethernet0"], _Session, every=2)
    stop, ticks = threading.Event(), iter(range(4))

    def clock() -> float:
        n = next(ticks)
        if n == 3:
            stop.set()  # after interval 3: the switch read in intervals 0 and 2, not in 3
        return 1_000_000.0 + 10.0 * n

    watch = Watch([FakeHost("gpu01", steady), reader], WatchOptions(interval_s=0, duration_s=0, textfile=tmp_path,
                                                                     shape=Shape(40, 8, 5)),
                  [], lambda event: None, lambda line: None, clock=clock)
    # stopped while an interval overran (no time left to wait): said as stopped all the same
    assert watch.run(stop).stopped
    leaf_file = (tmp_path / "rdmatool-leaf01.prom").read_text()
    assert 'rdmatool_rx_pause_frames_total{port="Ethernet0",priority="3",target="leaf01"}' in leaf_file
    # its rate over its last two reads stands too, and the fleet file counts it as not read in this interval
    assert 'rdmatool_rx_pause_frames_per_second{port="Ethernet0",priority="3",target="leaf01"}' in leaf_file
    assert "rdmatool_watch_targets_read 1.0" in (tmp_path / "rdmatool.prom").read_text()
