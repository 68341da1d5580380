"""An empty output from a tool that always prints something when it succeeds is missing data, not "nothing wrong".

Each parser is decided here, and a guard fails when a parser is in neither list. Refused (EmptyOutput, a
ParseError: `rdmatool parse` exits 2, a collection records a parse failure the diagnosis reports): the host tools
whose successful answer always holds something (a header, a block per device, a line per counter; the grep reads
of sysfs and /proc, whose grep exits 1 having matched nothing). Left alone, where an empty answer is legitimate or
not known to be impossible: a list with no entries (LLDP neighbours, the InfiniBand subnet's links, SONiC WRED
profiles), perftest (its outputs are read from failed runs too, where the exit status says why: rdmatool.perf), and
the switch views, read through netmiko, of which no capture here shows what each NOS prints for an empty table
(NX-OS answers `| json` of an empty table with nothing; the Cumulus per-port views already accept an empty answer).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rdmatool import bundle as bundle_io
from rdmatool import parsers
from rdmatool.diagnose.pipeline import diagnose_analysis
from rdmatool.errors import EmptyOutput, ParseError
from rdmatool.model import Verdict
from rdmatool.table.analysis import analyse_bundle
from tests.fabric import fastpath, scenario
from tests.fabric.shims._base import Ctx
from tests.pods import bundle as pods

# parser → how its message names the tool
REFUSED = {
    "perfquery": "perfquery", "ibstat": "ibstat", "ethtool_stats": "ethtool -S", "mlnx_qos": "mlnx_qos",
    "ethtool_info": "ethtool -i", "ibv_devinfo": "ibv_devinfo", "ibstatus": "ibstatus", "sysfs_counters": "grep",
    "dcqcn_sysfs": "grep", "psi": "grep", "loadavg": "cat /proc/loadavg", "show_gids": "show_gids",
    "nvidia_smi": "nvidia-smi", "dcgmi_dmon": "dcgmi dmon", "rocm_smi": "rocm-smi", "fw_query": "flint / mlxfwmanager",
    "mlxlink": "mlxlink", "nccl_tests": "the nccl-tests program", "verbs": "the verbs read", "nccl_debug": "NCCL",
    "ibnetdiscover": "ibnetdiscover", "sminfo": "sminfo", "ibqueryerrors": "ibqueryerrors",
}
LEGITIMATE = {"lldpctl", "iblinkinfo", "sonic_ecn", "perftest"}
EMPTY = ["", "\n", "  \n\t\n", "\r\n\r\n", "   "]


def test_every_parser_is_decided() -> None:
    switch = {name for name, info in parsers.registry().items() if info.module.startswith("rdmatool.parsers.switch.")}
    decided = set(REFUSED) | LEGITIMATE | switch
    assert decided == set(parsers.names()), sorted(set(parsers.names()) ^ decided)
    assert not set(REFUSED) & (LEGITIMATE | switch)


@pytest.mark.parametrize("text", EMPTY, ids=repr)
@pytest.mark.parametrize("name", sorted(REFUSED))
def test_an_empty_output_is_refused_naming_the_tool(name: str, text: str) -> None:
    with pytest.raises(EmptyOutput) as caught:
        parsers.parse(name, text)
    assert isinstance(caught.value, ParseError) and caught.value.parser == name
    assert caught.value.message == f"empty output: {REFUSED[name]} printed nothing"
    assert caught.value.located("snapshots/0/gpu01/x.txt") == (
        f"{name}: snapshots/0/gpu01/x.txt: empty output: {REFUSED[name]} printed nothing")


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_prompt_alone_is_an_empty_output(name: str) -> None:
    with pytest.raises(EmptyOutput):
        parsers.parse(name, "root@gpu01:~# \n")


@pytest.mark.parametrize("name", sorted(set(parsers.names()) - set(REFUSED)))
def test_where_empty_is_legitimate_it_parses_to_nothing(name: str) -> None:
    assert parsers.parse(name, "") == [] and parsers.parse(name, " \n\n") == []


def test_blank_lines_around_a_real_output_are_not_an_empty_output() -> None:
    samples = parsers.parse("loadavg", "\n\n  0.52 0.58 0.59 2/1234 56789\n\n")
    assert [s.metric for s in samples] == ["load1", "load5", "load15"]


# --- in a collection ------------------------------------------------------------------------------------------------


# 124: the command's own timeout fired; None: it never finished (the target's deadline cut it: no exit status)
@pytest.mark.parametrize("unfinished", [124, None])
def test_an_empty_ethtool_output_is_a_parse_failure_of_the_diagnosis(tmp_path: Path, unfinished: int | None) -> None:
    pod = pods.healthy_pod()
    pod.host("gpu02").printed_nothing.add("ethtool_stats")  # exit 0, nothing printed
    pod.host("gpu03").failing["ethtool_stats"] = unfinished  # a command failure, nothing to parse
    result = diagnose_analysis(analyse_bundle(bundle_io.read(pods.write(pod, tmp_path / "bundle"))))
    parse = [f for f in result.failures if f["kind"] == "parse"]
    assert [(f["target"], f["parser"], f["qualifier"], f["snapshots"]) for f in parse] == [
        ("gpu02", "ethtool_stats", "ens1f0np0", [0, 1])]
    assert parse[0]["error"] == ("ethtool_stats: snapshots/0/gpu02/ethtool_stats.ens1f0np0: empty output: "
                                 "ethtool -S printed nothing")
    assert [(f["target"], f["kind"]) for f in result.failures if f["kind"] != "parse"] == [("gpu03", "command")]
    assert result.verdict is Verdict.INCONCLUSIVE  # what could not be read is never a pass


# --- the simulated fabric never answers a successful read of these tools with nothing -------------------------------


@pytest.mark.parametrize("name", ["healthy", "degraded"])
def test_the_simulated_fabric_prints_something_whenever_these_tools_succeed(name: str) -> None:
    checked = 0
    for address, spec in scenario.load(name).effective()["targets"].items():
        if spec["kind"] != "host":
            continue
        ctx = Ctx("", address, {**spec, "epoch": 0.0}, "", 100.0)
        for tool, cases in fastpath.arg_lists(spec).items():
            if tool in {t for t in spec["tools"]["missing"] + spec["tools"]["hanging"]}:
                continue  # not installed (exit 127) or hanging (the script's timeout: exit 124)
            for argv, _ in cases:
                out, _, status = fastpath.capture(tool, ctx, argv)
                assert status != 0 or out.strip(), (name, spec["name"], tool, argv)
                checked += status == 0
    assert checked > 100
