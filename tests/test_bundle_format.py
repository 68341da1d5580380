"""The bundle is a public format: bundles written by hand or by other tools, from docs/bundle-format.md alone."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rdmatool import schemas
from rdmatool.bundle import manifest as manifest_check
from rdmatool.bundle import reader
from rdmatool.outcome.failures import bundle_failures
from rdmatool.table.frame import NO_TIMES, ParseFailure

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "bundle-format.md"
DEMO = REPO / "examples" / "demo-bundle"
# A fenced block whose info string names the file it is: ```json manifest.json
_BLOCK = re.compile(r"^```(?:json|text) (\S+)\n(.*?)^```$", re.S | re.M)


def _rdmatool(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rdmatool", *args], capture_output=True, text=True, cwd=REPO,
                          timeout=120)


def _bundle_from_doc(root: Path) -> Path:
    blocks = _BLOCK.findall(DOC.read_text(encoding="utf-8"))
    assert {name for name, _ in blocks} >= {"manifest.json", "snapshots/0/gpu01/sysfs_counters.txt",
                                            "snapshots/1/gpu01/sysfs_counters.txt"}, blocks
    for name, body in blocks:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body, encoding="utf-8")
    return root


def _diagnose_json(bundle: Path) -> tuple[int, dict, str]:
    done = _rdmatool("diagnose", str(bundle), "--format", "json")
    assert "Traceback" not in done.stderr and "Warning" not in done.stderr, done.stderr
    return done.returncode, json.loads(done.stdout), done.stderr


def _by_rule(result: dict) -> dict[str, dict]:
    return {f["rule"]: f for f in result["findings"]}


def test_a_bundle_written_from_the_document_alone_is_diagnosed_with_rates_from_the_manifest(tmp_path: Path) -> None:
    bundle = _bundle_from_doc(tmp_path / "hand")
    code, result, stderr = _diagnose_json(bundle)
    found = _by_rule(result)
    assert code == 1 and result["verdict"] == "fail"
    assert found["ib_symbol_errors_growing"]["entity"] == "mlx5_0/1"
    assert found["ib_symbol_errors_growing"]["evidence"]["observed"] == 12
    # The rate rule needs a window: ten seconds between the manifest's snapshots, and the evidence says whose.
    wait = found["ib_xmit_wait_high"]["evidence"]
    assert wait["window_s"] == pytest.approx(10.0) and wait["observed"] == pytest.approx(5e7)
    assert wait["window_from"] == "manifest snapshot times"
    assert any("manifest's snapshot times" in note for note in result["notes"])
    assert "rdmatool: note:" in stderr


def test_a_bundle_with_no_time_at_all_gets_deltas_without_rates_and_one_note(tmp_path: Path) -> None:
    bundle = _bundle_from_doc(tmp_path / "hand")
    manifest = json.loads((bundle / "manifest.json").read_text())
    manifest["snapshots"] = [{"index": 0}, {"index": 1}]
    (bundle / "manifest.json").write_text(json.dumps(manifest))
    code, result, stderr = _diagnose_json(bundle)
    found = _by_rule(result)
    assert code == 1 and "ib_symbol_errors_growing" in found  # a change is still a change
    assert "ib_xmit_wait_high" not in found  # no window, no rate
    assert result["notes"] == [NO_TIMES]
    assert stderr.count("rdmatool: note:") == 1
    table = _rdmatool("diagnose", str(bundle))
    assert table.returncode == 1 and "Traceback" not in table.stderr and "Warning" not in table.stderr
    assert " - s" not in table.stdout and "nan" not in table.stdout.lower(), table.stdout
    assert "between the snapshots (read times unknown)" in " ".join(table.stdout.split())


@pytest.mark.parametrize("change", [
    lambda m: m.update(targets=["gpu01"]),
    lambda m: m.update(targets=[{"name": "gpu01"}]),
    lambda m: m.update(targets=[{"name": "gpu01", "kind": "host", "rack": "r12", "asset": {"tag": 7}}]),
    lambda m: m.update(vendor_tool={"version": "9.9"}, created=None, interval_s=None, failures=None),
    lambda m: m.pop("targets"),
], ids=["names", "objects", "unknown target keys", "unknown and null keys", "no targets key"])
def test_manifest_variations_are_accepted(tmp_path: Path, change) -> None:
    bundle = _bundle_from_doc(tmp_path / "hand")
    manifest = json.loads((bundle / "manifest.json").read_text())
    change(manifest)
    (bundle / "manifest.json").write_text(json.dumps(manifest))
    code, result, _ = _diagnose_json(bundle)
    assert code == 1 and "ib_symbol_errors_growing" in _by_rule(result)


@pytest.mark.parametrize(("change", "key"), [
    ({"format": "rdmatool-bundle/4"}, "format"),
    ({"format": ["rdmatool-bundle/2"]}, "format"),
    ({"targets": "gpu01"}, "key targets:"),
    ({"targets": [{"kind": "host"}]}, "key targets[0].name:"),
    ({"targets": [{"name": "gpu01", "port": "22"}]}, "key targets[0].port:"),
    ({"snapshots": [{"index": -1}]}, "key snapshots[0].index:"),
    ({"failures": [{"target": "gpu01", "snapshot": "zero"}]}, "key failures[0].snapshot:"),
    # the schema's `$` passes a trailing newline; a target name becomes a folder, so it must match whole
    ({"targets": ["gpu01\n"]}, "key targets[0]:"),
    ({"targets": [{"name": "gpu01\n", "kind": "host"}]}, "key targets[0].name:"),
])
def test_a_manifest_of_the_wrong_shape_is_one_line_naming_file_and_key_exit_2(tmp_path: Path, change, key) -> None:
    bundle = _bundle_from_doc(tmp_path / "hand")
    manifest = json.loads((bundle / "manifest.json").read_text())
    manifest.update(change)
    (bundle / "manifest.json").write_text(json.dumps(manifest))
    done = _rdmatool("diagnose", str(bundle))
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and "Traceback" not in done.stderr
    assert "manifest.json" in lines[0] and key in lines[0], lines


def test_the_shipped_schemas_accept_what_the_collector_writes() -> None:
    manifest = json.loads((DEMO / "manifest.json").read_text())
    jsonschema.Draft202012Validator(schemas.load("bundle-manifest")).validate(manifest)
    side = jsonschema.Draft202012Validator(schemas.load("bundle-side"))
    sides = list((DEMO / "snapshots").glob("*/*/*.json"))
    assert len(sides) > 100
    for path in sides:
        side.validate(json.loads(path.read_text()))


_SIDE_VALUES = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**40), max_value=2**40),
                         st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=8),
                         st.lists(st.integers(), max_size=2))


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(["command", "exit_code", "stderr", "started", "duration_s", "error",
                                        "other"]), _SIDE_VALUES, max_size=7))
def test_the_hand_written_side_file_check_accepts_exactly_what_the_schema_does(side: dict) -> None:
    side.pop("qualifier", None)  # checked against the file name separately
    schema_ok = jsonschema.Draft202012Validator(schemas.load("bundle-side")).is_valid(side)
    assert (reader._side_problem(side) is None) == schema_ok, side


# Values near every edge the manifest schema draws: types, integers written as floats, negative counts, names the
# pattern refuses (a trailing newline is one it accepts, as re.search reads `$`).
_EDGE = st.one_of(st.none(), st.booleans(), st.integers(min_value=-3, max_value=3), st.sampled_from([0.0, 1.0, -1.0,
                  2.5, float("nan"), float("inf"), -0.0]), st.sampled_from(["gpu01", "gpu01\n", "-gpu", "../etc", "",
                  "a" * 128, "a" * 129, "leaf01.rack2", "éa"]), st.lists(st.sampled_from(["x", 1, None]), max_size=2),
                  st.just({"name": "gpu01"}))
_TARGET_KEYS = ["name", "address", "kind", "platform", "role", "user", "identity_file", "proxy_jump", "port", "groups",
                "ports", "rack"]
_FORMATS = ["rdmatool-bundle/1", "rdmatool-bundle/2", "rdmatool-bundle/3", "rdmatool-bundle/4"]
_MANIFESTS = st.fixed_dictionaries({"format": st.sampled_from(_FORMATS)}, optional={
    "created": _EDGE, "rdmatool_version": _EDGE, "interval_s": _EDGE, "vendor": _EDGE,
    "snapshots": st.one_of(_EDGE, st.lists(st.one_of(_EDGE, st.dictionaries(
        st.sampled_from(["index", "started", "finished", "other"]), _EDGE, max_size=4)), max_size=3)),
    "targets": st.one_of(_EDGE, st.lists(st.one_of(_EDGE, st.dictionaries(st.sampled_from(_TARGET_KEYS), _EDGE,
                                                                           max_size=5)), max_size=3)),
    "failures": st.one_of(_EDGE, st.lists(st.one_of(_EDGE, st.dictionaries(
        st.sampled_from(["target", "parser", "qualifier", "error", "snapshot", "other"]), _EDGE, max_size=5)),
        max_size=3)),
})


@settings(max_examples=1500, deadline=None)
@given(_MANIFESTS)
def test_the_hand_check_of_a_manifest_accepts_only_what_the_schema_does(manifest: dict) -> None:
    """The manifest's fast check (taken instead of jsonschema on a fleet's 10,000 targets) never lets through what the
    schema refuses; whatever it does not accept is worded by the schema, so the messages stay the schema's."""
    schema_ok = jsonschema.Draft202012Validator(schemas.load("bundle-manifest")).is_valid(manifest)
    if manifest_check._plainly_valid(manifest):
        assert schema_ok, manifest
    # and the check as a whole says what the schema says
    assert (manifest_check._first_error(manifest) is None) == schema_ok, manifest


def test_the_hand_check_accepts_what_the_collector_and_the_merge_write() -> None:
    manifest = json.loads((DEMO / "manifest.json").read_text())
    assert len(manifest["targets"]) > 3 and manifest_check._plainly_valid(manifest)
    merged = {**manifest, "merged_from": [{"bundle": "shard-1", "created": None, "targets": 3, "dropped": []}],
              "interval_s": None, "targets": [*manifest["targets"], "gpu99", {"name": "gpu98", "port": 22.0}]}
    assert manifest_check._plainly_valid(merged)


def test_bundle_show_and_diagnose_list_the_same_failures() -> None:
    shown = _rdmatool("bundle", "show", str(DEMO), "--json")
    assert shown.returncode == 0, shown.stderr
    failures = json.loads(shown.stdout)["failures"]
    _, diagnosed, _ = _diagnose_json(DEMO)
    assert failures == diagnosed["failures"]
    kinds = {f["kind"] for f in failures}
    assert kinds == {"connection", "command", "parse"}, failures  # the demo has one of each


def test_a_failure_seen_in_both_snapshots_is_one_entry_with_its_snapshots() -> None:
    collection = [
        {"target": "gpu01", "parser": "perfquery", "qualifier": "mlx5_0.1", "error": "timed out", "snapshot": 0},
        {"target": "gpu01", "parser": "perfquery", "qualifier": "mlx5_0.1", "error": "timed out", "snapshot": 1},
        {"target": "gpu02", "error": "connection refused"},
    ]
    parse = [ParseFailure("gpu03", i, "ibstat", None, f"ibstat: snapshots/{i}/gpu03/ibstat:1: expected CA")
             for i in (1, 0)]
    merged = bundle_failures(collection, parse)
    assert [(f["target"], f["kind"], f["snapshots"]) for f in merged] == [
        ("gpu01", "command", [0, 1]), ("gpu02", "connection", []), ("gpu03", "parse", [0, 1])]


def test_a_failure_repeated_in_both_snapshots_of_a_bundle_is_reported_once(tmp_path: Path) -> None:
    bundle = _bundle_from_doc(tmp_path / "hand")
    for i in (0, 1):
        (bundle / f"snapshots/{i}/gpu01/ibstat.txt").write_text("not ibstat output\n")
    _, result, _ = _diagnose_json(bundle)
    parse = [f for f in result["failures"] if f["kind"] == "parse"]
    assert len(parse) == 1 and parse[0]["snapshots"] == [0, 1] and parse[0]["parser"] == "ibstat"


def test_no_path_of_the_collecting_machine_in_the_shipped_bundle() -> None:
    def strings(value):
        if isinstance(value, dict):
            for item in value.values():
                yield from strings(item)
        elif isinstance(value, list):
            for item in value:
                yield from strings(item)
        elif isinstance(value, str):
            yield value

    manifest = json.loads((DEMO / "manifest.json").read_text())
    assert all("identity_file" not in t for t in manifest["targets"])
    absolute = [s for s in strings(manifest) if s.startswith(("/", "~"))]
    assert absolute == []
    assert "identity_file" not in (DEMO / "inventory.yaml").read_text()


def test_the_writer_does_not_record_the_key_file(tmp_path: Path) -> None:
    from rdmatool.bundle.writer import BundleWriter
    from rdmatool.model import Target

    writer = BundleWriter(tmp_path / "b")
    path = writer.commit([Target(name="gpu01", address="10.0.0.1", identity_file="/root/.ssh/id_fabric")],
                         [{"index": 0, "started": None, "finished": None}], [], 1.0)
    text = (path / "manifest.json").read_text() + (path / "inventory.yaml").read_text()
    assert "/root/.ssh" not in text and "identity_file" not in text


def test_the_document_names_every_manifest_key_of_the_schema() -> None:
    doc = DOC.read_text(encoding="utf-8")
    for key in schemas.load("bundle-manifest")["properties"]:
        assert f"`{key}`" in doc, key
    for key in schemas.load("bundle-side")["properties"]:
        assert f"`{key}`" in doc, key


@pytest.fixture(autouse=True)
def _no_leftovers(tmp_path: Path):
    yield
    shutil.rmtree(tmp_path, ignore_errors=True)


def test_bundle_show_prints_a_failure_that_looks_like_markup_verbatim(tmp_path: Path) -> None:
    # A failure's text is the host's or the parser's words: `[/bold]` is data, never a rich closing tag (which
    # stopped the command) and `[red]` never a style.
    bundle = _bundle_from_doc(tmp_path / "hand")
    doc = json.loads((bundle / "manifest.json").read_text())
    doc["failures"] = [{"target": "gpu01", "error": "ssh: [/bold] refused [red]x"}]
    (bundle / "manifest.json").write_text(json.dumps(doc))
    shown = subprocess.run([sys.executable, "-m", "rdmatool", "bundle", "show", str(bundle)], capture_output=True,
                           text=True, cwd=REPO, timeout=120, env={**os.environ, "COLUMNS": "200"})
    assert shown.returncode == 0, shown.stderr
    assert "ssh: [/bold] refused [red]x" in shown.stdout
    assert str(bundle) in shown.stdout
