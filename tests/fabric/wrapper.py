"""sshd ForceCommand of the simulated fabric: `python -S wrapper.py <state dir>`.

Learns the dialled address from the third field of SSH_CONNECTION, loads that target's spec from the state dir
and plays it:
- host, SONiC or Cumulus switch: writes the time-dependent counter files, /proc/loadavg and /proc/pressure into a
  per-connection temp dir, enters a private mount namespace (unshare(CLONE_NEWNS)), bind-mounts the target's
  static /sys/class tree and those files, prepends the target's shim dir to PATH and runs
  `sh -c "$SSH_ORIGINAL_COMMAND"` (or an interactive `sh -i` with the switch's prompt when there is no command);
  waits, removes the temp dir and exits with the command's status;
- Onyx, EOS, NX-OS switch: runs fakecli.py (interactive CLI, or the one command given).

Runs on every connection, so it keeps to cheap imports (marshal, not json; fork/exec, not subprocess).
"""

from __future__ import annotations

import ctypes
import marshal
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from tests.fabric import render  # noqa: E402

CLONE_NEWNS = 0x00020000
MS_BIND, MS_REC, MS_PRIVATE = 4096, 16384, 1 << 18
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
PROMPTS = {"linux": "root@{name}:~# ", "sonic": "admin@{name}:~$ ", "cumulus": "cumulus@{name}:mgmt:~$ "}


def _fail(message: str, code: int = 255) -> int:
    sys.stderr.write(message + "\n")
    return code


def _enter_namespace(binds: list[tuple[str, str]]) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mount.argtypes = (ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_void_p)
    if libc.unshare(CLONE_NEWNS) != 0:
        raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWNS) failed")
    if libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None) != 0:
        raise OSError(ctypes.get_errno(), "mount --make-rprivate / failed")
    for src, dst in binds:
        if libc.mount(src.encode(), dst.encode(), None, MS_BIND, None) != 0:
            raise OSError(ctypes.get_errno(), f"bind mount {src} -> {dst} failed")


def _rmtree(path: str) -> None:
    for root, dirs, files in os.walk(path, topdown=False):
        for name in files:
            os.unlink(os.path.join(root, name))
        for name in dirs:
            os.rmdir(os.path.join(root, name))
    os.rmdir(path)


def _spawn(args: list[str], env: dict, new_group: bool) -> int:
    pid = os.fork()
    if pid == 0:  # child
        try:
            if new_group:
                os.setpgid(0, 0)
            os.chdir("/root" if os.path.isdir("/root") else "/")
            os.execvpe(args[0], args, env)
        finally:
            os._exit(127)
    return pid


def main(argv: list[str]) -> int:
    state = argv[1]
    conn = os.environ.get("SSH_CONNECTION", "").split()
    if len(conn) < 3:
        return _fail("fabric wrapper: SSH_CONNECTION not set")
    address = conn[2]
    try:
        with open(f"{state}/targets/{address}.bin", "rb") as f:
            spec = marshal.load(f)
    except FileNotFoundError:
        return _fail(f"fabric wrapper: no simulated target at {address}")
    if spec.get("unreachable"):
        return _fail(f"ssh: connect to host {address}: No route to host")
    command = os.environ.get("SSH_ORIGINAL_COMMAND")
    env = {k: v for k, v in os.environ.items() if k != "SSH_ORIGINAL_COMMAND"}
    env.update(FABRIC_STATE=state, FABRIC_TARGET=address, LC_ALL="C",
               PATH=f"{state}/bin/{spec['name']}:{SYSTEM_PATH}")
    platform = spec["platform"]
    if command is None and spec.get("slow_login"):  # fault slow_login: the switch's CLI starts late
        time.sleep(spec["slow_login"])
    if platform in ("onyx", "eos", "nxos"):
        args = [sys.executable, "-S", os.path.join(os.path.dirname(os.path.abspath(__file__)), "fakecli.py"),
                state, address]
        if command is not None:
            args.append(command)
        os.execve(sys.executable, args, env)

    tmp = f"{state}/tmp/{spec['name']}-{os.getpid()}"
    pidfile = f"{state}/pids/{os.getpid()}"
    os.mkdir(tmp)
    try:
        now = time.time()
        from tests.fabric.counters import with_load  # what an incast load added (tests/fabric/congestion.py)

        with_load(spec, state)
        binds = [(f"{state}/sys/{spec['name']}", "/sys/class")]
        binds += render.dynamic(spec, tmp, spec["epoch"], now)
        if spec["kind"] == "host":  # counter outputs of the fast-path tool scripts (see fastpath.py)
            from tests.fabric import fastpath
            from tests.fabric.shims._base import Ctx

            fastpath.write_dynamic(Ctx(state, address, spec, "", now), tmp)
            env["FABRIC_DYN"], env["FABRIC_NOW"] = tmp, f"{now:.9f}"
        _enter_namespace(binds)
        if command is not None:
            args, new_group = ["sh", "-c", command], True
        else:
            env["PS1"] = PROMPTS.get(platform, PROMPTS["linux"]).format(name=spec["name"])
            env["HOME"] = "/root"
            args, new_group = ["sh", "-i"], False
        child = _spawn(args, env, new_group)
        with open(pidfile, "w") as f:
            f.write(f"{os.getpgid(0)} {child if new_group else ''}\n")

        def forward(signum: int, _frame: object) -> None:
            try:
                if new_group:  # the command has its own process group: end all of it (a hanging tool too)
                    os.killpg(child, signal.SIGKILL)
                else:
                    os.kill(child, signum)
            except ProcessLookupError:
                pass

        for sig in (signal.SIGHUP, signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, forward)
        while True:
            try:
                _, status = os.waitpid(child, 0)
                code = os.waitstatus_to_exitcode(status)
                return 128 - code if code < 0 else code  # killed by a signal: 128 + signal, as a shell says
            except InterruptedError:
                continue
    except OSError as exc:
        return _fail(f"fabric wrapper: {exc}")
    finally:
        _rmtree(tmp)
        if os.path.exists(pidfile):
            os.unlink(pidfile)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
