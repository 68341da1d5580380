"""The Slurm wiring installed as a site installs it, for the tests of tests/slurm: `examples/slurm/install.sh` (its
three steps, with the folders moved into one temporary folder), the service user `slurm` (Debian's slurm-wlm makes
it; the test Slurm's slurmctld runs as it, so the prolog and its gate do), its SSH key authorised on the simulated
fabric and its host keys recorded by `install.sh host-keys`.

What a test cannot take from install.sh is rdmatool itself (the README's pip install into /opt/rdmatool): the test's
rdmatool is this checkout and its venv's packages, run by a Python the service user may run (the venv's own
interpreter may live in a folder only root reads). The service user must be able to read the checkout and the venv.

The health check is run as slurmd runs it (root) on the node it checks: for a simulated node, inside that node's
view of the machine (its /sys/class, its tools: tests/fabric/wrapper.py entered as its sshd would, with no SSH); a
node marked off the fabric (`Site.off_fabric`) is this machine as it is, which has no RDMA device.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "slurm"
SERVICE_USER = "slurm"
WRAPPER = REPO / "tests" / "fabric" / "wrapper.py"
RUNUSER = shutil.which("runuser") or shutil.which("runuser", path="/usr/sbin:/sbin:/usr/bin:/bin") or "runuser"


@dataclass
class Site:
    root: Path           # one folder, 0755, outside pytest's (0700) temporary folders: the service user reaches it
    fabric: object       # the simulated fabric (tests/fabric/server.Fabric)
    installed: str = ""  # slurm.env as install.sh wrote it
    authorised: str = ""  # the service user's public key, as added to the fabric's authorized_keys
    hooks: dict[str, Path] = field(default_factory=dict)

    hook_dir = property(lambda self: self.root / "etc" / "slurm" / "rdmatool")
    conf_dir = property(lambda self: self.root / "etc" / "rdmatool")
    state_dir = property(lambda self: self.root / "var" / "lib" / "rdmatool")
    log_dir = property(lambda self: self.root / "var" / "log" / "rdmatool")
    rdmatool = property(lambda self: self.root / "opt" / "rdmatool" / "bin" / "rdmatool")
    settings = property(lambda self: self.conf_dir / "slurm.env")

    def install_env(self) -> dict[str, str]:
        """install.sh's environment: every folder moved under `root`."""
        return {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "SERVICE_USER": SERVICE_USER,
                "HOOK_DIR": str(self.hook_dir), "CONF_DIR": str(self.conf_dir), "STATE_DIR": str(self.state_dir),
                "LOG_DIR": str(self.log_dir), "RDMATOOL": str(self.rdmatool)}

    def install(self, step: str = "files") -> subprocess.CompletedProcess:
        return subprocess.run(["/bin/sh", str(EXAMPLES / "install.sh"), step], capture_output=True, text=True,
                              env=self.install_env(), timeout=120)

    def configure(self, **overrides: str) -> None:
        """slurm.env as installed, with `overrides` after it (a later line wins)."""
        lines = "".join(f"{key}={value}\n" for key, value in overrides.items())
        self.settings.write_text(self.installed + "# the test's\n" + lines)

    def as_service_user(self, *argv: str, timeout: float = 120) -> subprocess.CompletedProcess:
        return subprocess.run([RUNUSER, "-u", SERVICE_USER, "--", *argv], capture_output=True, text=True,
                              timeout=timeout, env={"PATH": "/usr/bin:/bin", "COLUMNS": "200"})

    def off_fabric(self, node: str, off: bool = True) -> None:
        marker = self.root / "off-fabric" / node
        marker.parent.mkdir(exist_ok=True)
        if off:
            marker.touch()
        else:
            marker.unlink(missing_ok=True)

    def write_hooks(self, slurm_conf: Path, folder: str = "hooks") -> dict[str, Path]:
        """`prolog` and `healthcheck` in `folder`: what slurm.conf names. Each sets SLURM_CONF (the test cluster's)
        and the settings file (RDMATOOL_SLURM_CONFIG), then runs the installed script, the health check on its
        node. The latest are also `self.hooks`."""
        head = f"#!/bin/sh\nexport SLURM_CONF={slurm_conf} RDMATOOL_SLURM_CONFIG={self.settings}\n"
        self.hooks = {}
        self.hooks["prolog"] = script(self.root / folder / "prolog",
                                      head + f"exec {self.hook_dir}/prolog-slurmctld.py\n")
        check = f"{self.hook_dir}/healthcheck.py"
        nodes = "".join(f"{t['name']}) address={t['address']} ;;\n" for t in self.fabric.targets
                        if t["kind"] == "host")
        self.hooks["healthcheck"] = script(self.root / folder / "healthcheck", head + (
            f'[ -e "{self.root}/off-fabric/$SLURMD_NODENAME" ] && exec {check}\n'
            f'case "$SLURMD_NODENAME" in\n{nodes}*) exec {check} ;;\nesac\n'
            # the node's own view: what its sshd would start for a session, with no session
            f'export SSH_CONNECTION="127.0.0.1 0 $address 22" SSH_ORIGINAL_COMMAND="exec {check}"\n'
            f"exec {sys.executable} -S {WRAPPER} {self.fabric.state}\n"))
        return self.hooks


def script(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)
    return path


def service_user_python() -> str:
    """An interpreter of this venv's version that the service user may run (the venv's packages are built for it)."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    for candidate in (getattr(sys, "_base_executable", ""), f"/usr/bin/{version}", f"/usr/local/bin/{version}"):
        if candidate and subprocess.run([RUNUSER, "-u", SERVICE_USER, "--", candidate, "-c", ""],
                                        capture_output=True).returncode == 0:
            return candidate
    pytest.fail(f"no {version} the service user {SERVICE_USER} may run (the venv's is {sys._base_executable})",
                pytrace=False)


def pythonpath() -> str:
    """This checkout and this venv's packages, for a Python the service user runs."""
    return f"{REPO}:{sysconfig.get_paths()['purelib']}"


def rdmatool_launcher(path: Path) -> None:
    """A `rdmatool` at `path` that the service user may run."""
    script(path, f'#!/bin/sh\nPYTHONPATH={pythonpath()} exec {service_user_python()} -m rdmatool "$@"\n')


def install(fabric, hosts: list[str]) -> Site:
    """install.sh's three steps as the README gives them, with an inventory of `hosts` in between. Fails the test
    naming the step that failed."""
    try:
        pwd.getpwnam(SERVICE_USER)
    except KeyError:
        pytest.fail(f"no user {SERVICE_USER} (Debian's slurm-wlm makes it)", pytrace=False)
    site = Site(Path(tempfile.mkdtemp(prefix="rdmatool-slurm-site-", dir="/tmp")), fabric)
    try:
        site.root.chmod(0o755)
        rdmatool_launcher(site.rdmatool)
        # the service user may not write the checkout's __pycache__: compiled now, or its every run compiles it
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "rdmatool")], capture_output=True,
                       check=True)
        for path in (REPO / "rdmatool" / "__init__.py",
                     Path(sysconfig.get_paths()["purelib"]) / "yaml" / "__init__.py"):
            assert site.as_service_user("test", "-r", str(path)).returncode == 0, (
                f"the service user {SERVICE_USER} cannot read {path}: the checkout and its venv must be readable")
        for step in ("files", "ssh-key"):
            done = site.install(step)
            assert done.returncode == 0, f"install.sh {step}: {done.stderr}"
        site.installed = site.settings.read_text()
        # the README's "authorise this key on every node": the simulated nodes all read one authorized_keys
        site.authorised = (site.state_dir / "id_ed25519.pub").read_text().strip()
        with open(Path(fabric.state) / "authorized_keys", "a") as keys:
            keys.write(site.authorised + "\n")
        inventory = yaml.safe_load(Path(fabric.inventory_path).read_text())
        inventory["defaults"]["identity_file"] = str(site.state_dir / "id_ed25519")
        inventory["targets"] = [{"name": t["name"], "address": t["address"], "group": "gpu"}
                                for t in fabric.targets if t["name"] in hosts]
        (site.conf_dir / "inventory.yaml").write_text(yaml.safe_dump(inventory, sort_keys=False))
        done = site.install("host-keys")
        assert done.returncode == 0, f"install.sh host-keys: {done.stdout}{done.stderr}"
    except BaseException:  # a step that failed leaves neither the folder nor the authorised key behind
        uninstall(site)
        raise
    return site


def uninstall(site: Site) -> None:
    """The fabric as it was (its authorized_keys), the installed folder gone."""
    keys = Path(site.fabric.state) / "authorized_keys"
    if site.authorised and keys.exists():
        keys.write_text("".join(line + "\n" for line in keys.read_text().splitlines() if line != site.authorised))
    shutil.rmtree(site.root, ignore_errors=True)


def owner_and_mode(path: Path) -> tuple[str, str]:
    st = os.stat(path)
    return pwd.getpwuid(st.st_uid).pw_name, oct(st.st_mode & 0o7777)
