"""The host script's framing: what a host prints cannot open, close or name a section the client accepts.

The stream under test is the real script run by this machine's `sh` (no RDMA devices here, so the RDMA tools are
"not installed" and loadavg/psi are real), plus hand-made hostile streams built with the same token.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest

from rdmatool import commands
from rdmatool.transport import host_framing


def run_script(mode: str = commands.SNAPSHOT_FULL) -> tuple[str, str]:
    if shutil.which("sh") is None:
        pytest.skip("no /bin/sh")
    token = commands.new_token()
    proc = subprocess.run(["sh", "-s", "--", "5", mode], input=commands.host_script(token), capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout, token


def section(token: str, seq: int, parser: str, qualifier: str, body: str = "x", rc: int = 0) -> str:
    m = f"{commands.MARKER} {token}"
    return (f"\n{m} BEGIN {seq} {parser} {qualifier} 1700000000.5 cmd\n{body}\n{m} STDERR {seq}\n\n"
            f"{m} END {seq} {rc}\n")


def test_the_real_script_frames_every_section_and_the_client_accepts_it() -> None:
    stream, token = run_script()
    sections, error = host_framing.split_sections(stream, token)
    assert error is None
    parsers = [s.parser for s in sections]
    assert parsers[:2] == ["ibstat", "ibv_devinfo"]
    assert "loadavg" in parsers
    loadavg = next(s for s in sections if s.parser == "loadavg")
    assert loadavg.exit_code == 0 and len(loadavg.stdout.split()) == 5
    assert loadavg.started_epoch and loadavg.started_epoch > 1.6e9


def test_a_sections_end_and_the_next_ones_start_leave_in_one_write(tmp_path) -> None:
    """sshd sends what one read of the script's output gives as one packet, and the collector pays per packet: the
    script's own writes are one per section (the previous section's end with this one's start), one more where a
    command wrote to stderr (copied as it is), and the last section's end at exit. The commands' own output is
    theirs: only the shell's writes are traced here."""
    if shutil.which("strace") is None or shutil.which("sh") is None:
        pytest.skip("needs strace and /bin/sh")
    token = commands.new_token()
    trace = tmp_path / "writes"
    proc = subprocess.run(["strace", "-y", "-e", "trace=write", "-o", str(trace), "sh", "-s", "--", "5",
                           commands.SNAPSHOT_FULL], input=commands.host_script(token), capture_output=True,
                          text=True, timeout=60)
    if proc.returncode != 0 and "ptrace" in proc.stderr:
        pytest.skip(f"strace cannot trace here: {proc.stderr.strip()}")
    assert proc.returncode == 0, proc.stderr
    sections, error = host_framing.split_sections(proc.stdout, token)
    assert error is None and len(sections) >= 3
    with_stderr = sum(1 for s in sections if s.stderr)
    assert 0 < with_stderr < len(sections)  # both kinds: tools missing here, loadavg read
    # `-y` names each descriptor's file: writes to stdout redirected to /dev/null (`command -v`) are not the stream's
    to_stream = [line for line in trace.read_text().splitlines() if line.startswith("write(1<pipe:")]
    assert len(to_stream) == len(sections) + with_stderr + 1
    # the last section's end is written at exit, complete
    assert sections[-1].exit_code == 0 and proc.stdout.endswith(f"END {len(sections)} 0\n")


def test_counters_mode_is_checked_against_its_own_order() -> None:
    stream, token = run_script(commands.SNAPSHOT_COUNTERS)
    sections, error = host_framing.split_sections(stream, token, commands.SNAPSHOT_COUNTERS)
    assert error is None and sections[0].parser == "loadavg"
    # the same stream read as a full snapshot breaks the order (a full snapshot starts with ibstat)
    _, error = host_framing.split_sections(stream, token, commands.SNAPSHOT_FULL)
    assert error and "cannot come first" in error


def test_each_run_has_its_own_token() -> None:
    tokens = {commands.new_token() for _ in range(50)}
    assert len(tokens) == 50 and all(len(t) == 32 for t in tokens)
    with pytest.raises(ValueError):
        commands.host_script("not-hex; rm -rf /")


def test_markers_without_the_token_are_plain_output() -> None:
    token = commands.new_token()
    forged = "\n".join([
        f"{commands.MARKER} BEGIN 2 ../../../../tmp/pwned - 1 x",
        f"{commands.MARKER} {'0' * 32} BEGIN 2 lldpctl - 1 x",
        f"{commands.MARKER} END ibstat - 0",
    ])
    stream = section(token, 1, "ibstat", "-", body=forged) + section(token, 2, "ibv_devinfo", "-")
    sections, error = host_framing.split_sections(stream, token)
    assert error is None
    assert [s.parser for s in sections] == ["ibstat", "ibv_devinfo"]
    assert "../../../../tmp/pwned" in sections[0].stdout  # kept as data: the parser will refuse it, nothing else


@pytest.mark.parametrize("parser, qualifier, reason", [
    ("../../../../tmp/pwned", "-", "cannot come"),
    ("/tmp/pwned-abs", "-", "cannot come"),
    ("no_such_parser", "-", "cannot come"),
    ("sysfs_counters", "../../x", "not a device name"),
    ("sysfs_counters", "/etc/cron.d/x", "not a device name"),
    ("sysfs_counters", "-rf", "not a device name"),
    ("show_gids", "mlx5_0", "takes no qualifier"),
])
def test_a_forged_section_with_the_token_fails_the_host_and_keeps_what_came_before(
    parser: str, qualifier: str, reason: str,
) -> None:
    token = commands.new_token()
    stream = (section(token, 1, "ibstat", "-") + section(token, 2, "ibv_devinfo", "-")
              + section(token, 3, parser, qualifier) + section(token, 4, "loadavg", "-"))
    sections, error = host_framing.split_sections(stream, token)
    assert [s.parser for s in sections] == ["ibstat", "ibv_devinfo"]
    assert error is not None and reason in error and "line" in error
    assert "\n" not in error


def test_sequence_numbers_and_marker_order_are_enforced() -> None:
    token = commands.new_token()
    m = f"{commands.MARKER} {token}"
    skipped = section(token, 1, "ibstat", "-") + section(token, 3, "ibv_devinfo", "-")
    assert "section number '3' where 2 was due" in host_framing.split_sections(skipped, token)[1]
    replayed = section(token, 1, "ibstat", "-") + section(token, 1, "ibstat", "-")
    assert host_framing.split_sections(replayed, token)[1]
    nested = f"{m} BEGIN 1 ibstat - 1 x\n{m} BEGIN 2 ibv_devinfo - 1 x\n"
    assert "did not end" in host_framing.split_sections(nested, token)[1]
    end_first = f"{m} BEGIN 1 ibstat - 1 x\n{m} END 1 0\n"
    assert "stray END" in host_framing.split_sections(end_first, token)[1]
    bad_rc = f"{m} BEGIN 1 ibstat - 1 x\n{m} STDERR 1\n{m} END 1 zero\n"
    assert "not a number" in host_framing.split_sections(bad_rc, token)[1]
    garbage = f"{m} HELLO\n"
    assert "malformed marker" in host_framing.split_sections(garbage, token)[1]


def test_qualifiers_follow_their_device_and_netdev() -> None:
    token = commands.new_token()
    head = section(token, 1, "ibstat", "-") + section(token, 2, "ibv_devinfo", "-")
    good = (head + section(token, 3, "sysfs_counters", "mlx5_0") + section(token, 4, "perfquery", "mlx5_0.1")
            + section(token, 5, "ethtool_stats", "ens1f0np0") + section(token, 6, "ethtool_info", "ens1f0np0")
            + section(token, 7, "loadavg", "-"))
    sections, error = host_framing.split_sections(good, token)
    assert error is None and [s.qualifier for s in sections][2:6] == ["mlx5_0", "mlx5_0.1", "ens1f0np0", "ens1f0np0"]
    wrong_port = head + section(token, 3, "sysfs_counters", "mlx5_0") + section(token, 4, "perfquery", "mlx5_9.1")
    assert "not a port of mlx5_0" in host_framing.split_sections(wrong_port, token)[1]
    wrong_netdev = (head + section(token, 3, "ethtool_stats", "eth0")
                    + section(token, 4, "ethtool_info", "eth1"))
    assert "not the netdev eth0" in host_framing.split_sections(wrong_netdev, token)[1]


def test_text_outside_sections_is_ignored_and_a_cut_section_has_no_exit() -> None:
    token = commands.new_token()
    m = f"{commands.MARKER} {token}"
    stream = "Welcome! (a start-up file that prints)\n" + section(token, 1, "ibstat", "-") + \
        f"{m} BEGIN 2 ibv_devinfo - 1 ibv_devinfo -v\npartial\n"
    sections, error = host_framing.split_sections(stream, token)
    assert error is None
    assert sections[-1].parser == "ibv_devinfo" and sections[-1].exit_code is None
    assert sections[-1].stdout == "partial"


def test_a_host_clock_that_is_not_a_time_is_ignored() -> None:
    token = commands.new_token()
    m = f"{commands.MARKER} {token}"
    for stamp in ("1e300", "nan", "inf", "-5", "N"):
        stream = f"{m} BEGIN 1 ibstat - {stamp} ibstat\n{m} STDERR 1\n{m} END 1 0\n"
        sections, error = host_framing.split_sections(stream, token)
        assert error is None and sections[0].started_epoch is None, stamp


@pytest.mark.parametrize("name", ["swp2\n", "swp2\nshow run", "Ethernet0\n", "1/1\n", "Ethernet1/1 ", "swp٣"])
def test_switch_port_names_are_matched_whole(name: str) -> None:
    from rdmatool.model import Platform

    for platform in Platform:
        assert not commands.valid_port_name(platform, name)
    with pytest.raises(ValueError):
        commands.switch_port_argument(Platform.CUMULUS, name)


def test_the_script_skips_device_names_a_shell_would_misread(tmp_path) -> None:
    """safe() in the script: a netdev named `-x`, `a b` or `*` is not used at all."""
    if shutil.which("sh") is None:
        pytest.skip("no /bin/sh")
    start = commands.HOST_SCRIPT.index("safe() {")
    safe = commands.HOST_SCRIPT[start:commands.HOST_SCRIPT.index("\n", start)]
    names = ["mlx5_0", "ens1f0np0", "-x", "a b", "*", "", "x;y", ".hidden", "eth0.100"]
    script = safe + "\n" + "".join(f"safe '{n}' && echo 'ok {n}'\n" for n in names)
    out = subprocess.run(["sh", "-c", script], capture_output=True, text=True, timeout=10).stdout
    assert out.splitlines() == ["ok mlx5_0", "ok ens1f0np0", "ok eth0.100"]
