"""Real output carries noise: recognised noise is skipped and counted, never a reason to fail a parse, and never
hidden (a diagnosis lists it in its notes); an unrecognised line inside a recognised block is still a ParseError."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rdmatool import parsers
from rdmatool.errors import ParseError
from rdmatool.parsers._common import without_trailing_prompt
from tests.helpers import PARSER_FIXTURES, data, pick, run

REPO = Path(__file__).resolve().parents[2]
PROMPTS = ["root@gpu01:~# ", "[root@gpu01 ~]#", "admin@sonic:~$", "leaf01#", "switch>"]


def _golden_cases() -> list[tuple[str, Path]]:
    return [(folder.name, raw) for folder in sorted(PARSER_FIXTURES.iterdir()) if folder.is_dir()
            for raw in sorted(folder.glob("*.txt")) if raw.with_suffix(".json").exists()]


@pytest.mark.parametrize(("parser", "raw"), _golden_cases(), ids=lambda v: getattr(v, "stem", v))
def test_a_trailing_prompt_is_dropped_and_counted_by_every_parser(parser: str, raw: Path) -> None:
    text = raw.read_bytes().decode("utf-8")
    plain = parsers.parse(parser, text)
    prompted = parsers.parse(parser, text.rstrip("\n") + "\n" + PROMPTS[len(raw.stem) % len(PROMPTS)] + "\n")
    assert data(prompted) == data(plain)
    counted = pick(prompted, entity="prompt", metric="parse_skipped_lines")
    assert sum(s.value for s in counted) == sum(s.value for s in pick(plain, entity="prompt")) + 1


@pytest.mark.parametrize("text", ["# Avg bus bandwidth : 6\n#\n", "port 1\n#\n", "x\n  # \n", "Ethernet0  0  0\n"])
def test_what_is_not_a_prompt_stays(text: str) -> None:
    assert without_trailing_prompt(text) == (text, False)


def test_perftest_noise_classes_are_counted_and_the_report_is_read_whole() -> None:
    text = (PARSER_FIXTURES / "perftest" / "noise_echo_jobs_cuda.txt").read_text()
    samples = run("perftest", text)
    counts = {s.entity: s.value for s in pick(samples, metric="parse_skipped_lines")}
    assert counts == {"command_echo": 1, "job_control": 2, "library": 11}
    assert pick(samples, metric="bw_avg_gbps")[0].value == pytest.approx(374.98)
    assert pick(samples, metric="perftest_parameter")[0].raw_key == "CQE Poll Batch"


def test_perftest_failure_lines_mid_run_are_tool_errors_not_parse_errors() -> None:
    samples = run("perftest", (PARSER_FIXTURES / "perftest" / "midrun_failure.txt").read_text())
    errors = [s.text for s in pick(samples, metric="tool_error")]
    assert errors[0] == "pp_read_keys: Success" and "Couldn't read remote address" in errors
    assert not pick(samples, metric="bw_avg_gbps")


def test_an_unknown_field_inside_the_perftest_table_still_fails_with_its_line() -> None:
    with pytest.raises(ParseError) as caught:
        run("perftest", (PARSER_FIXTURES / "perftest" / "field_inside_table.txt").read_text())
    assert caught.value.line_no == 7


def test_nccl_noise_anywhere_and_several_tables_in_one_log() -> None:
    samples = run("nccl_tests", (PARSER_FIXTURES / "nccl_tests" / "noisy_log_two_tables.txt").read_text())
    counts = {s.entity: s.value for s in pick(samples, metric="parse_skipped_lines")}
    assert counts == {"preamble": 2, "shell_trace": 1, "banner": 1, "log": 4}
    entities = {s.entity for s in data(samples)}
    assert {"all_reduce_perf.out_of_place", "alltoall_perf.in_place", "nccl"} <= entities
    # alltoall printed no redop/root cells: the row is read with the columns it has
    busbw = pick(samples, entity="alltoall_perf.out_of_place", metric="busbw_gbps")
    assert [s.size_bytes for s in busbw] == [1048576, 67108864] and busbw[0].value == pytest.approx(88.96)


def test_nccl_one_missing_prefix_cell_is_still_a_damaged_row() -> None:
    with pytest.raises(ParseError) as caught:
        run("nccl_tests", (PARSER_FIXTURES / "nccl_tests" / "missing_cell.txt").read_text())
    assert caught.value.line_no == 3


def test_nccl_preamble_with_no_table_is_an_error_at_its_first_line() -> None:
    with pytest.raises(ParseError) as caught:
        run("nccl_tests", "Initializing SSH...\n+ mpirun ./all_reduce_perf\nssh: connect to host gpu02: timed out\n")
    assert caught.value.line_no == 1


def test_sonic_per_port_cached_time_lines_are_counted() -> None:
    text = (
        "Ethernet0 Last cached time was 2024-05-02T10:11:12.123456\n"
        "     Port    TxQ    Counter/pkts    Counter/bytes    Drop/pkts    Drop/bytes\n"
        "---------  -----  --------------  ---------------  -----------  ------------\n"
        "Ethernet0    UC3            1200           240000            0             0\n"
        "\n"
        "Ethernet4 Last cached time was 2024-05-02T10:11:12.123456\n"
        "     Port    TxQ    Counter/pkts    Counter/bytes    Drop/pkts    Drop/bytes\n"
        "---------  -----  --------------  ---------------  -----------  ------------\n"
        "Ethernet4    UC3            1300           260000            0             0\n"
    )
    samples = parsers.parse("sonic_queue_counters", text)
    assert pick(samples, entity="cached_time", metric="parse_skipped_lines")[0].value == 2
    assert {s.entity for s in data(samples)} == {"Ethernet0", "Ethernet4"}


def test_the_cli_names_file_and_line_of_an_unknown_line_in_a_noisy_output(tmp_path: Path) -> None:
    noisy = tmp_path / "perftest.txt"
    noisy.write_text((PARSER_FIXTURES / "perftest" / "noise_echo_jobs_cuda.txt").read_text()
                     + " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n"
                     + "this is not perftest\n")
    done = subprocess.run([sys.executable, "-m", "rdmatool", "parse", "perftest", str(noisy)],
                          capture_output=True, text=True, cwd=REPO, timeout=60)
    lines = done.stderr.strip().splitlines()
    assert done.returncode != 0 and len(lines) == 1 and "Traceback" not in done.stderr
    assert f"{noisy}:41" in lines[0], lines


def test_a_diagnosis_lists_the_noise_its_parsers_skipped(tmp_path: Path) -> None:
    from tests.test_bundle_format import _bundle_from_doc

    bundle = _bundle_from_doc(tmp_path / "hand")
    shutil.copy(PARSER_FIXTURES / "perftest" / "noise_echo_jobs_cuda.txt", bundle / "snapshots/0/gpu01/perftest.txt")
    done = subprocess.run([sys.executable, "-m", "rdmatool", "diagnose", str(bundle), "--format", "json"],
                          capture_output=True, text=True, cwd=REPO, timeout=120)
    notes = json.loads(done.stdout)["notes"]
    assert "perftest: skipped 14 line(s) of recognised noise on 1 target(s) " \
           "(command_echo 1, job_control 2, library 11)" in notes, notes
