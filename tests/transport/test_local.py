"""The local transport (rdmatool/transport/local.py): the audited script run on this machine with the same framing,
deadline and byte limit as over SSH, and a verbs read whose hang or crash costs its own output only."""

from __future__ import annotations

import json
import stat
import time
from pathlib import Path

from rdmatool import commands
from rdmatool.transport.host_framing import HOST_PARSERS
from rdmatool.transport.local import LocalSession, local_target


def test_the_target_is_named_after_this_host() -> None:
    assert local_target("gpu07.cluster.example.org").name == "gpu07"
    assert local_target("gpu07").address == "localhost"
    assert local_target("-bad name").name == "localhost"  # never a name that could not be a bundle directory


def test_a_full_snapshot_is_the_script_then_the_verbs_read() -> None:
    session = LocalSession(local_target("node1"))
    results, error = session.run_snapshot(commands.SNAPSHOT_FULL, 10, time.monotonic() + 60)
    assert error is None
    parsers = [r.parser for r in results]
    assert parsers[:2] == ["ibstat", "ibv_devinfo"] and parsers[-1] == "verbs"
    assert set(parsers[:-1]) <= HOST_PARSERS  # what the framing allows, nothing else
    loadavg = next(r for r in results if r.parser == "loadavg")
    assert loadavg.ok and len(loadavg.stdout.split()) == 5 and loadavg.target == "node1"
    document = json.loads(results[-1].stdout)
    assert document["format"] == 1 and document["status"] in ("ok", "unavailable", "failed", "no_devices")


def test_a_counters_snapshot_has_no_verbs_read() -> None:
    results, error = LocalSession(local_target("node1")).run_snapshot(commands.SNAPSHOT_COUNTERS, 10,
                                                                       time.monotonic() + 60)
    assert error is None and "verbs" not in [r.parser for r in results]
    assert [r.parser for r in results if r.parser in ("ibstat", "ibv_devinfo")] == []


def test_the_deadline_kills_the_script_and_its_children(tmp_path: Path) -> None:
    marker = tmp_path / "pid"
    session = LocalSession(local_target("node1"))
    t0 = time.monotonic()
    text, error = session._run_script(["sh", "-s"], f"echo started; sleep 60 & echo $! > {marker}; wait\n".encode(),
                                      time.monotonic() + 1.5, None)
    assert time.monotonic() - t0 < 10
    assert text.startswith("started") and error == "target deadline exceeded; output so far kept"
    sleeper = int(marker.read_text())
    time.sleep(0.2)
    assert not Path(f"/proc/{sleeper}").exists() or "Z" in Path(f"/proc/{sleeper}/stat").read_text().split()[2]


def test_a_flood_is_cut_at_the_byte_limit() -> None:
    session = LocalSession(local_target("node1"), max_output_bytes=100_000)
    text, error = session._run_script(["sh", "-s"], b"yes\n", time.monotonic() + 30, None)
    assert error.startswith("the script printed more than 100000 bytes for one snapshot; output so far kept (")
    assert 0 < len(text) <= 100_000


def _fake_python(tmp_path: Path, body: str) -> str:
    path = tmp_path / "python"
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def test_a_verbs_read_that_hangs_or_crashes_is_that_output_error(tmp_path: Path) -> None:
    hangs = LocalSession(local_target("node1"), python=_fake_python(tmp_path, "sleep 30")).read_verbs(1.0)
    assert not hangs.ok and hangs.error == "the verbs read did not finish within 1 s on node1"
    (tmp_path / "crash").mkdir()
    crash = _fake_python(tmp_path / "crash", 'echo "Segmentation fault in mlx5" >&2; kill -SEGV $$')
    crashed = LocalSession(local_target("node1"), python=crash).read_verbs(10.0)
    assert not crashed.ok and crashed.parser == "verbs"
    assert crashed.error == "the verbs read failed on node1 (signal 11: Segmentation fault in mlx5)"


def test_the_verbs_read_runs_isolated_from_the_callers_directory(tmp_path: Path, monkeypatch) -> None:
    """A `pyverbs` beside the caller (the current directory, PYTHONPATH) is never the one read."""
    (tmp_path / "pyverbs").mkdir()
    (tmp_path / "pyverbs" / "__init__.py").write_text("raise SystemExit('the wrong pyverbs')\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    result = LocalSession(local_target("node1")).read_verbs(30.0)
    assert result.ok, result.error
    assert "the wrong pyverbs" not in result.stdout + result.stderr
