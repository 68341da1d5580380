"""The host script's GPU sections: run by this machine's `sh` with stand-in GPU tools on PATH, framed and accepted
by the client in both snapshot modes, parsed by their parsers; absent tools give no section and no failure."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from rdmatool import commands, parsers
from rdmatool.parsers import dcgmi_dmon, nvidia_smi
from rdmatool.transport import host_framing

GPU_PARSERS = ["nvidia_smi", "dcgmi_dmon", "rocm_smi"]
# Stand-ins that print what the real tools print for the audited arguments, and refuse any other argument list.
TOOLS = {
    "nvidia-smi": (f'[ "$*" = "--query-gpu={commands.NVIDIA_SMI_QUERY} --format=csv,noheader,nounits" ] || exit 2\n'
                   "echo '0, GPU-00000000-1111-2222-3333-444444444444, NVIDIA H100 80GB HBM3, 91, 30, 70000, 81559, "
                   "5, 5, 16, 16'\n"),
    "dcgmi": (f'[ "$*" = "dmon -e {commands.DCGM_FIELDS} -c 1" ] || exit 2\n'
              "printf '#Entity GPUTL MCUTL FBTTL FBUSD PCITX PCIRX NVLTX NVLRX\\nID\\nGPU 0 90 31 81559 70000 1 2 3 4\\n'\n"),
    "rocm-smi": ('[ "$*" = "--showuse --showmemuse --json" ] || exit 2\n'
                 """echo '{"card0": {"GPU use (%)": "12", "GPU Memory Allocated (VRAM%)": "40"}}'\n"""),
}


def run(mode: str, tools: dict[str, str], tmp_path: Path) -> list[host_framing.Section]:
    if shutil.which("sh") is None:
        pytest.skip("no /bin/sh")
    bindir = tmp_path / f"bin-{mode}-{len(tools)}"
    bindir.mkdir()
    for name, body in tools.items():
        (bindir / name).write_text("#!/bin/sh\n" + body)
        (bindir / name).chmod(0o755)
    token = commands.new_token()
    env = {**os.environ, "PATH": f"{bindir}:{os.environ.get('PATH', '/usr/bin:/bin')}"}
    proc = subprocess.run(["sh", "-s", "--", "5", mode], input=commands.host_script(token), capture_output=True,
                          text=True, timeout=60, env=env)
    assert proc.returncode == 0, proc.stderr
    sections, error = host_framing.split_sections(proc.stdout, token, mode)
    assert error is None, error
    return sections


@pytest.mark.parametrize("mode", [commands.SNAPSHOT_FULL, commands.SNAPSHOT_COUNTERS])
def test_each_gpu_tool_is_read_in_both_snapshots_and_parsed(mode: str, tmp_path: Path) -> None:
    sections = run(mode, TOOLS, tmp_path)
    gpu = [s for s in sections if s.parser in GPU_PARSERS]
    assert [s.parser for s in gpu] == GPU_PARSERS  # the last sections, in the order the client checks
    assert sections[-3:] == gpu
    utilisation = {}
    for s in gpu:
        assert s.exit_code == 0 and s.qualifier is None, (s.parser, s.exit_code, s.stderr)
        samples = parsers.parse(s.parser, s.stdout)
        utilisation[s.parser] = [x.value for x in samples if x.metric == "gpu_utilization_pct"]
    assert utilisation == {"nvidia_smi": [91], "dcgmi_dmon": [90], "rocm_smi": [12]}


def test_a_host_without_gpu_tools_has_no_gpu_section_and_no_failure(tmp_path: Path) -> None:
    if any(shutil.which(t) for t in TOOLS):
        pytest.skip("this machine has a GPU tool installed")
    sections = run(commands.SNAPSHOT_FULL, {}, tmp_path)
    assert [s.parser for s in sections if s.parser in GPU_PARSERS] == []
    assert sections[-1].parser in ("loadavg", "psi")


def test_one_tool_alone_follows_what_came_before(tmp_path: Path) -> None:
    sections = run(commands.SNAPSHOT_COUNTERS, {"rocm-smi": TOOLS["rocm-smi"]}, tmp_path)
    assert sections[-1].parser == "rocm_smi" and sections[-2].parser in ("loadavg", "psi")


def test_the_audited_field_lists_are_the_ones_the_parsers_read() -> None:
    assert commands.NVIDIA_SMI_QUERY == nvidia_smi.QUERY
    assert commands.DCGM_FIELDS == dcgmi_dmon.FIELD_IDS
    assert "__" not in commands.HOST_SCRIPT.split("exit 0\n")[-2]  # every placeholder of the GPU lines filled


def test_a_gpu_section_out_of_order_breaks_the_framing() -> None:
    token = commands.new_token()
    m = f"{commands.MARKER} {token}"

    def section(seq: int, parser: str) -> str:
        return f"\n{m} BEGIN {seq} {parser} - 1700000000.5 cmd\nx\n{m} STDERR {seq}\n\n{m} END {seq} 0\n"

    stream = section(1, "loadavg") + section(2, "rocm_smi") + section(3, "nvidia_smi")
    sections, error = host_framing.split_sections(stream, token, commands.SNAPSHOT_COUNTERS)
    assert [s.parser for s in sections] == ["loadavg", "rocm_smi"]
    assert error and "nvidia_smi" in error and "cannot come after rocm_smi" in error
