"""The gate's nccl stage without a fabric: which nodes run with what environment and line rate
(rdmatool.nccl.bench.pick), what an mpirun'd all_reduce_perf printed (the golden fixture of two nodes with their
NCCL INFO records), how the nccl playbook judges it (the trigger of nccl_allreduce_below_line_rate, and a node on
sockets named by the log rules), the stage's reason when nccl-tests or mpirun is missing, and the audited command."""

from __future__ import annotations

import pandas as pd
import pytest

from rdmatool import commands
from rdmatool.gate import nccl_stage
from rdmatool.nccl import bench
from rdmatool.nccl.recipe import HostRecipe, Port, Recipe, Setting
from rdmatool.perf.remote import RunResult
from rdmatool.rules import playbook
from rdmatool.table.analysis import FACT_COLUMNS
from tests.helpers import PARSER_FIXTURES, REPO

RUN = (PARSER_FIXTURES / "nccl_tests" / "all_reduce_mpirun_two_nodes_nccl_info.txt").read_text()
ENV = {"NCCL_IB_HCA": "=mlx5_0:1,mlx5_1:1", "NCCL_IB_GID_INDEX": "3", "NCCL_IB_TC": "104"}


def host(name: str) -> HostRecipe:
    rails = [Port("mlx5_0", 1, "Ethernet", True), Port("mlx5_1", 1, "Ethernet", True)]
    return HostRecipe(name, "compute", rails, [], {k: Setting(v, "test") for k, v in ENV.items()})


def rates(*rows: tuple[str, str, float]) -> pd.DataFrame:
    return pd.DataFrame([{**dict.fromkeys(FACT_COLUMNS), "target": t, "entity": e, "metric": "link_rate_gbps",
                          "value": v} for t, e, v in rows], columns=FACT_COLUMNS)


RECIPE = Recipe([host("gpu01"), host("gpu02")], {"stor01": "role storage: not a compute host"}, {}, [], [], {})
FACTS = rates(("gpu01", "mlx5_0/1", 200.0), ("gpu01", "mlx5_1/1", 200.0), ("gpu02", "mlx5_0/1", 200.0),
              ("gpu02", "mlx5_1/1", 100.0))
RULES = playbook.load_dir(REPO / "playbooks")


def nodes(overrides: dict | None = None) -> list[bench.Node]:
    picked, _ = bench.pick(RECIPE, FACTS, [("gpu01", "10.0.0.1"), ("gpu02", "10.0.0.2")], 2, overrides or {})
    return picked


def test_the_first_hosts_with_a_recipe_run_with_it_and_the_site_overrides_laid_over() -> None:
    picked, passed = bench.pick(RECIPE, FACTS, [("stor01", "10.0.0.9"), ("gpu01", "10.0.0.1"),
                                                ("gpu02", "10.0.0.2")], 2, {"NCCL_IB_TC": "136"})
    assert [n.name for n in picked] == ["gpu01", "gpu02"] and passed == {"stor01": "role storage: not a compute host"}
    assert picked[0].env == {**ENV, "NCCL_IB_TC": "136"} and picked[0].recipe.env() == ENV
    # the slowest node's summed rails bound a ring: gpu02's second rail reads 100 Gb/s
    assert [n.line_gbps for n in picked] == [400.0, 300.0] and bench.line_gbps(picked) == 300.0


def test_a_healthy_run_reads_its_bus_bandwidth_and_what_nccl_chose_and_passes() -> None:
    outcome = bench.read(RUN)
    assert outcome.busbw_gbps == pytest.approx(368.96) and outcome.size_bytes == 1 << 30 and not outcome.errors
    assert {(p.host, p.net) for p in outcome.processes} == {("gpu01", "IB"), ("gpu02", "IB")}
    fast = [bench.Node(n.name, n.address, n.recipe, n.env, 400.0) for n in nodes()]
    assert bench.judge(fast, RECIPE, outcome, RULES) == []
    assert bench.summary(fast, outcome).endswith("bus bandwidth 369.0 Gb/s, 92.2 % of 400 Gb/s")


def test_a_slow_run_is_named_with_its_nodes_line_rate_and_recipe() -> None:
    outcome = bench.read(RUN.replace("  24.60   46.12    N/A", "  10.00   18.75    N/A"))
    (found,) = bench.judge(nodes(), RECIPE, outcome, RULES)
    assert (found.rule, found.target, found.entity) == ("nccl_allreduce_below_line_rate", "fabric",
                                                        "all_reduce_perf gpu01,gpu02")
    assert "150.0 Gb/s" in found.symptom and "(300 Gb/s)" in found.symptom, found.symptom
    assert "NCCL_IB_HCA==mlx5_0:1,mlx5_1:1 NCCL_IB_GID_INDEX=3 NCCL_IB_TC=104" in found.symptom
    text = found.symptom + found.cause + found.check + found.fix
    assert "{" not in text, text


def test_a_node_on_sockets_is_named_by_the_log_rules() -> None:
    socket = RUN.replace(
        "gpu02:38820:38820 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE [RO]; OOB "
        "ens1f0np0:192.168.1.2<0>\ngpu02:38820:38820 [0] NCCL INFO Using network IB",
        "gpu02:38820:38820 [0] NCCL INFO NET/IB : No device found.\ngpu02:38820:38820 [0] NCCL INFO NET/Socket : "
        "Using [0]ens1f0np0:192.168.1.2<0>\ngpu02:38820:38820 [0] NCCL INFO Using network Socket")
    assert socket != RUN
    found = bench.judge([bench.Node(n.name, n.address, n.recipe, n.env, 400.0) for n in nodes()], RECIPE,
                        bench.read(socket), RULES)
    assert [(f.rule, f.target) for f in found] == [("nccl_socket_fallback", "gpu02")]


class Answering:
    """A node that answers the probe with what it has installed."""

    def __init__(self, *found: str) -> None:
        self.found = found

    def run(self, command: str, timeout: float) -> RunResult:
        assert command == commands.nccl_tests_probe_command("all_reduce_perf")
        return RunResult(0, "".join(f"found {f}\n" for f in self.found), "")


def test_missing_nccl_tests_or_mpirun_is_the_stages_reason() -> None:
    assert nccl_stage._probe({"gpu01": Answering("all_reduce_perf", "mpirun"), "gpu02": Answering("mpirun")},
                             "all_reduce_perf", "gpu01") == "gpu02: all_reduce_perf (nccl-tests) not installed"
    reason = nccl_stage._probe({"gpu01": Answering("all_reduce_perf"), "gpu02": "gpu02: connection refused"},
                               "all_reduce_perf", "gpu01")
    assert reason == ("gpu01: mpirun not installed (nccl-tests runs on several nodes only under MPI); "
                      "gpu02: connection refused")
    assert nccl_stage._probe({"gpu01": Answering("all_reduce_perf", "mpirun")}, "all_reduce_perf", "gpu01") is None


def test_the_command_gives_each_node_its_environment_and_refuses_what_a_shell_would_read() -> None:
    command = commands.nccl_tests_command([("10.0.0.1", ENV), ("gpu02", {"NCCL_IB_GID_INDEX": "5"})],
                                          "/opt/nccl-tests/build/all_reduce_perf", 1 << 30, 8, 20, 5, 60)
    assert command.startswith("exec timeout -k 2 60 env ")
    first, second = command.split(" mpirun ", 1)[1].split(" : ")
    assert first.startswith("-np 1 -host 10.0.0.1 env NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET ")
    assert " NCCL_IB_HCA==mlx5_0:1,mlx5_1:1 " in first and "NCCL_IB_GID_INDEX=5" in second
    assert second.endswith("/opt/nccl-tests/build/all_reduce_perf -b 1073741824 -e 1073741824 -f 2 -g 8 -n 20 "
                           "-w 5 -c 0")
    for ranks, binary in ((([("a;b", {})] * 2), "all_reduce_perf"),
                          ([("gpu01", {"NCCL_IB_HCA": "$(reboot)"}), ("gpu02", {})], "all_reduce_perf"),
                          ([("gpu01", {"LD_PRELOAD": "x"}), ("gpu02", {})], "all_reduce_perf"),
                          ([("gpu01", {}), ("gpu02", {})], "-oProxyCommand=x")):
        with pytest.raises(ValueError):
            commands.nccl_tests_command(ranks, binary, 1 << 20, 8, 20, 5, 60)
