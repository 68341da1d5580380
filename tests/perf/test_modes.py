"""`perf run`'s files and its inconclusive test (rdmatool.perf.modes), without a session."""

from __future__ import annotations

import json
from pathlib import Path

from rdmatool.perf.model import NOT_RUN, Attribution, PairResult
from rdmatool.perf.modes import inconclusive, write_run


def pair(server: str, client: str, gbps: float | None, error: str | None = None) -> PairResult:
    return PairResult(server, client, "ib_write_bw", 65536, gbps, gbps, None, error, 0, "", "", 1.0)


CLEAN = Attribution(bad_nodes=(), bad_links=(), evidence={})


def test_the_run_writes_its_discovery_with_the_untested_nics_and_a_schedule_only_when_given(tmp_path: Path):
    results = [pair("a", "b", 390.0)]
    write_run(tmp_path / "plain", results, CLEAN, {"a": {"device": "mlx5_0"}}, {"a": {"mlx5_1": "port down"}})
    discovery = json.loads((tmp_path / "plain" / "discovery.json").read_text())
    assert discovery == {"a": {"device": "mlx5_0"}, "_untested_nics": {"a": {"mlx5_1": "port down"}}}
    assert (tmp_path / "plain" / "pairs.csv").is_file() and not (tmp_path / "plain" / "schedule.json").exists()
    write_run(tmp_path / "topo", results, CLEAN, {}, {}, {"rounds": 2, "bad_inter_leaf_links": []})
    assert json.loads((tmp_path / "topo" / "schedule.json").read_text())["rounds"] == 2


def test_inconclusive_when_a_pair_was_not_run_or_a_host_is_missing_never_when_all_measured():
    assert not inconclusive([pair("a", "b", 390.0)], CLEAN)
    assert inconclusive([pair("a", "b", None, NOT_RUN + "deadline reached")], CLEAN)
    missing = Attribution(bad_nodes=(), bad_links=(), evidence={}, missing=("c",))
    assert inconclusive([pair("a", "b", 390.0)], missing)
