"""The subnet sweep from one host: the host script's `subnet` mode (its four tools, their per-MAD timeout and one
budget for all), its framing, and the chooser that gives each subnet to one host per snapshot and hands it on when
that host's sweep fails (rdmatool.collect._Subnets)."""

from __future__ import annotations

import shutil
import subprocess
import threading
import time
from pathlib import Path

import pytest

from rdmatool import commands
from rdmatool.collect import TargetOutcome, _Subnets, _sweep_subnet_manager, sweep_record
from rdmatool.model import CommandResult, Target
from rdmatool.outcome.failures import command_gap
from rdmatool.transport import host_framing
from tests.helpers import PARSER_FIXTURES

SWEEP = commands.SUBNET_SWEEP


def section(token: str, seq: int, parser: str, qualifier: str, rc: int = 0) -> str:
    m = f"{commands.MARKER} {token}"
    return f"\n{m} BEGIN {seq} {parser} {qualifier} 1700000000.5 cmd\nx\n{m} STDERR {seq}\n\n{m} END {seq} {rc}\n"


def run_subnet_mode(tmp_path: Path, budget: int, tools: dict[str, str]) -> tuple[list, str | None, float]:
    """The real script in subnet mode over a made-up sysfs with one Active InfiniBand port, the given tools (name →
    shell body) first on PATH."""
    if shutil.which("sh") is None or shutil.which("timeout") is None:
        pytest.skip("needs /bin/sh and timeout")
    port = tmp_path / "ib" / "mlx5_0" / "ports" / "1"
    port.mkdir(parents=True)
    (port / "link_layer").write_text("InfiniBand\n")
    (port / "state").write_text("4: ACTIVE\n")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for name, body in tools.items():
        (bindir / name).write_text(f"#!/bin/sh\n{body}\n")
        (bindir / name).chmod(0o755)
    token = commands.new_token()
    script = commands.host_script(token).replace("IB=/sys/class/infiniband", f"IB={tmp_path / 'ib'}")
    assert script != commands.host_script(token)
    began = time.monotonic()
    proc = subprocess.run(["sh", "-s", "--", str(budget), commands.SNAPSHOT_SUBNET], input=script, text=True,
                          capture_output=True, timeout=60, env={"PATH": f"{bindir}:/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    sections, error = host_framing.split_sections(proc.stdout, token, commands.SNAPSHOT_SUBNET)
    return sections, error, time.monotonic() - began


def test_the_script_runs_the_four_sweep_tools_through_one_port_with_a_per_mad_timeout(tmp_path) -> None:
    sections, error, _ = run_subnet_mode(tmp_path, 20, {t: 'echo "$0 $*"' for t in SWEEP})
    assert error is None
    assert [(s.parser, s.qualifier, s.exit_code) for s in sections] == [(t, "mlx5_0.1", 0) for t in SWEEP]
    said = {s.parser: s.stdout.split(None, 1)[1].strip() for s in sections}
    mad = f"-t {commands.SUBNET_MAD_TIMEOUT_MS} -C mlx5_0 -P 1"
    assert said["sminfo"] == mad and said["iblinkinfo"] == mad and said["ibnetdiscover"] == f"-p {mad}"
    # every port's counters above 0, nothing suppressed, never a clearing flag
    assert said["ibqueryerrors"] == f"--data --details --threshold-file /dev/null {mad}"
    assert not any(flag in s.command.split() for s in sections for flag in ("-k", "-K", "--clear-errors"))


def test_the_budget_bounds_the_whole_sweep_and_a_cut_sweep_ends_early(tmp_path) -> None:
    tools = {"sminfo": "echo sm", "ibnetdiscover": "sleep 30", "iblinkinfo": "echo links",
             "ibqueryerrors": "echo errors"}
    sections, error, took = run_subnet_mode(tmp_path, 2, tools)
    assert error is None and took < 8
    assert [(s.parser, s.exit_code) for s in sections] == [("sminfo", 0), ("ibnetdiscover", 124)]


def test_a_host_with_no_sweep_tool_prints_nothing_and_a_missing_one_is_named(tmp_path) -> None:
    if any(shutil.which(t, path="/usr/bin:/bin") for t in SWEEP):
        pytest.skip("this machine has infiniband-diags installed")
    sections, error, _ = run_subnet_mode(tmp_path / "none", 5, {})
    assert (sections, error) == ([], None)
    sections, error, _ = run_subnet_mode(tmp_path / "some", 5, {"sminfo": "echo sm"})
    assert error is None and [(s.parser, s.exit_code) for s in sections][:2] == [("sminfo", 0), ("ibnetdiscover", 127)]


def test_the_framing_takes_the_sweep_in_order_through_one_device_port() -> None:
    token = commands.new_token()
    whole = "".join(section(token, i + 1, t, "mlx5_0.1") for i, t in enumerate(SWEEP))
    good, error = host_framing.split_sections(whole, token, commands.SNAPSHOT_SUBNET)
    assert error is None and [s.parser for s in good] == list(SWEEP)
    first_two = "".join(section(token, i + 1, t, "mlx5_0.1") for i, t in enumerate(SWEEP[:2]))
    cut, error = host_framing.split_sections(first_two, token, commands.SNAPSHOT_SUBNET)
    assert error is None and len(cut) == 2  # a sweep its budget cut: what came, in order
    for stream in (section(token, 1, "iblinkinfo", "mlx5_0.1"),  # out of order
                   section(token, 1, "sminfo", "../x.1"), section(token, 1, "ibstat", "-"),
                   section(token, 1, "sminfo", "mlx5_0.1") + section(token, 2, "ibnetdiscover", "mlx5_1.1")):
        kept, error = host_framing.split_sections(stream, token, commands.SNAPSHOT_SUBNET)
        assert error is not None and len(kept) <= 1, stream


def result(host: str, parser: str, rc: int | None = 0, error: str | None = None) -> CommandResult:
    return CommandResult(target=host, parser=parser, command=f"{parser} -t 200", stdout="x", exit_code=rc,
                         qualifier="mlx5_0.1", error=error)


def full(host: str) -> list[CommandResult]:
    return [result(host, t) for t in SWEEP]


def later(seconds: float = 10.0) -> float:
    return time.monotonic() + seconds


def test_one_host_sweeps_each_subnet_in_every_snapshot_and_keeps_it() -> None:
    subnets = _Subnets(60)
    assert subnets.claim("gpu01", 17, 0, later()) == 60
    subnets.finish("gpu01", 17, 0, full("gpu01"), None, 60)
    assert subnets.claim("gpu02", 17, 0, later()) is None  # swept already
    assert subnets.claim("gpu09", 23, 0, later()) is not None  # another subnet manager: another subnet
    assert subnets.claim("gpu01", 17, 1, later()) == 60  # the same vantage point in the next snapshot
    _, attempt, notices = subnets.finish("gpu01", 17, 1, full("gpu01"), None, 60)
    assert attempt["outcome"] == "complete" and attempt["tools"] == list(SWEEP) and notices == []
    assert subnets.claim("gpu02", 17, 1, later(0.2)) is None


def test_ibqueryerrors_finding_errors_is_a_complete_sweep_and_its_scan_failing_is_not() -> None:
    subnets = _Subnets(60)
    subnets.claim("gpu01", 17, 0, later())
    found = [*full("gpu01")[:3], result("gpu01", "ibqueryerrors", 1)]  # exit 1: errors above the threshold
    _, attempt, _ = subnets.finish("gpu01", 17, 0, found, None, 60)
    assert attempt["outcome"] == "complete" and attempt["tools"] == list(SWEEP)
    subnets.claim("gpu01", 17, 1, later())
    found = [*full("gpu01")[:3], result("gpu01", "ibqueryerrors", 255)]  # -1: the scan failed
    _, attempt, _ = subnets.finish("gpu01", 17, 1, found, None, 60)
    assert attempt["outcome"] == "failed" and attempt["error"].startswith("ibqueryerrors exited 255 on gpu01")


def test_a_host_whose_sweep_fails_hands_the_subnet_to_one_waiting() -> None:
    subnets = _Subnets(60)
    assert subnets.claim("gpu01", 17, 0, later()) is not None
    got: list = []
    waiting = threading.Thread(target=lambda: got.append(subnets.claim("gpu02", 17, 0, later())))
    waiting.start()
    time.sleep(0.2)
    assert waiting.is_alive()  # gpu02 waits for gpu01's outcome
    missing = [result("gpu01", "sminfo"), result("gpu01", "ibnetdiscover", 127, "ibnetdiscover not installed on gpu01")]
    _, attempt, _ = subnets.finish("gpu01", 17, 0, missing, None, 60)
    waiting.join(5)
    assert attempt["outcome"] == "failed" and "not installed" in attempt["error"]
    assert got and got[0] is not None and got[0] <= 60
    subnets.finish("gpu02", 17, 0, full("gpu02"), None, got[0])
    assert subnets.claim("gpu01", 17, 1, later(0.2)) is None  # a host that failed a subnet is not asked again
    assert subnets.claim("gpu02", 17, 1, later()) is not None


def test_no_sweep_tool_a_broken_session_and_a_host_that_ends_hand_over_too() -> None:
    subnets = _Subnets(60)
    subnets.claim("gpu01", 17, 0, later())
    _, attempt, _ = subnets.finish("gpu01", 17, 0, [], None, 60)
    assert attempt["error"] == "no subnet sweep tool installed on gpu01"
    subnets.claim("gpu02", 17, 0, later())
    _, attempt, _ = subnets.finish("gpu02", 17, 0, [result("gpu02", "sminfo")], "connection reset", 60)
    assert attempt["outcome"] == "failed" and "connection reset" in attempt["error"]
    subnets.claim("gpu03", 17, 0, later())
    subnets.finish("gpu03", 17, 0, full("gpu03"), None, 60)
    subnets.leave("gpu03")  # its collection ended before its next sweep
    assert subnets.claim("gpu04", 17, 1, later()) is not None


def test_a_sweep_cut_by_the_budget_is_partial_named_and_not_tried_again() -> None:
    subnets = _Subnets(60)
    subnets.claim("gpu01", 17, 0, later())
    cut = [result("gpu01", "sminfo"), result("gpu01", "ibnetdiscover", 124, "ibnetdiscover -p timed out on gpu01")]
    kept, attempt, notices = subnets.finish("gpu01", 17, 0, cut, None, 60)
    assert attempt["outcome"] == "partial" and "partial subnet sweep of SM lid 17 from gpu01" in attempt["error"]
    assert kept[1].error.startswith("partial subnet sweep of SM lid 17 from gpu01: the budget of 60 s")
    assert kept[1].error.endswith("ran out in ibnetdiscover (ibnetdiscover stopped there)")
    # the fabric's read is short, not the host's: no failure of this host's own that a verdict would not vouch for
    assert command_gap(kept[1].error) is None and all(command_gap(n["error"]) is None for n in notices)
    assert [(n["parser"], n["snapshot"], n["qualifier"]) for n in notices] == [
        ("iblinkinfo", 0, "mlx5_0.1"), ("ibqueryerrors", 0, "mlx5_0.1")]
    assert all("partial subnet sweep" in n["error"] and "before" in n["error"] for n in notices)
    assert subnets.claim("gpu02", 17, 0, later(0.2)) is None  # the snapshot's budget is spent


def test_the_budget_counts_from_the_first_try_and_the_tries_are_bounded() -> None:
    subnets = _Subnets(3, tries=2)
    assert subnets.claim("gpu01", 17, 0, later()) == 3
    subnets._subnets[17].started[0] -= 1.5  # as if gpu01's try took a second and a half
    subnets.finish("gpu01", 17, 0, [], None, 3)
    assert subnets.claim("gpu02", 17, 0, later()) == 1  # what is left of the snapshot's budget
    subnets.finish("gpu02", 17, 0, [], None, 1)
    assert subnets.claim("gpu03", 17, 0, later(0.2)) is None  # two tries, both failed: nobody else


def test_the_manifest_record_names_the_host_per_subnet_and_snapshot() -> None:
    subnets = _Subnets(60)
    outcomes = {h: TargetOutcome(Target(name=h, address=h)) for h in ("gpu01", "gpu02")}
    subnets.claim("gpu01", 17, 0, later())
    outcomes["gpu01"].sweeps.append(subnets.finish("gpu01", 17, 0, [], None, 60)[1])
    subnets.claim("gpu02", 17, 0, later())
    outcomes["gpu02"].sweeps.append(subnets.finish("gpu02", 17, 0, full("gpu02"), None, 60)[1])
    (entry,) = sweep_record(list(outcomes.values()))
    assert entry == {"sm_lid": 17, "snapshot": 0, "host": "gpu02", "port": "mlx5_0.1", "complete": True,
                     "tools": list(SWEEP), "tried": [{"host": "gpu01", "error": "no subnet sweep tool installed on gpu01"}]}


def test_the_port_swept_through_is_the_first_active_infiniband_one() -> None:
    text = (PARSER_FIXTURES / "ibstat" / "healthy.txt").read_text()
    ibstat = [CommandResult(target="gpu01", parser="ibstat", command="ibstat", stdout=text)]
    assert _sweep_subnet_manager(ibstat) == 17
    assert _sweep_subnet_manager([]) is None


class FakeHost:
    """A host session answering each snapshot mode with made-up results; records the modes and budgets asked."""

    def __init__(self, target) -> None:
        self.name = target.name
        self.asked: list[tuple[str, int]] = []

    def run_snapshot(self, mode, timeout, deadline, stop):  # noqa: ANN001, ANN201 - a Session's signature
        self.asked.append((mode, timeout))
        ibstat = (PARSER_FIXTURES / "ibstat" / "healthy.txt").read_text()
        if mode == commands.SNAPSHOT_SUBNET:
            return full(self.name), None
        made = [CommandResult(target=self.name, parser="sysfs_counters", command="grep", stdout="", qualifier="mlx5_0")]
        if mode == commands.SNAPSHOT_FULL:
            made.insert(0, CommandResult(target=self.name, parser="ibstat", command="ibstat", stdout=ibstat))
        return made, None

    def close(self) -> None:
        pass


@pytest.mark.parametrize("local", [False, True])
def test_the_sweep_follows_every_snapshot_and_never_runs_in_local_mode(monkeypatch, local) -> None:
    from rdmatool import collect

    sessions: list[FakeHost] = []
    monkeypatch.setattr(collect, "_open", lambda target, *a, **k: sessions.append(FakeHost(target)) or sessions[-1])
    targets = [Target(name=f"gpu0{i}", address=f"10.0.0.{i}") for i in (1, 2)]
    outcomes = collect.collect_all(targets, collect.CollectOptions(interval_s=0.05, local=local))
    assert all(o.ok for o in outcomes)
    sweeps = [(s.name, budget) for s in sessions for mode, budget in s.asked if mode == commands.SNAPSHOT_SUBNET]
    if local:
        assert sweeps == [] and all(not o.sweeps for o in outcomes)
        return
    assert len(sweeps) == 2 and len({name for name, _ in sweeps}) == 1  # one host, once in each snapshot
    assert all(budget == 60 for _, budget in sweeps)  # limits.subnet_sweep_s
    swept = next(o for o in outcomes if o.sweeps)
    assert sorted(r.parser for r in swept.snapshots[1] if r.parser in SWEEP) == sorted(SWEEP)
