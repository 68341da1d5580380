"""A fabric to try rdmatool on: the simulated fabric (this package) started in the background from the command line,
for a newcomer without RDMA hardware (docs/try-it.md).

    sudo .venv/bin/python -m tests.fabric up [--scenario try-it|healthy|degraded|FILE] [--faults] [--dir DIR]
    python -m tests.fabric status [--dir DIR]
    sudo .venv/bin/python -m tests.fabric down [--dir DIR]

`up` starts one sshd (detached: it outlives the command) whose state is DIR itself, writes DIR/fabric.json (what
`status` and `down` read) and a gate profile, and prints the inventory, the known_hosts file and the commands to
run. `down` stops sshd and the sessions it left, and removes DIR; with nothing up it says so and exits 0.
Exit codes: 0 done, 1 (`status`) no fabric up, 2 a missing prerequisite or bad input (one line), 4 sshd would not
start.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.fabric import scenario as scenario_mod
from tests.fabric import server

DEFAULT_DIR = Path("/tmp/rdmatool-fabric")
STATE_FILE = "fabric.json"
# The gate's own counter window is 10 s and its runs 5 s: right for real counters, long for a first try. The
# simulated counters move steadily, so 2 s shows the same; the thresholds stay the gate's defaults.
GATE_PROFILE = """\
# The gate profile `python -m tests.fabric up` wrote for the simulated fabric: a short counter window and short
# bandwidth runs; every threshold is the gate's default (`rdmatool gate --help`, docs/cli.md).
counters_window_s: 2
bandwidth: {rounds: 2, duration_s: 2}
"""


class Refused(Exception):
    """A missing prerequisite or bad input: one line, exit 2."""


def missing_prerequisite() -> str | None:
    """Why the fabric cannot run here and what to do about it, in one line; None when it can."""
    if not (os.path.isfile(server.SSHD) and os.access(server.SSHD, os.X_OK)):
        return "needs OpenSSH's server (no sshd): apt-get install openssh-server"
    if shutil.which("ssh-keygen") is None:
        return "needs ssh-keygen: apt-get install openssh-client"
    if shutil.which("unshare") is None:
        return "needs unshare: apt-get install util-linux"
    if os.geteuid() != 0:
        return "needs root (each simulated host is a private mount namespace): sudo .venv/bin/python -m tests.fabric up"
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True, text=True, timeout=10)
    if probe.returncode != 0:
        return f"needs `unshare -m` (a container allowed to make mount namespaces): {probe.stderr.strip()}"
    return None


def load_scenario(name: str, faults: bool) -> scenario_mod.Scenario:
    """A named scenario (tests/fabric/scenarios/NAME.yaml) or a YAML file; `faults`: its `try_it_faults` injected."""
    import yaml

    path = Path(name) if Path(name).suffix else scenario_mod.SCENARIOS / f"{name}.yaml"
    try:
        data = yaml.safe_load(path.read_text())
        if not isinstance(data, dict):
            raise Refused(f"scenario {path}: not a YAML mapping")
        if faults:
            if not data.get("try_it_faults"):
                raise Refused(f"scenario {path}: no `try_it_faults` for --faults (try --scenario try-it)")
            data["faults"] = [*data.get("faults", []), *data["try_it_faults"]]
        sc = scenario_mod.from_dict(data)
    except FileNotFoundError:
        known = ", ".join(sorted(p.stem for p in scenario_mod.SCENARIOS.glob("*.yaml")))
        raise Refused(f"no scenario {name} (known: {known}; or a YAML file)") from None
    except (OSError, yaml.YAMLError, AssertionError, KeyError, TypeError, ValueError) as exc:
        text = f"missing key {exc}" if isinstance(exc, KeyError) else str(exc).strip() or type(exc).__name__
        raise Refused(f"scenario {path}: {text.splitlines()[0]}") from None
    if not sc.hosts:
        raise Refused(f"scenario {path}: no hosts")
    return sc


def rdmatool_command() -> str:
    """How to run rdmatool from any shell: the venv's own script (sudo's PATH does not have it), else `-m`."""
    script = Path(sys.executable).parent / "rdmatool"
    if shutil.which("rdmatool") == str(script):
        return "rdmatool"
    return shlex.quote(str(script)) if script.exists() else f"{shlex.quote(sys.executable)} -m rdmatool"


def examples(info: dict) -> list[str]:
    """The commands to try, with the flags this fabric needs (outputs in the current directory)."""
    tool = rdmatool_command()
    where = f"-i {shlex.quote(info['inventory'])} --known-hosts {shlex.quote(info['known_hosts'])}"
    host, device = info["capture"]
    return [
        f"{tool} collect {where} -o try-bundle --interval 2",
        f"{tool} diagnose try-bundle",
        f"{tool} gate {where} --profile {shlex.quote(info['gate_profile'])}",
        f"{tool} capture {where} --limit {host} --device {device} --duration 5 -o try-bundle",
        f"{tool} perf run {where} -o try-perf --duration 2",
    ]


def describe(info: dict, directory: Path) -> str:
    from rdmatool.present.hostlist import fold

    switches = ", ".join(f"{name} {platform}" for name, platform in info["switches"])
    stop = "sudo .venv/bin/python -m tests.fabric down" + ("" if directory == DEFAULT_DIR else f" --dir {directory}")
    faults: list[str] = []
    for fault in info["faults"] or ["none: healthy"]:  # a few per line, each whole ("kind target")
        if faults and len(faults[-1]) < 80:
            faults[-1] += f", {fault}"
        else:
            faults[-1:] = [f"{faults[-1]},", fault] if faults else [fault]
    return "\n".join([
        f"fabric {info['scenario']} up (sshd pid {info['pid']}, port {info['port']})",
        f"  faults:      {faults[0]}",
        *(f"               {line}" for line in faults[1:]),
        f"  hosts:       {fold(info['hosts'])}",
        f"  switches:    {switches}",
        f"  inventory:   {info['inventory']}",
        f"  known_hosts: {info['known_hosts']}",
        "try (from a directory of your own: the outputs land there):",
        *(f"  {line}" for line in examples(info)),
        f"stop it: {stop}",
    ])


def read_info(directory: Path) -> dict | None:
    try:
        return json.loads((directory / STATE_FILE).read_text())
    except (OSError, ValueError):
        return None


def sshd_alive(info: dict, directory: Path) -> bool:
    """The recorded pid is still our sshd (not a recycled pid) and not a zombie nobody reaped."""
    pid = info.get("pid")
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()  # sshd rewrites it: "sshd: /usr/sbin/sshd -D -f ..."
        status = Path(f"/proc/{pid}/status").read_text()
    except (OSError, TypeError):
        return False
    zombie = any(line.startswith("State:") and "Z" in line.split()[1] for line in status.splitlines())
    return not zombie and str(directory / "sshd_config").encode() in cmdline


def hand_over(paths: list[Path]) -> None:
    """Under sudo, give the invoking user the files rdmatool reads, so it runs without root (it logs in as root on
    the simulated targets with the key either way)."""
    uid, gid = os.environ.get("SUDO_UID"), os.environ.get("SUDO_GID")
    if uid and gid and uid.isdigit() and gid.isdigit():
        for path in paths:
            os.chown(path, int(uid), int(gid))


def install_capture(fabric: server.Fabric) -> None:
    """Put the tcpdump shim on every host, with a few RoCE packets to capture (scapy writes them; without it a
    capture is empty) and, on a host with a pfc_storm fault, the pause frames it sends."""
    from tests.fabric.shims import tcpdump

    for host in fabric.scenario.hosts:
        tcpdump.install(fabric, host.name)
    try:
        from tests.capture.build import pfc_frame, roce, write
    except ImportError:  # scapy is rdmatool's optional `capture` extra
        return
    stormed = {f.target for f in fabric.scenario.faults if f.kind == "pfc_storm"}
    ips = {h.name: next((n.ipv4 for n in h.nics if n.ipv4), "10.0.0.1") for h in fabric.scenario.hosts}
    names = list(ips)
    for i, name in enumerate(names):
        peer = ips[names[(i + 1) % len(names)]]
        packets = [roce(src=ips[name], dst=peer, psn=k, payload=1024) for k in range(40)]
        if name in stormed:
            packets += [pfc_frame({3: 65535}) for _ in range(40)]
        write(fabric.state / "captures" / f"{name}.pcap", packets)


def up(directory: Path, scenario: str, faults: bool, port: int | None) -> int:
    info = read_info(directory)
    if info is not None and sshd_alive(info, directory):
        raise Refused(f"a fabric is already up in {directory} (`status` prints it, `down` stops it)")
    if info is not None:
        down(directory, quiet=True)  # a stale one: its sshd is gone (killed, or a reboot)
    if directory.exists() and any(directory.iterdir()):
        raise Refused(f"{directory} is not empty and holds no fabric: choose another --dir")
    sc = load_scenario(scenario, faults)
    directory.mkdir(parents=True, exist_ok=True)
    try:
        fabric = server.start(sc, port=port, state=directory, detach=True)
    except (RuntimeError, subprocess.CalledProcessError) as exc:
        shutil.rmtree(directory, ignore_errors=True)
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        print(f"tests.fabric: {first}", file=sys.stderr)
        return 4
    install_capture(fabric)
    profile = directory / "gate-profile.yaml"
    profile.write_text(GATE_PROFILE)
    info = {"pid": fabric._sshd.pid, "port": fabric.port, "scenario": sc.name,  # noqa: SLF001 - our own sshd
            "faults": [f"{f.kind} {f.target}" for f in sc.faults] + [f"unreachable {n}" for n in sc.unreachable],
            "inventory": str(fabric.inventory_path), "known_hosts": str(fabric.known_hosts),
            "client_key": str(fabric.client_key), "gate_profile": str(profile),
            "hosts": [h.name for h in sc.hosts], "switches": [[s.name, s.platform] for s in sc.switches],
            "capture": next(([h.name, n.device] for h in sc.hosts for n in h.nics if n.link_layer == "Ethernet"),
                            [sc.hosts[0].name, "mlx5_0"])}
    (directory / STATE_FILE).write_text(json.dumps(info, indent=1) + "\n")
    hand_over([fabric.client_key, fabric.known_hosts, fabric.inventory_path, profile])
    print(describe(info, directory))
    return 0


def down(directory: Path, quiet: bool = False) -> int:
    info = read_info(directory)
    if info is None:
        if not quiet:
            print(f"no fabric up in {directory}")
        return 0
    pid = info["pid"]
    if sshd_alive(info, directory):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        deadline = time.time() + 5
        while sshd_alive(info, directory) and time.time() < deadline:
            time.sleep(0.05)
        if sshd_alive(info, directory):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    # Fabric.stop ends the sessions the wrappers recorded (a hanging tool sleeps 600 s) and removes the state: DIR
    fabric = server.Fabric(scenario=scenario_mod.Scenario(name=info.get("scenario", "")), state=directory,
                           port=info["port"], client_key=Path(info["client_key"]),
                           known_hosts=Path(info["known_hosts"]), inventory_path=Path(info["inventory"]))
    fabric.stop()
    if not quiet:
        print(f"fabric {info.get('scenario')} down: sshd {pid} stopped, {directory} removed")
    return 0


def status(directory: Path) -> int:
    info = read_info(directory)
    if info is None:
        print(f"no fabric up in {directory}")
        return 1
    if not sshd_alive(info, directory):
        print(f"the fabric in {directory} is down (its sshd {info['pid']} is gone): `down` removes what is left")
        return 1
    print(describe(info, directory))
    return 0


def port_number(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"not a TCP port: {text}")
    return int(text)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m tests.fabric", description="A simulated RDMA fabric to try "
                                "rdmatool on: hosts and switches of every simulated switch OS behind one sshd.")
    sub = p.add_subparsers(dest="command", required=True)
    start = sub.add_parser("up", help="start it in the background and print the inventory and commands to try")
    start.add_argument("--scenario", default="try-it",
                       help="try-it (8 hosts, one switch per OS), healthy, degraded (16 hosts) or a YAML file")
    start.add_argument("--faults", action="store_true", help="inject the scenario's try_it_faults")
    start.add_argument("--port", type=port_number, help="sshd port (default: a free one)")
    for name, text in (("status", "is it up; print the inventory and commands again"),
                       ("down", "stop sshd and its sessions, remove the directory")):
        sub.add_parser(name, help=text)
    for command in sub.choices.values():
        command.add_argument("--dir", type=Path, default=DEFAULT_DIR, help=f"state directory (default {DEFAULT_DIR})")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    directory = args.dir.resolve()
    try:
        if args.command == "status":
            return status(directory)
        if args.command == "down":
            if read_info(directory) is not None and os.geteuid() != 0:  # its sshd runs as root
                raise Refused("needs root to stop the fabric's sshd: sudo .venv/bin/python -m tests.fabric down")
            return down(directory)
        reason = missing_prerequisite()
        if reason is not None:
            raise Refused(reason)
        return up(directory, args.scenario, args.faults, args.port)
    except Refused as exc:
        print(f"tests.fabric: {exc}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as exc:  # run by an interpreter without the project's dependencies
        print(f"tests.fabric: needs the project's venv (no module {exc.name}): sudo .venv/bin/python -m tests.fabric "
              f"{args.command}", file=sys.stderr)
        return 2
