"""What storage reads did to the compute class (rdmatool.perf.storage_pauses): the ports of the storage nodes, their
readers and their switches paused on the site's RoCE priority beyond 1 % of the read are named with the storage
nodes and the priority, a background trickle is not, another priority's pauses are not the compute class's, and
the finding says whether the storage nodes share the compute class or leak into it. Also the storage figures of a
node read through two NICs: judged against both NICs' rate, named by its weakest NIC."""

from __future__ import annotations

from rdmatool.diagnose.pipeline import default_playbooks
from rdmatool.gate.judge import analysis_of
from rdmatool.perf import storage, storage_pauses
from rdmatool.perf.incast import Group
from rdmatool.perf.model import PairResult
from rdmatool.rules import playbook
from rdmatool.table.analysis import FACT_COLUMNS

KINDS = {"stor01": "host", "gpu01": "host", "gpu02": "host", "leaf01": "switch"}


def pause_figures(grown: dict[tuple[str, str, str], float], priority: int = 3, storage_priority: int = 3,
                  seconds: float = 10.0) -> dict:
    """Two reads a `seconds` read apart in which each (target, port, metric) grew by its microseconds on priority 3;
    stor01 lossless on `storage_priority`."""
    def rows(after: bool) -> list[dict]:
        out = [{**dict.fromkeys(FACT_COLUMNS), "target": t, "kind": KINDS[t], "entity": e, "metric": m,
                "priority": 3, "raw_key": m, "flag": "", "value": 5.0e6 + (us if after else 0.0)}
               for (t, e, m), us in grown.items()]
        out.append({**dict.fromkeys(FACT_COLUMNS), "target": "stor01", "kind": "host", "entity": "ens2f0np0",
                    "metric": "pfc_enabled", "priority": storage_priority, "value": 1.0, "flag": ""})
        return out

    return storage_pauses.figures(analysis_of(rows(False)), analysis_of(rows(True)), ["stor01"], KINDS, priority,
                                  seconds, {"stor01": "ens2f0np0"})


def test_the_compute_class_paused_beyond_one_percent_is_named_with_the_storage_nodes() -> None:
    fig = pause_figures({("gpu01", "ens1f0np0", "rx_pause_duration_us"): 3.0e6,
                         ("leaf01", "Ethernet8", "tx_pause_duration_us"): 1.2e6,
                         ("gpu02", "ens1f0np0", "rx_pause_duration_us"): 60.0})
    assert [(p["target"], p["entity"], round(p["share"], 3)) for p in fig["paused"]] == [
        ("gpu01", "ens1f0np0", 0.3), ("leaf01", "Ethernet8", 0.12)]
    assert [p["target"] for p in fig["ports"]] == ["gpu01", "leaf01", "gpu02"]  # the trickle read, not named
    [found] = storage.findings(storage_pauses.facts(fig), playbook.load_dir(default_playbooks()))
    assert (found.rule, found.target, found.entity) == ("storage_pauses_compute", "fabric", "storage")
    assert found.symptom.startswith("Storage reads from stor01 paused the compute class (priority 3) on gpu01 "
                                    "ens1f0np0 (30.0 % of the read), leaf01 Ethernet8 (12.0 % of the read)")
    assert "the storage nodes share the compute class (priority 3)" in found.symptom


def test_the_compute_priority_is_the_sites_and_another_class_leaking_in_is_said() -> None:
    grown = {("gpu01", "ens1f0np0", "rx_pause_duration_us"): 3.0e6}
    assert pause_figures(grown, priority=4)["paused"] == []  # priority 3's pauses are not a class-4 site's compute
    leaked = storage_pauses.facts(pause_figures(grown, storage_priority=4))
    said = next(r["text"] for r in leaked if r["metric"] == "storage_class")
    assert said.startswith("the storage nodes' class (priority 4) differs from the compute class, yet")
    rules = playbook.load_dir(default_playbooks(), site={"roce_priority": 4})
    assert storage.findings(storage_pauses.facts(pause_figures(grown, priority=4)), rules) == []


def test_background_pauses_alone_are_silent() -> None:
    fig = pause_figures({("gpu01", "ens1f0np0", "rx_pause_duration_us"): 90.0})
    rows = storage_pauses.facts(fig)
    assert next(r["text"] for r in rows if r["metric"] == "storage_compute_pause_verdict") == "clear"
    assert storage.findings(rows, playbook.load_dir(default_playbooks())) == []


def test_a_node_read_through_two_nics_is_judged_against_both_and_named_by_the_weaker() -> None:
    [[plain]] = storage.plan(["stor01"], ["gpu01", "gpu02", "gpu03", "gpu04"], 4)
    rounds = storage.with_nics([[plain]], {"stor01": ["mlx5_1", "mlx5_0"]})
    [[group]] = rounds
    assert isinstance(group, Group) and dict(group.receiver_nics) == {
        "gpu01": "mlx5_0", "gpu02": "mlx5_1", "gpu03": "mlx5_0", "gpu04": "mlx5_1"}
    assert storage.with_nics([[plain]], {"stor01": ["mlx5_0"]})[0][0].receiver_nics == ()  # one NIC: as chosen
    gbps = {"gpu01": 96.0, "gpu02": 48.0, "gpu03": 96.0, "gpu04": 48.0}  # mlx5_1 at half its rate
    results = [PairResult("stor01", c, "ib_read_bw", 65536, v, v, None, None, 0, "", "", 1.0) for c, v in gbps.items()]
    fig = storage.figures(rounds, results, {"stor01": 400.0}, 0.806, nic_rates={"stor01": {"mlx5_0": 200.0,
                                                                                          "mlx5_1": 200.0}})
    [node] = fig["nodes"]
    assert node["share"] == 288.0 / 400.0 and node["weakest_nic"] == "mlx5_1"
    assert [(n["device"], n["delivered_gbps"], n["share"]) for n in node["nics"]] == [
        ("mlx5_0", 192.0, 0.96), ("mlx5_1", 96.0, 0.48)]
    entities = {r["entity"] for r in storage.facts(fig, {"stor01": "mlx5_0"}) if r["target"] == "stor01"}
    assert entities == {"mlx5_1"}
    assert storage.figures(rounds, results, {"stor01": 400.0}, slow_share=0.5)["slow_share_of_median"] == 0.5


def test_perf_run_prints_each_nic_of_a_node_read_through_several(monkeypatch, tmp_path, capsys) -> None:
    from types import SimpleNamespace

    from rdmatool.cli import _config, _perf_storage
    from rdmatool.model import Target

    monkeypatch.setattr(_config, "playbooks", lambda given: None)
    gbps = {"gpu01": 96.0, "gpu02": 48.0}
    monkeypatch.setattr(storage, "run", lambda session, rounds, deadline=None: [
        PairResult(g.receiver, c, "ib_read_bw", 65536, gbps[c], None, None, None, 0, "", "", 1.0)
        for r in rounds for g in r for c in g.senders])
    rail = SimpleNamespace(rate_gbps=200.0)
    hosts = {"stor01": SimpleNamespace(info=rail, rails={"mlx5_0": rail, "mlx5_1": rail})}
    session = SimpleNamespace(reachable=["stor01", "gpu01", "gpu02"], hosts=hosts, devices={"stor01": "mlx5_0"},
                              rails={"stor01": ["mlx5_0", "mlx5_1"]}, expected_gbps=lambda: {"stor01": 200.0})
    targets = [Target("stor01", "stor01", role="storage"), Target("gpu01", "gpu01"), Target("gpu02", "gpu02")]
    assert _perf_storage.run(session, targets, 2, tmp_path) == 0  # one node: its own median, not slow
    out = capsys.readouterr().out
    assert "stor01: 144.0 Gb/s (36% of 400 Gb/s) read by gpu01, gpu02 (per NIC: mlx5_0 48%, mlx5_1 24%)" in out


def test_a_counter_read_that_breaks_loses_the_pause_figures_not_the_run(monkeypatch, tmp_path) -> None:
    from types import SimpleNamespace

    from rdmatool.model import Target
    from rdmatool.perf import load_reads, storage_run

    def broken(*args):
        raise OSError("no route to leaf01")

    monkeypatch.setattr(load_reads, "read", broken)
    monkeypatch.setattr(storage, "run", lambda session, rounds, deadline=None: [
        PairResult("stor01", "gpu01", "ib_read_bw", 65536, 190.0, None, None, None, 0, "", "", 1.0)])
    session = SimpleNamespace(rails={}, hosts={}, devices={"stor01": "mlx5_0"}, expected_gbps=lambda: {"stor01": 200.0})
    done = storage_run.measure(session, storage.plan(["stor01"], ["gpu01"], 1), targets=[Target("stor01", "a")],
                               read_options=object(), folder=tmp_path)
    assert done.pauses is None and done.figures["nodes"][0]["share"] == 0.95
    assert {r["metric"] for r in done.rows} >= {"storage_read_efficiency"}
    assert not {r["metric"] for r in done.rows} & {"storage_compute_pause_verdict"}
