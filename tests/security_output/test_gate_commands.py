"""Commands built from what devices said, outside the suggestions: the gate's nccl-tests run (its recipe names the
hosts' own devices) and `rdmatool trial`'s revert lines. A hostile device name leaves its host out of the run, never
the stage; whatever runs or is printed as a command splits into exactly the arguments meant; device text printed
among the commands is on one line, without control bytes."""

from __future__ import annotations

import shlex

import pandas as pd
import pytest

from rdmatool import commands
from rdmatool.cli import trial_cmd
from rdmatool.nccl import bench
from rdmatool.nccl.recipe import HostRecipe, Port, Recipe, Setting
from rdmatool.table.analysis import FACT_COLUMNS
from rdmatool.trial.revert import revert
from tests.security_output.test_every_view import RAW

HOSTILE_HCAS = ["mlx5_0;reboot", "$(id)", "mlx5_0 -x LD_PRELOAD=/tmp/x.so", "mlx5\x1b]52;c;cm0=\x07", "m`id`",
                "mlx5_0\nreboot", "'", "\ud800"]


def host(name: str, hca: str = "mlx5_0", gid: str = "3") -> HostRecipe:
    settings = {"NCCL_IB_HCA": Setting(f"={hca}:1", "test"), "NCCL_IB_GID_INDEX": Setting(gid, "test")}
    return HostRecipe(name, "compute", [Port(hca, 1, "Ethernet", True)], [], settings)


@pytest.mark.parametrize("hca", HOSTILE_HCAS)
def test_a_hostile_device_name_leaves_its_host_out_of_the_nccl_run(hca: str) -> None:
    built = Recipe([host("gpu01", hca), host("gpu02"), host("gpu03")], {}, {}, [], [], {})
    facts = pd.DataFrame(columns=FACT_COLUMNS)
    nodes, passed = bench.pick(built, facts, [("gpu01", "10.0.0.1"), ("gpu02", "10.0.0.2"), ("gpu03", "10.0.0.3")],
                               2, {"NCCL_IB_TC": "106"})
    assert [n.name for n in nodes] == ["gpu02", "gpu03"]
    assert "not one the nccl-tests command takes" in passed["gpu01"] and passed["gpu01"].isprintable()
    assert not RAW.search(passed["gpu01"])
    command = commands.nccl_tests_command([(n.address, n.env) for n in nodes], "all_reduce_perf", 1 << 20, 8, 20,
                                          5, 60)
    words = shlex.split(command)
    assert words.count("NCCL_IB_HCA==mlx5_0:1") == 2 and words.count("NCCL_IB_TC=106") == 2


def test_a_name_like_an_option_stays_one_assignment() -> None:
    built = Recipe([host("gpu01", "--mca"), host("gpu02")], {}, {}, [], [], {})
    nodes, _ = bench.pick(built, pd.DataFrame(columns=FACT_COLUMNS), [("gpu01", "a"), ("gpu02", "b")], 2, {})
    words = shlex.split(commands.nccl_tests_command([(n.address, n.env) for n in nodes], "all_reduce_perf", 1 << 20,
                                                    8, 20, 5, 60))
    assert "NCCL_IB_HCA==--mca:1" in words and "--mca" not in words  # an environment value, never mpirun's option


def test_a_hostile_gid_index_is_refused_too() -> None:
    built = Recipe([host("gpu01", gid="3 -x A=1"), host("gpu02"), host("gpu03")], {}, {}, [], [], {})
    nodes, passed = bench.pick(built, pd.DataFrame(columns=FACT_COLUMNS),
                               [("gpu01", "a"), ("gpu02", "b"), ("gpu03", "c")], 2, {})
    assert [n.name for n in nodes] == ["gpu02", "gpu03"] and "NCCL_IB_GID_INDEX" in passed["gpu01"]


FACTS = pd.DataFrame([{**dict.fromkeys(FACT_COLUMNS), "target": "gpu01", "kind": "host", "platform": "linux",
                       "entity": "eth0", "metric": "pfc_enabled", "value": 1.0}], columns=FACT_COLUMNS)


def change(entity: str, setting: str, before, after, priority=None) -> dict:
    return {"target": "gpu01", "entity": entity, "setting": setting, "before": before, "after": after,
            "priority": priority}


def test_revert_commands_split_into_the_arguments_meant_and_hostile_values_are_said_not_run(capsys) -> None:
    changes = [change("eth0", "pfc_priorities", "3", "3,4"),
               change("eth0\nreboot", "pfc_priorities", "3", "3,4"),
               change("eth1", "pfc_priorities", "3;reboot\x1b]52;c;x\x07", "3"),
               change("eth0", "roce_np_enabled", "inf", "0", priority=3)]  # was an OverflowError: no trial at all
    items = revert(changes, FACTS, {"roce_priority": 3})
    assert shlex.split(items[0]["commands"][0]) == ["mlnx_qos", "-i", "eth0", "--pfc", "0,0,0,1,0,0,0,0"]
    assert [bool(i["commands"]) for i in items] == [True, False, False, False]
    effect = {"label": "bus bandwidth", "unit": "", "before": None, "after": None, "relative": None,
              "effect": "not measured"}
    result = {"before": {"runs": [1], "path": "a", "source": "bundle"},
              "after": {"runs": [1], "path": "b", "source": "bundle"}, "changes": changes, "effects": [effect],
              "notes": [], "revert": items, "verdict": "hurt", "action": "revert", "reason": "x"}
    trial_cmd._print(result)
    out = capsys.readouterr().out
    assert not RAW.search(out)
    assert not any(line.strip().startswith(("reboot", "52;")) for line in out.splitlines()), out
    assert "restore pfc_priorities of gpu01 eth0\\nreboot to 3" in out


def test_perf_storage_lines_show_device_text_as_characters(capsys) -> None:
    """`perf run --mode storage` prints each node's NICs and perftest errors (the hosts' text)."""
    from rdmatool.cli import _perf_storage

    _perf_storage._say("stor01: - read by gpu01; gpu01: ib_read_bw: \x1b]52;c;cm0=\x07 mlx5\x9b2J")
    out = capsys.readouterr().out
    assert "\\e]52;c;cm0=\\a" in out and not RAW.search(out)


def test_nccl_records_claiming_another_host_blame_no_one() -> None:
    """A process's NCCL records name the host by the hostname its node set: gpu02 calling itself gpu01, or a record
    naming gpu05 (a host outside the run), on sockets, leave gpu01 and gpu05 unjudged instead of drained."""
    from tests.nccl.test_bench import RECIPE, RULES, RUN
    from tests.nccl.test_bench import nodes as run_nodes

    sockets = RUN.replace("NET/IB", "NET/Socket").replace("Using network IB", "Using network Socket")
    fast = [bench.Node(n.name, n.address, n.recipe, n.env, 400.0) for n in run_nodes()]
    honest = bench.judge(fast, RECIPE, bench.read(sockets), RULES)
    assert {f.target for f in honest} == {"gpu01", "gpu02"}  # what the rules say of a run on sockets, per node
    for claimed in ("gpu01", "gpu05"):
        outcome = bench.read(sockets.replace("gpu02", claimed))
        found = bench.judge(fast, RECIPE, outcome, RULES)
        assert claimed not in {f.target for f in found}, [(f.target, f.rule) for f in found]
        assert claimed in bench.summary(fast, outcome) and "not judged" in bench.summary(fast, outcome)


@pytest.mark.parametrize("device", ["mlx5_0;reboot", "mlx5\x1b]52;c;x\x07", "mlx5_0\nexport A", "../mlx5", "$(id)"])
def test_a_device_name_no_launcher_can_carry_names_no_rail(device: str) -> None:
    """The recipe's rails (what `nccl env` writes into shell exports, a TaskProlog, YAML and the gate's command)
    come only from device names of an RDMA device's characters; the host's other port stays."""
    from rdmatool.nccl import recipe

    def row(entity: str, metric: str, text: str) -> dict:
        return {**dict.fromkeys(FACT_COLUMNS), "target": "gpu01", "kind": "host", "entity": entity,
                "metric": metric, "text": text}

    facts = pd.DataFrame([row(f"{d}/1", m, t) for d in (device, "mlx5_1") for m, t in
                          (("link_layer", "Ethernet"), ("port_state", "ACTIVE"))], columns=FACT_COLUMNS)
    assert [p.name for p in recipe._ports(facts)["gpu01"].values()] == ["mlx5_1:1"]
