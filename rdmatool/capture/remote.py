"""`rdmatool capture`: one bounded, passive tcpdump on a host over SSH, streamed into a bundle.

The command is `commands.capture_command` (the audited list); the connection is the host transport's Session
(host keys verified as for `collect`). The capture is binary: `stream_command` reads the channel's bytes straight
into a file (never decoded as text), bounded by a byte budget (what the packet count and snap length allow) and a
deadline. The file lands in the bundle atomically:

- an existing bundle: `snapshots/<last>/<target>/capture.<device>.pcap` and its side file `capture.<device>.json`,
  each written under a hidden temporary name in that folder and renamed into place (folders checked to be real
  directories inside the bundle, never followed through a symlink);
- no bundle yet: a new one (manifest, inventory) built by the bundle writer in a hidden sibling and renamed into
  place, holding the capture alone.
A capture that is not a readable pcap (tcpdump missing, not permitted, no such interface, output cut) is not kept.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import time
from dataclasses import dataclass
from pathlib import Path

from rdmatool import commands, files
from rdmatool.bundle import TARGET_NAME, BundleWriter, read_manifest
from rdmatool.errors import BundleError, RdmatoolError
from rdmatool.model import Target

STDERR_KEEP = 4096


class CaptureFailed(RdmatoolError):
    """The capture could not be taken (one line: host, reason)."""


@dataclass(frozen=True)
class Streamed:
    exit_code: int | None  # None: the deadline passed or the byte budget ran out
    stderr: str
    bytes: int
    error: str | None
    duration_s: float


def stream_command(session, command: str, out, max_bytes: int, timeout_s: float) -> Streamed:
    """Run `command` on the session's host; its stdout (bytes, as sent) goes to the binary file `out`, at most
    `max_bytes` of it; stderr is kept (its first 4 KiB, decoded for the side file)."""
    t0 = time.monotonic()
    end = t0 + timeout_s
    channel = session.client.get_transport().open_session(timeout=min(30.0, timeout_s))
    written, err, error, code = 0, bytearray(), None, None
    try:
        channel.exec_command(command)
        channel.shutdown_write()
        channel.settimeout(0.2)
        while True:
            while channel.recv_stderr_ready():
                chunk = channel.recv_stderr(65536)
                if len(err) < STDERR_KEEP:
                    err += chunk[:STDERR_KEEP - len(err)]
            try:
                data = channel.recv(1 << 20)
            except TimeoutError:
                data = None
            if data:
                if written + len(data) > max_bytes:
                    out.write(data[:max_bytes - written])
                    written = max_bytes
                    error = f"the host sent more than {max_bytes} bytes; capture cut"
                    break
                out.write(data)
                written += len(data)
                continue
            if data == b"" and channel.exit_status_ready():
                while channel.recv_stderr_ready():
                    chunk = channel.recv_stderr(65536)
                    if len(err) < STDERR_KEEP:
                        err += chunk[:STDERR_KEEP - len(err)]
                code = channel.recv_exit_status()
                break
            if time.monotonic() > end:
                error = "deadline exceeded; capture cut"
                break
    finally:
        channel.close()
    return Streamed(code, err.decode("utf-8", errors="replace"), written, error, round(time.monotonic() - t0, 3))


def explain(target: Target, interface: str, streamed: Streamed) -> str | None:
    """Why the capture failed, in one line (None when tcpdump ran)."""
    text = streamed.stderr.lower()
    where = f"{target.name}"
    if streamed.exit_code == 127 or "not installed" in text or "command not found" in text:
        return f"{where}: tcpdump is not installed (install it on the host; capturing needs root)"
    if "permission" in text or "not permitted" in text:
        return (f"{where}: tcpdump is not permitted to capture on {interface}: capturing needs root (or "
                "CAP_NET_RAW and CAP_NET_ADMIN) on the host; log in as root")
    if "no such device" in text or "doesn't exist" in text:
        return f"{where}: no interface {interface} on the host"
    if streamed.exit_code not in (0, 124) and streamed.bytes < 24:
        first = next((line for line in streamed.stderr.splitlines() if line.strip()), "no message")
        return f"{where}: tcpdump failed (exit {streamed.exit_code}): {first.strip()[:200]}"
    return None


def side_file(command: str, streamed: Streamed, interface: str, started: str, options: dict) -> dict:
    return {
        "command": command, "exit_code": streamed.exit_code, "stderr": streamed.stderr, "started": started,
        "duration_s": streamed.duration_s, "error": streamed.error, "qualifier": interface, "bytes": streamed.bytes,
        **options,
    }


def _safe_dir(root: Path, parts: list[str]) -> Path:
    """root/parts..., created as needed; every step a real directory (not a symlink) inside `root`."""
    here = root
    for part in parts:
        here = here / part
        with contextlib.suppress(FileExistsError):
            os.mkdir(here)
        if not stat.S_ISDIR(os.lstat(here).st_mode):
            raise BundleError(f"{here}: not a directory of the bundle (a symlink or a file); refusing to write")
    resolved = here.resolve()
    if not resolved.is_relative_to(root.resolve()):
        raise BundleError(f"{here}: resolves outside the bundle; refusing to write")
    return here


def _last_snapshot(root: Path) -> int:
    """The bundle's last snapshot, from its manifest read as every bundle reader reads it (a regular file within the
    size cap, type-checked: a BundleError naming the file and key otherwise)."""
    indexes = [s["index"] for s in read_manifest(root)["snapshots"] if s.get("index") is not None]
    return max(indexes) if indexes else 0


def with_suppressed_unlink(path: Path) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


def capture_into_bundle(target: Target, interface: str, bundle: str | Path, run, validate) -> Path:
    """Take the capture with `run(binary file) -> (Streamed, side dict)` and put it in `bundle`; `validate(path)`
    raises when the file is not a readable capture. Returns the capture's path in the bundle."""
    if not TARGET_NAME.fullmatch(target.name):
        raise BundleError(f"refusing target name {target.name!r}")
    if not isinstance(interface, str) or not commands.DEVICE_NAME.fullmatch(interface):
        raise BundleError(f"refusing interface name {interface!r}")  # it becomes a file name of the bundle
    name = f"capture.{interface}.pcap"
    side_name = f"capture.{interface}.json"
    final = Path(bundle)
    if (final / "manifest.json").is_file():
        folder = _safe_dir(final.resolve(), ["snapshots", str(_last_snapshot(final)), target.name])
        result: dict = {}

        def fill(handle) -> None:
            result["streamed"], result["side"] = run(handle)

        tmp_probe = folder / f".{name}.check-{os.getpid()}"
        try:
            files.write_atomic_with(tmp_probe, fill)
            _check(validate, tmp_probe, target, interface, result["streamed"])
            os.replace(tmp_probe, folder / name)
        finally:
            with_suppressed_unlink(tmp_probe)
        files.write_atomic(folder / side_name, (json.dumps(result["side"], indent=1) + "\n").encode())
        return folder / name
    writer = BundleWriter(final)
    try:
        folder = _safe_dir(writer.tmp, ["snapshots", "0", target.name])
        started = _now()
        with open(folder / name, "xb", buffering=1 << 20) as handle:
            streamed, side = run(handle)
        _check(validate, folder / name, target, interface, streamed)
        (folder / side_name).write_text(json.dumps(side, indent=1) + "\n", encoding="utf-8")
        writer.commit([target], [{"index": 0, "started": started, "finished": _now()}], [], 0.0)
    except BaseException:
        writer.abort()
        raise
    return final.resolve() / "snapshots" / "0" / target.name / name


def _check(validate, path: Path, target: Target, interface: str, streamed: Streamed) -> None:
    why = explain(target, interface, streamed)
    if why:
        raise CaptureFailed(why)
    try:
        validate(path)
    except RdmatoolError as exc:
        reason = getattr(exc, "reason", str(exc))
        detail = f" ({streamed.error})" if streamed.error else ""
        raise CaptureFailed(f"{target.name}: the capture from {interface} is not a readable pcap: {reason}"
                            f"{detail}") from None


def _now() -> str:
    from rdmatool.transport.ssh import now_iso

    return now_iso()


def take(target: Target, interface: str, bundle: str | Path, duration_s: int, max_packets: int, snaplen: int,
         known_hosts: str | None = None, accept_new_host_keys: bool = False, connect_timeout: float = 15.0) -> Path:
    """Connect (host key verified), run the audited capture command, stream it into the bundle."""
    from rdmatool import extras
    from rdmatool.capture import Options, analyse_file

    extras.require("capture", "checking the capture taken")  # before the host is asked for one
    from rdmatool.transport.hostkeys import KnownHosts
    from rdmatool.transport.ssh import Session, describe_connect_error

    command = commands.capture_command(interface, duration_s, max_packets, snaplen)
    known = KnownHosts(known_hosts, accept_new_host_keys)
    try:
        session = Session(target, known, connect_timeout)
    except Exception as exc:  # noqa: BLE001 - every connection failure becomes one line
        raise CaptureFailed(describe_connect_error(target, exc)) from None
    budget = 24 + max_packets * (16 + snaplen) + 65536
    options = {"duration_limit_s": duration_s, "max_packets": max_packets, "snaplen": snaplen}

    def run(handle):
        started = _now()
        streamed = stream_command(session, command, handle, budget, duration_s + 30.0)
        return streamed, side_file(command, streamed, interface, started, options)

    def validate(path: Path) -> None:
        analyse_file(path, Options())

    try:
        return capture_into_bundle(target, interface, bundle, run, validate)
    finally:
        session.close()
