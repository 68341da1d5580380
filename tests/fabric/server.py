"""Start and stop the simulated fabric: state dir, keys, known_hosts, inventory and one real sshd.

One sshd listens on 0.0.0.0:<free port>; every simulated target is a distinct loopback address on that port
(hosts 127.0.1.x, switches 127.0.2.x), told apart by the wrapper (ForceCommand) from SSH_CONNECTION. All targets
share one host key (an sshd serves one key per type whatever the dialled address); known_hosts lists it once per
`[address]:port`, so strict host-key checking still works per target. An unreachable target is written into the
inventory with its real address but a closed port: connections are refused at once.
"""

from __future__ import annotations

import contextlib
import json
import marshal
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.fabric import fastpath, render
from tests.fabric.scenario import Fault, Scenario
from tests.fabric.shims._base import Ctx

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
SSHD = shutil.which("sshd") or "/usr/sbin/sshd"
PERFTEST = ("ib_write_bw", "ib_read_bw", "ib_send_bw", "ib_write_lat", "ib_send_lat", "ib_read_lat")
HOST_TOOLS = {"ibstat": "ibstat", "ibv_devinfo": "ibv_devinfo", "perfquery": "perfquery", "ethtool": "ethtool",
              "mlnx_qos": "mlnx_qos", "show_gids": "show_gids", "lldpctl": "lldpctl", "iblinkinfo": "iblinkinfo", "nvidia-smi": "nvidia_smi",
              **{t: "perftest" for t in PERFTEST}, "mpirun": "nccl_tests", "all_reduce_perf": "nccl_tests"}
# The subnet sweep's tools (infiniband-diags), on the hosts of a simulated InfiniBand subnet only (shims/ibsweep.py).
SWEEP_TOOLS = {"iblinkinfo": "iblinkinfo", "sminfo": "ibsweep", "ibnetdiscover": "ibsweep", "ibqueryerrors": "ibsweep"}
HOST_TOOLS.update(SWEEP_TOOLS)
SWITCH_TOOLS = {"sonic": {"show": "sonic_show", "lldpctl": "lldpctl"},
                "cumulus": {"nv": "cumulus_nv", "lldpctl": "lldpctl"}}
GARBAGE = "\\033[31m#@!%% segfault?? 0xdeadbeef\\n\\t<<<< corrupted output >>>>\\n~~~ 17 ?? ::: \\007\\n"  # printf(1)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tools_of(spec: dict) -> dict[str, str]:
    """The tools installed on a target: the subnet sweep's only on the hosts of a simulated InfiniBand subnet
    (elsewhere the host script finds none, as on a host without infiniband-diags' subnet tools)."""
    if spec["kind"] != "host":
        return SWITCH_TOOLS.get(spec["platform"], {})
    return HOST_TOOLS if spec.get("ib_subnet") else {k: v for k, v in HOST_TOOLS.items() if k not in SWEEP_TOOLS}


def write_state(scenario: Scenario, state: Path, epoch: float | None = None) -> dict:
    """Write everything the wrapper and the shims read; (re)callable: set_fault rewrites the state in place."""
    eff = scenario.effective()
    shutil.rmtree(state / "reads", ignore_errors=True)  # LLDP reads counted for a changing neighbour: a new count
    for sub in ("targets", "sys", "bin", "launchers", "tmp", "pids", "perftest", "out"):
        (state / sub).mkdir(parents=True, exist_ok=True)
    if epoch is None:
        epoch_file = state / "epoch"
        epoch = float(epoch_file.read_text()) if epoch_file.exists() else time.time()
        epoch_file.write_text(repr(epoch))
    modules = {**HOST_TOOLS, **SWITCH_TOOLS["sonic"], **SWITCH_TOOLS["cumulus"]}
    for tool, module in modules.items():
        launcher = state / "launchers" / tool
        launcher.write_text(
            f"#!{sys.executable} -S\nimport sys\nsys.path.insert(0, {str(REPO)!r})\n"
            f"from tests.fabric.shims._base import run\nsys.exit(run({module!r}, {tool!r}, sys.argv[1:]))\n")
        launcher.chmod(0o755)
    for address, spec in eff["targets"].items():
        spec["epoch"] = epoch
        (state / "targets" / f"{address}.json").write_text(json.dumps(spec, indent=1))  # for people
        (state / "targets" / f"{address}.bin").write_bytes(marshal.dumps(spec))  # for the wrapper and shims
        sysdir = state / "sys" / spec["name"]
        shutil.rmtree(sysdir, ignore_errors=True)
        if spec["platform"] in ("linux", "sonic", "cumulus"):
            render.static(spec, sysdir)
        bindir = state / "bin" / spec["name"]
        shutil.rmtree(bindir, ignore_errors=True)
        bindir.mkdir()
        faults = spec["tools"]
        fast = {}
        if spec["kind"] == "host":
            ctx = Ctx(str(state), address, spec, "", time.time())
            fast = fastpath.write_static(ctx, str(state / "out" / spec["name"]), str(state / "launchers"))
            _host_clock(bindir / "date")
        for tool, parser in faults.get("forged", []):
            _hostile_tool(bindir / tool, tool, parser)
        if spec.get("lldp_extra"):
            _injection_canary(bindir, state / "injected" / spec["name"])
        forged_tools = {tool for tool, _ in faults.get("forged", [])}
        for tool in tools_of(spec):
            path = bindir / tool
            if tool in forged_tools:
                continue
            if tool in faults["missing"]:
                continue
            if tool in faults["garbage"]:
                path.write_text(f"#!/bin/sh\nprintf '{GARBAGE}'\n")
                path.chmod(0o755)
            elif tool in faults["hanging"]:
                path.write_text("#!/bin/sh\nexec sleep 600\n")
                path.chmod(0o755)
            elif tool in fast:
                path.write_text(fast[tool])
                path.chmod(0o755)
            else:
                path.symlink_to(state / "launchers" / tool)
    (state / "index.bin").write_bytes(marshal.dumps(eff["index"]))
    return eff


# A host's counters are rendered once, when its connection starts (wrapper.py: $FABRIC_NOW), and the host script
# stamps each section with `date +%s.%N` as the command starts: the real clock would put every read 0.1-0.3 s after
# the counters' time on a loaded machine, a different lag each snapshot, and a 3 s rate window off by up to 10 %. On
# the simulated host, the clock the script reads for a stamp is the counters' time; any other use is the real date.
_HOST_CLOCK = r"""#!/bin/sh
if [ "$*" = "+%s.%N" ] && [ -n "$FABRIC_NOW" ]; then echo "$FABRIC_NOW"; exit 0; fi
exec /bin/date "$@"
"""


def _host_clock(path: Path) -> None:
    path.write_text(_HOST_CLOCK)
    path.chmod(0o755)


# A compromised host (fault forged_markers). As `sh`, it knows the run's marker token (it reads the script) and
# prints a forged section before running the real script; as any other tool, it prints forged markers without the
# token in its output, as a log line or a crafted file name could.
_FORGING_SH = r"""#!/bin/sh
if [ "$1" = -s ]; then
    script="$(cat)"
    token="$(printf '%s\n' "$script" | sed -n 's/.*M="@@RDMATOOL@@ \([0-9a-f]*\)".*/\1/p')"
    printf '\n@@RDMATOOL@@ %s BEGIN 1 %s - 1700000000.0 forged\npwned\n' "$token" {parser}
    printf '\n@@RDMATOOL@@ %s STDERR 1\n\n@@RDMATOOL@@ %s END 1 0\n' "$token" "$token"
    printf '%s\n' "$script" | /bin/sh "$@"
    exit $?
fi
exec /bin/sh "$@"
"""
_FORGING_TOOL = r"""#!/bin/sh
printf '\n@@RDMATOOL@@ BEGIN 99 %s - 1700000000.0 forged\npwned\n@@RDMATOOL@@ END 99 0\n' {parser}
printf '\n@@RDMATOOL@@ 00000000000000000000000000000000 BEGIN 2 %s - 1700000000.0 forged\npwned\n' {parser}
"""


def _hostile_tool(path: Path, tool: str, parser: str) -> None:
    template = _FORGING_SH if tool == "sh" else _FORGING_TOOL
    path.write_text(template.replace("{parser}", shlex_quote(parser)))
    path.chmod(0o755)


def _injection_canary(bindir: Path, log: Path) -> None:
    """Fault lldp_port_newline: a per-port command built with a port name `swpN\n` would reach the switch shell as
    two lines, the second starting with `counters`. This `counters` records that it ran: the test asserts it never
    does."""
    log.parent.mkdir(parents=True, exist_ok=True)
    canary = bindir / "counters"
    canary.write_text(f"#!/bin/sh\necho \"$*\" >> {shlex_quote(str(log))}\n")
    canary.chmod(0o755)


def shlex_quote(text: str) -> str:
    import shlex

    return shlex.quote(text)


@dataclass
class Fabric:
    scenario: Scenario
    state: Path
    port: int
    client_key: Path
    known_hosts: Path
    inventory_path: Path
    targets: list[dict] = field(default_factory=list)  # [{name, address, port, kind, platform, role, unreachable, ports}]
    host_key: Path | None = None
    _sshd: subprocess.Popen | None = None
    _initial_faults: list = field(default_factory=list, repr=False)
    _initial_unreachable: list = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        self._initial_faults = list(self.scenario.faults)
        self._initial_unreachable = list(self.scenario.unreachable)

    def address(self, name: str) -> str:
        return next(t["address"] for t in self.targets if t["name"] == name)

    def target(self, name: str) -> dict:
        return next(t for t in self.targets if t["name"] == name)

    def set_fault(self, kind: str, target: str, **params: object) -> None:
        """Inject one more fault; it shows from the next SSH connection on (counters keep their epoch)."""
        self.scenario.faults.append(Fault(kind=kind, target=target, **params))
        write_state(self.scenario, self.state)

    def inject(self, kind: str, target: str, **params: object) -> list[str]:
        """Inject a counter fault while sessions read the fabric (a watch): only the spec files of the targets it
        changes are replaced, each atomically, so a command loading one sees the old spec or the new one; set_fault
        rewrites every target's files, sysfs tree and tools in place, which a command running meanwhile can find
        half written. Seen by every command that loads its spec (the shims, the SONiC / Cumulus CLIs), not by the
        sysfs trees or the Onyx / EOS / NX-OS CLI sessions already open. The addresses rewritten are returned."""
        before = self.scenario.effective()["targets"]
        self.scenario.faults.append(Fault(kind=kind, target=target, **params))
        epoch = float((self.state / "epoch").read_text())
        changed = []
        for address, spec in self.scenario.effective()["targets"].items():
            if spec == before[address]:
                continue
            spec["epoch"] = epoch
            for name, data in ((f"{address}.json", json.dumps(spec, indent=1).encode()),
                               (f"{address}.bin", marshal.dumps(spec))):
                tmp = self.state / "targets" / f".{name}.tmp"
                tmp.write_bytes(data)
                os.replace(tmp, self.state / "targets" / name)
            changed.append(address)
        return changed

    def clear_faults(self) -> None:
        self.scenario.faults.clear()
        self.scenario.unreachable.clear()
        write_state(self.scenario, self.state)

    def reset(self) -> None:
        """Back to the scenario as it was started (its own faults and unreachable targets): what a test module that
        shares this fabric with others leaves behind."""
        self.scenario.faults[:] = self._initial_faults
        self.scenario.unreachable[:] = self._initial_unreachable
        write_state(self.scenario, self.state)

    def stop(self) -> None:
        if self._sshd is not None and self._sshd.poll() is None:
            self._sshd.terminate()
            try:
                self._sshd.wait(5)
            except subprocess.TimeoutExpired:
                self._sshd.kill()
                self._sshd.wait()
        # sessions outlive the listener (a hanging tool sleeps 600 s): end the ones our wrappers recorded
        for pidfile in (self.state / "pids").glob("*"):
            for pgid in {int(x) for x in pidfile.read_text().split()}:
                if pgid > 1 and pgid != os.getpgid(0):
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.killpg(pgid, signal.SIGKILL)
        shutil.rmtree(self.state, ignore_errors=True)


def _keygen(path: Path, comment: str) -> str:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path)], check=True)
    return path.with_suffix(".pub").read_text().strip()


def _compress(entries: list[dict]) -> list[dict]:
    """Fold runs like gpu01..gpu11 at 127.0.1.1..11 into one hostlist entry `gpu[01-11]` / `127.0.1.[1-11]`."""
    out: list[dict] = []
    run: list[dict] = []

    def split(e: dict) -> tuple[str, int, int, str, int] | None:
        m = re.fullmatch(r"(.*?)(\d+)", e["name"])
        a = re.fullmatch(r"(.*\.)(\d+)", e["address"])
        if not m or not a:
            return None
        return m.group(1), int(m.group(2)), len(m.group(2)), a.group(1), int(a.group(2))

    def flush() -> None:
        if len(run) == 1:
            out.append(run[0])
        elif run:
            s0, s1 = split(run[0]), split(run[-1])
            out.append({**run[0], "name": f"{s0[0]}[{s0[1]:0{s0[2]}d}-{s1[1]:0{s1[2]}d}]",
                        "address": f"{s0[3]}[{s0[4]}-{s1[4]}]"})
        run.clear()

    for e in entries:
        if run and "port" not in e and "port" not in run[-1] and e["group"] == run[-1]["group"]:
            a, b = split(run[-1]), split(e)
            if a and b and a[0] == b[0] and a[2] == b[2] and a[3] == b[3] and b[1] == a[1] + 1 and b[4] == a[4] + 1:
                run.append(e)
                continue
        flush()
        run.append(e)
    flush()
    return out


def write_inventory(fabric: Fabric, path: Path) -> None:
    import yaml

    groups: dict[str, dict] = {"gpu": {"kind": "host", "platform": "linux", "role": "compute"},
                               "stor": {"kind": "host", "platform": "linux", "role": "storage"}}
    entries = []
    for t in fabric.targets:
        if t["kind"] == "host":
            group = "gpu" if t["role"] == "compute" else "stor"
        else:
            group = f"leaf_{t['platform']}"
            groups[group] = {"kind": "switch", "platform": t["platform"]}
        e = {"name": t["name"], "address": t["address"], "group": group}
        if t["ports"]:  # switch ports the per-port show commands expand over
            e["ports"] = t["ports"]
        if t["port"] != fabric.port:
            e["port"] = t["port"]
        entries.append(e)
    doc = {"defaults": {"user": "root", "port": fabric.port, "identity_file": str(fabric.client_key)},
           "groups": groups, "targets": _compress(entries)}
    path.write_text(yaml.safe_dump(doc, sort_keys=False, default_flow_style=None, width=120))


def start(scenario: Scenario, workdir: Path | None = None, port: int | None = None, *, state: Path | None = None,
          detach: bool = False) -> Fabric:
    """Write the state, keys, known_hosts and inventory, start sshd and wait until it accepts connections.

    `state`: an empty directory the caller made to hold the fabric itself (else a new one under `workdir`); `detach`:
    sshd outlives this process (`python -m tests.fabric up`, see start_sshd)."""
    if state is None:
        base = Path(workdir) if workdir else Path("/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir())
        state = Path(tempfile.mkdtemp(prefix="rdma-fabric-", dir=base))
    os.chmod(state, 0o755)
    try:
        return _start(scenario, state, port or free_port(), detach)
    except BaseException:
        shutil.rmtree(state, ignore_errors=True)
        raise


def _start(scenario: Scenario, state: Path, port: int, detach: bool = False) -> Fabric:
    eff = write_state(scenario, state)
    host_pub = _keygen(state / "ssh_host_ed25519_key", "rdma-fabric-host")
    client_pub = _keygen(state / "client_key", "rdma-fabric-client")
    (state / "authorized_keys").write_text(client_pub + "\n")
    closed = free_port()
    targets = [{"name": s["name"], "address": a, "port": closed if s.get("unreachable") else port,
                "kind": s["kind"], "platform": s["platform"], "role": s.get("role"),
                "unreachable": bool(s.get("unreachable")), "ports": [p["name"] for p in s.get("ports", [])]}
               for a, s in eff["targets"].items()]
    key_type, key_b64 = host_pub.split()[:2]
    known = state / "known_hosts"
    known.write_text("".join(f"[{t['address']}]:{t['port']} {key_type} {key_b64}\n" for t in targets))
    fabric = Fabric(scenario=scenario, state=state, port=port, client_key=state / "client_key", known_hosts=known,
                    inventory_path=state / "inventory.yaml", targets=targets, host_key=state / "ssh_host_ed25519_key")
    write_inventory(fabric, fabric.inventory_path)
    config = state / "sshd_config"
    config.write_text("\n".join([
        f"ListenAddress 0.0.0.0:{port}",
        *key_only_login(state / "ssh_host_ed25519_key", state / "authorized_keys", state / "sshd.pid"),
        "MaxStartups 1000:30:1000",
        "MaxSessions 100",
        "UsePAM no",
        "StrictModes no",
        "UseDNS no",
        "PermitUserEnvironment no",
        # sshd runs ForceCommand through the login shell (root's: bash), and bash sources ~/.bashrc when sshd starts
        # it as a top-level shell. A machine's own dotfiles (a pyenv init forks some 200 processes) would then be part
        # of every simulated connection, and of every benchmark figure. SHLVL=1 makes that bash a nested one: no rc.
        "SetEnv SHLVL=1",
        "PrintMotd no",
        "PrintLastLog no",
        "X11Forwarding no",
        "AllowTcpForwarding local",  # direct-tcpip only: lets the tests reach a target through a ProxyJump bastion
        "LogLevel ERROR",
        f"ForceCommand {sys.executable} -S {HERE / 'wrapper.py'} {state}",
    ]) + "\n")
    try:
        fabric._sshd = start_sshd(config, state / "sshd.log", "127.0.1.1", port, detach=detach)
    except RuntimeError:
        fabric.stop()
        raise
    return fabric


def key_only_login(host_key: Path, authorized_keys: Path, pid_file: Path) -> list[str]:
    """sshd_config lines every simulated server shares: root from loopback, by key only, no PAM."""
    return [
        f"HostKey {host_key}",
        f"PidFile {pid_file}",
        f"AuthorizedKeysFile {authorized_keys}",
        "AllowUsers root@127.0.0.0/8",
        "PubkeyAuthentication yes",
        "PasswordAuthentication no",
        "KbdInteractiveAuthentication no",
        "PermitRootLogin prohibit-password",
    ]


def start_sshd(config: Path, log: Path, address: str, port: int, detach: bool = False) -> subprocess.Popen:
    """sshd -D with `config`, returned once it greets on address:port (RuntimeError with its log if it cannot).

    `detach`: in a session of its own (a terminal's hang-up or Ctrl-C never reaches it) and holding none of our
    output streams (whoever reads them, e.g. a test capturing the output of `up`, sees them end when we exit)."""
    os.makedirs("/run/sshd", mode=0o755, exist_ok=True)
    quiet = {"start_new_session": True, "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL} if detach else {}
    sshd = subprocess.Popen([SSHD, "-D", "-f", str(config), "-E", str(log)], stdin=subprocess.DEVNULL, **quiet)
    deadline = time.time() + 10
    while True:
        if sshd.poll() is not None:
            raise RuntimeError(f"sshd exited with {sshd.returncode}: {log.read_text() if log.exists() else ''}")
        try:
            with socket.create_connection((address, port), timeout=0.2) as s:
                if s.recv(4).startswith(b"SSH-"):
                    return sshd
        except OSError:
            if time.time() > deadline:
                sshd.terminate()
                raise RuntimeError(f"sshd did not start listening on {address}:{port}") from None
            time.sleep(0.05)
