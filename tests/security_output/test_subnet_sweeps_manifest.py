"""The manifest's `subnet_sweeps` record (which host's outputs are a snapshot's view of an InfiniBand subnet):
`bundle merge` keeps each shard's entries of the targets it keeps, and a hostile record (wrong types, a host that is
a path, huge lists) is refused by every reader with one line naming the file, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rdmatool.bundle.manifest import MAX_SWEEP_ENTRIES, check_manifest, read_manifest, subnet_sweeps
from rdmatool.bundle_ops.merge import merge
from rdmatool.cli import app
from rdmatool.errors import BundleError
from rdmatool.table import samples_store
from tests.pods import bundle as pods
from tests.test_bundle_merge import SHARD_A, SHARD_B, split


def sweep(host: str | None, snapshot: int, **more) -> dict:
    return {"sm_lid": 1, "snapshot": snapshot, "host": host, "port": "mlx5_0.1" if host else None,
            "complete": host is not None, "tools": ["sminfo", "ibnetdiscover"] if host else [], "tried": [], **more}


@pytest.fixture(scope="module")
def swept_shards(tmp_path_factory) -> list[Path]:
    """The pod in two shards, each of whose manifests says one of its hosts swept subnet 1 in both snapshots
    (shard 2 also records a subnet no host could sweep, and a host it tried first)."""
    whole = pods.write(pods.healthy_pod(), tmp_path_factory.mktemp("whole") / "whole")
    samples_store.load_or_parse(whole)
    shards = split(whole, [SHARD_A, SHARD_B], tmp_path_factory.mktemp("shards"))
    records = [[sweep("gpu01", 0), sweep("gpu01", 1)],
               [sweep("gpu02", 0, tried=[{"host": "stor01", "error": "no subnet sweep tool installed on stor01"}]),
                sweep("gpu02", 1), {**sweep(None, 0), "sm_lid": 7}]]
    for shard, record in zip(shards, records, strict=True):
        manifest = json.loads((shard / "manifest.json").read_text())
        (shard / "manifest.json").write_text(json.dumps({**manifest, "subnet_sweeps": record}))
    return shards


def test_merge_keeps_each_shard_s_subnet_sweeps(swept_shards, tmp_path) -> None:
    merge(swept_shards, tmp_path / "all")
    record = subnet_sweeps(read_manifest(tmp_path / "all"))
    assert [(r["sm_lid"], r["snapshot"], r["host"]) for r in record] == [
        (1, 0, "gpu01"), (1, 0, "gpu02"), (1, 1, "gpu01"), (1, 1, "gpu02"), (7, 0, None)]
    assert record[1]["tried"] == [{"host": "stor01", "error": "no subnet sweep tool installed on stor01"}]
    assert record[0]["port"] == "mlx5_0.1" and record[0]["tools"] == ["sminfo", "ibnetdiscover"]


def test_merge_drops_the_sweeps_of_a_host_another_shard_s_data_replaced(swept_shards, tmp_path) -> None:
    """`--prefer last` takes gpu01 from a later copy that swept nothing: the first shard's gpu01 sweep, whose outputs
    are left out, is no longer named as the subnet's view."""
    from rdmatool.bundle_ops.merge import MergeOptions
    from tests.test_bundle_merge import rewrite_manifest

    def only_gpu01(manifest: dict) -> None:
        manifest["subnet_sweeps"] = []

    later = rewrite_manifest(swept_shards[0], tmp_path / "later", only_gpu01)
    merge([swept_shards[0], later], tmp_path / "all", MergeOptions(prefer="last"))
    assert subnet_sweeps(read_manifest(tmp_path / "all")) == []


BIG = MAX_SWEEP_ENTRIES + 1
HOSTILE = {
    "not-a-list": ({"host": "gpu01"}, "key subnet_sweeps: expected a list"),
    "huge": ([sweep("gpu01", 0)] * BIG, f"at most {MAX_SWEEP_ENTRIES:,} entries"),
    "entry-text": (["gpu01"], "key subnet_sweeps[0]: expected an object"),
    "lid-text": ([{**sweep("gpu01", 0), "sm_lid": "1"}], "key subnet_sweeps[0].sm_lid: expected a whole number"),
    "negative-snapshot": ([sweep("gpu01", -1)], "key subnet_sweeps[0].snapshot"),
    "host-path": ([sweep("../../etc", 0)], "key subnet_sweeps[0].host: expected a target name"),
    "host-newline": ([sweep("gpu01\n", 0)], "key subnet_sweeps[0].host"),
    "host-number": ([sweep("gpu01", 0) | {"host": 5}], "key subnet_sweeps[0].host"),
    "port-escape": ([sweep("gpu01", 0) | {"port": "mlx5_0.1\x1b]52;c;x\x07"}], "key subnet_sweeps[0].port"),
    "complete-text": ([sweep("gpu01", 0) | {"complete": "yes"}], "key subnet_sweeps[0].complete"),
    "partial-list": ([sweep("gpu01", 0) | {"partial": ["x"]}], "key subnet_sweeps[0].partial"),
    "tools-object": ([sweep("gpu01", 0) | {"tools": {"a": 1}}], "key subnet_sweeps[0].tools"),
    "tools-huge": ([sweep("gpu01", 0) | {"tools": ["x"] * BIG}], "key subnet_sweeps[0].tools"),
    "tried-text": ([sweep("gpu01", 0) | {"tried": "gpu02"}], "key subnet_sweeps[0].tried"),
    "tried-huge": ([sweep("gpu01", 0) | {"tried": [{"host": "gpu02"}] * BIG}], "key subnet_sweeps[0].tried"),
    "tried-path": ([sweep("gpu01", 0) | {"tried": [{"host": "/etc/passwd", "error": "x"}]}],
                   "key subnet_sweeps[0].tried[0].host"),
    "tried-error": ([sweep("gpu01", 0) | {"tried": [{"host": "gpu02", "error": 3}]}],
                    "key subnet_sweeps[0].tried[0].error"),
}


@pytest.mark.parametrize("name", HOSTILE)
def test_a_hostile_record_is_one_line_naming_the_file(name: str) -> None:
    value, said = HOSTILE[name]
    with pytest.raises(BundleError) as refused:
        check_manifest({"format": "rdmatool-bundle/3", "targets": ["gpu01"], "subnet_sweeps": value},
                       "shard/manifest.json")
    line = str(refused.value)
    assert line.startswith("shard/manifest.json: ") and said in line, line
    assert "\n" not in line and len(line) < 300 and line.isprintable()


def test_the_cli_refuses_a_merge_input_with_a_hostile_record(swept_shards, tmp_path) -> None:
    from tests.test_bundle_merge import rewrite_manifest

    def hostile(manifest: dict) -> None:
        manifest["subnet_sweeps"][0]["host"] = "../../etc"

    bad = rewrite_manifest(swept_shards[1], tmp_path / "bad", hostile)
    run = CliRunner().invoke(app, ["bundle", "merge", str(swept_shards[0]), str(bad), "-o", str(tmp_path / "all")])
    assert run.exit_code == 2, run.output
    assert run.exception is None or isinstance(run.exception, SystemExit)
    lines = [line for line in run.output.splitlines() if line.strip()]
    assert len(lines) == 1 and f"{bad}/manifest.json: key subnet_sweeps[0].host" in lines[0], run.output
    assert not (tmp_path / "all").exists()
