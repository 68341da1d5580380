"""Per-peer perftest outputs as other writers name them: the qualifier only the peer's target name
(`perftest.gpu02.txt`), the test then the peer (`perftest.ib_write_bw.gpu02.txt`), or a command whose server address
is another target's (`ib_write_bw -d mlx5_0 10.0.0.2`) are read as the pair's result; an output the reader skipped is
a failure of the diagnosis, in every view, so that a bundle whose only perftest outputs were skipped never passes."""

from __future__ import annotations

import json
from pathlib import Path

from rdmatool.diagnose.pipeline import diagnose_analysis, diagnose_bundle
from rdmatool.model import Verdict
from rdmatool.pairs.bundle_results import pair_results
from rdmatool.report import html, markdown, page
from rdmatool.table.analysis import analyse_path
from tests.analysis.pairs_bundle import add_pair_results, perftest_output
from tests.bundle_sides import put_output
from tests.pods import bundle as pods

# the pod writer's addresses: gpu0k at 10.0.0.k
ADDRESS = {f"gpu0{k}": f"10.0.0.{k}" for k in range(1, 5)}


def _pod(tmp_path: Path, gpus: int = 3) -> Path:
    pod = pods.healthy_pod(gpus=gpus)
    for host in pod.hosts:
        host.bw, host.lat = None, None
    return pods.write(pod, tmp_path / "pod")


def _foreign(bundle: Path, client: str, stem: str, bw: float, side: dict | None = None) -> Path:
    """An output another tool wrote into the client's folder of snapshot 1 (beside the pack the pod has)."""
    folder = bundle / "snapshots" / "1" / client
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{stem}.txt").write_text(perftest_output(bw), encoding="utf-8")
    if side is not None:
        (folder / f"{stem}.json").write_text(json.dumps(side), encoding="utf-8")
    return folder / f"{stem}.txt"


def _pairs(path: Path) -> dict[tuple[str, str, str], float | None]:
    return {(r.client, r.server, r.test): r.bw_avg_gbps for r in pair_results(analyse_path(path))}


def test_a_qualifier_naming_only_the_peer_is_read_as_per_peer(tmp_path: Path) -> None:
    path = _pod(tmp_path)
    _foreign(path, "gpu01", "perftest.gpu02", 390.0)  # the test from the output's own title
    _foreign(path, "gpu01", "perftest.ib_write_bw.gpu03", 389.0)
    _foreign(path, "gpu02", "perftest.ib_write_bw_gpu03", 120.0)  # `@` made safe, no side data
    assert _pairs(path) == {("gpu01", "gpu02", "ib_write_bw"): 390.0, ("gpu01", "gpu03", "ib_write_bw"): 389.0,
                            ("gpu02", "gpu03", "ib_write_bw"): 120.0}


def test_a_command_naming_a_targets_address_is_read_as_per_peer(tmp_path: Path) -> None:
    path = _pod(tmp_path)
    for n, (client, server) in enumerate((("gpu01", "gpu02"), ("gpu01", "gpu03"), ("gpu02", "gpu03"))):
        side = {"command": f"ib_write_bw -d mlx5_0 --report_gbits {ADDRESS[server]}", "exit_code": 0}
        _foreign(path, client, f"perftest.run{n}", 390.0 - n, side)
    assert _pairs(path) == {("gpu01", "gpu02", "ib_write_bw"): 390.0, ("gpu01", "gpu03", "ib_write_bw"): 389.0,
                            ("gpu02", "gpu03", "ib_write_bw"): 388.0}


def test_a_qualifier_naming_no_target_stays_the_hosts_own(tmp_path: Path) -> None:
    path = _pod(tmp_path)
    _foreign(path, "gpu01", "perftest.mlx5_0", 390.0, {"command": "ib_write_bw -d mlx5_0 --report_gbits 10.9.9.9"})
    _foreign(path, "gpu02", "perftest.gpu02", 390.0)  # its own name: a loopback run, no pair
    assert _pairs(path) == {}


def test_a_foreign_slow_node_is_judged_by_the_attribution(tmp_path: Path) -> None:
    path = _pod(tmp_path)
    _foreign(path, "gpu01", "perftest.gpu02", 390.0)
    _foreign(path, "gpu01", "perftest.gpu03", 120.0)
    _foreign(path, "gpu02", "perftest.gpu03", 121.0)
    result = diagnose_analysis(analyse_path(path))
    assert [(f.rule, f.target) for f in result.findings if f.rule.startswith("perf_")] == [("perf_bad_node", "gpu03")]


def test_a_skipped_perftest_output_is_a_failure_and_the_verdict_is_not_pass(tmp_path: Path) -> None:
    path = _pod(tmp_path)
    _foreign(path, "gpu01", "perftest.ib_write_bw@gpu02", 120.0)  # not a file name the format has
    folder = path / "snapshots" / "1" / "gpu02"
    _foreign(path, "gpu02", "perftest.ib_write_bw_gpu03", 120.0)
    (folder / "perftest.ib_write_bw_gpu03.json").write_text(json.dumps({"exit_code": "0"}))  # wrong type
    said: list[str] = []
    result = diagnose_bundle(path, on_skipped=said.append)
    unread = [f for f in result.failures if f["kind"] == "unread"]
    assert [(f["target"], f["parser"], f["snapshots"]) for f in unread] == [("gpu01", "perftest", [1]),
                                                                             ("gpu02", "perftest", [1])]
    assert "perftest.ib_write_bw@gpu02.txt: not an output file name" in unread[0]["error"]
    assert "key 'exit_code'" in unread[1]["error"]
    assert [f["error"] for f in unread] == said  # stderr and the views say the same
    assert result.verdict is not Verdict.PASS
    assert result.verdict is Verdict.INCONCLUSIVE, [f.rule for f in result.findings]
    shown = markdown.render(result)
    assert "perftest.ib_write_bw@gpu02.txt" in shown
    assert any(f["kind"] == "unread" for f in json.loads(json.dumps(result.as_json()))["failures"])


def test_a_pack_copy_of_a_folder_output_is_no_failure(tmp_path: Path) -> None:
    path = add_pair_results(_pod(tmp_path), {("gpu01", "gpu02"): 390.0, ("gpu01", "gpu03"): 391.0,
                                             ("gpu02", "gpu03"): 389.0})
    _foreign(path, "gpu01", "perftest.ib_write_bw_gpu02", 390.0)  # the same name as in its pack
    said: list[str] = []
    result = diagnose_bundle(path, on_skipped=said.append)
    assert said and "whose output is read" in said[0]
    assert not [f for f in result.failures if f["kind"] == "unread"]
    assert result.verdict is Verdict.PASS


def test_a_packed_output_with_no_file_name_is_an_unread_failure_in_the_page_once(tmp_path: Path) -> None:
    path = _pod(tmp_path)
    put_output(path, 1, "gpu03", "perftest.ib_write_bw@gpu01", perftest_output(390.0), {"exit_code": 0})
    result = diagnose_bundle(path)
    (unread,) = [f for f in result.failures if f["kind"] == "unread"]
    assert (unread["target"], unread["parser"]) == ("gpu03", None)
    assert "gpu03: unread: snapshots/1/gpu03.outputs: output 'perftest.ib_write_bw@gpu01'" in markdown.render(result)
    shown = html.render(page.build(path))
    failures = shown[shown.index('<section id="failures">'):]
    failures = failures[:failures.index("</section>")]
    assert failures.count("perftest.ib_write_bw@gpu01") == 1  # a failure, not also a "not read" line
    assert diagnose_bundle(path).failures == result.failures  # the stored samples say it again
