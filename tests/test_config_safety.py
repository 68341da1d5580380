"""Readers of configuration files under hostile or broken input: one line naming the file (and key or line), never
a traceback, a hang or unbounded memory. Baselines, playbooks, YAML aliases, inventories, bundle identity paths and
`rdmatool parse` input."""

from __future__ import annotations

import copy
import json
import os
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rdmatool import baseline, files, inventory, yamlio
from rdmatool.cli import app
from rdmatool.errors import BaselineError, InventoryError, PlaybookError
from rdmatool.model import Target
from rdmatool.present import hostlist
from rdmatool.rules import playbook, registry

REPO = Path(__file__).resolve().parent.parent
DEMO = REPO / "examples" / "demo-bundle"
runner = CliRunner()


def _one_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    assert len(lines) == 1, text
    assert "Traceback" not in text
    return lines[0]


# --- baselines -------------------------------------------------------------------------------------------------

ROW = {"metric": "bw_avg_gbps", "kind": "host", "role": "compute", "priority": None, "size_bytes": 65536,
       "median": 90.0, "mad": 1.0, "p10": 88.0, "p90": 92.0, "n": 12, "nights": 2}
FINE = {**ROW, "platform": "linux", "ca_type": "MT4129", "link_rate_gbps": 400.0}
GROUP = {k: v for k, v in FINE.items() if k not in baseline.STAT_FIELDS + ["p10", "p90"]}
NIGHT = {"id": "n0", "bundle": "/b0", "created": "2024-05-01T00:00:00+00:00", "saved": "2024-05-01T00:00:01+00:00",
         "targets": 3, "values": [{**GROUP, "values": [89.0, 90.0, 91.0]},
                                  {**GROUP, "size_bytes": 2, "quantiles": [1.0, 2.0, 3.0], "n": 300}],
         "facts": {"trust_mode_by_role": {"compute": {"dscp": 3}}}}
GOOD = {"format": baseline.FORMAT, "name": "good", "keep": 30, "updated": "2024-05-01T00:00:02+00:00",
        "rule_stats": [ROW], "reference": {"trust_mode_by_role": {"compute": {"value": "dscp", "count": 3,
                                                                              "total": 3}}},
        "stats": [FINE], "nights": [NIGHT]}


def _spoil(doc: dict, where: tuple, value) -> dict:
    doc = copy.deepcopy(doc)
    target = doc
    for key in where[:-1]:
        target = target[key]
    target[where[-1]] = value
    return doc


@pytest.mark.parametrize(
    ("where", "value", "named"),
    [
        (("rule_stats", 0, "median"), "x", "rule_stats[0].median"),
        (("rule_stats", 0, "n"), 2.5, "rule_stats[0].n"),
        (("rule_stats", 0, "n"), -1, "rule_stats[0].n"),
        (("rule_stats", 0, "priority"), [3], "rule_stats[0].priority"),
        (("rule_stats", 0, "metric"), None, "rule_stats[0].metric"),
        (("rule_stats", 0, "size_bytes"), 2**70, "rule_stats[0].size_bytes"),
        (("rule_stats", 0), "row", "rule_stats[0]"),
        (("rule_stats",), {"a": 1}, "rule_stats"),
        (("stats", 0, "mad"), {"x": 1}, "stats[0].mad"),
        (("stats", 0, "link_rate_gbps"), "fast", "stats[0].link_rate_gbps"),
        (("reference",), [1], "reference"),
        (("reference", "trust_mode_by_role"), "dscp", "reference.trust_mode_by_role"),
        (("reference", "trust_mode_by_role", "compute", "count"), "3", "reference.trust_mode_by_role.compute.count"),
        (("reference", "trust_mode_by_role", "compute", "value"), 5, "reference.trust_mode_by_role.compute.value"),
        (("nights",), {"a": 1}, "nights"),
        (("nights", 0), ["x"], "nights[0]"),
        (("nights", 0, "created"), 5, "nights[0].created"),
        (("nights", 0, "targets"), "3", "nights[0].targets"),
        (("nights", 0, "values"), {"a": 1}, "nights[0].values"),
        (("nights", 0, "values", 0, "values"), [1.0, "two"], "nights[0].values[0].values[1]"),
        (("nights", 0, "values", 0, "values"), [1.0, float("nan")], "nights[0].values[0].values[1]"),
        (("nights", 0, "values", 1, "quantiles"), {"a": 1}, "nights[0].values[1].quantiles"),
        (("nights", 0, "values", 1, "n"), "many", "nights[0].values[1].n"),
        (("nights", 0, "facts", "trust_mode_by_role", "compute", "dscp"), "3",
         'nights[0].facts.trust_mode_by_role.compute.dscp'),
        (("keep",), 0, "keep"),
        (("name",), ["x"], "name"),
    ],
)
def test_wrong_types_in_a_baseline_name_the_file_and_key(tmp_path: Path, where: tuple, value, named: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(_spoil(GOOD, where, value)), encoding="utf-8")
    with pytest.raises(BaselineError) as caught:
        baseline.load(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: corrupt baseline, {named} ") and "\n" not in message
    if where[0] == "rule_stats":  # the rules' fast view checks what it reads too
        with pytest.raises(BaselineError, match="corrupt baseline"):
            baseline.stats_for_rules(path)


def test_the_good_document_loads_and_feeds_the_rules(tmp_path: Path) -> None:
    path = tmp_path / "good.json"
    path.write_text(json.dumps(GOOD), encoding="utf-8")
    assert baseline.load(path)["rule_stats"] == [ROW]
    assert baseline.stats_for_rules(path)["median"].tolist() == [90.0]


@pytest.mark.parametrize("content", [b"[" * 100_000, b"\xff\xfe{}", b'{"format": "rdmatool-baseline/2", "name": ' +
                                     b'"' + b"x" * 5000 + b'"'])
def test_unreadable_baselines_are_one_line(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    with pytest.raises(BaselineError) as caught:
        baseline.load(path)
    assert str(caught.value).startswith(f"{path}: ") and "\n" not in str(caught.value)
    assert len(str(caught.value)) < 400


def test_baseline_list_reports_the_bad_file_and_lists_the_good(tmp_path: Path) -> None:
    store = tmp_path / "store"
    store.mkdir()
    (store / "good.json").write_text(json.dumps(GOOD), encoding="utf-8")
    (store / "bad.json").write_text(json.dumps(_spoil(GOOD, ("nights",), {"a": 1})), encoding="utf-8")
    (store / "markup.json").write_text(json.dumps({**GOOD, "name": "[/bold]x"}), encoding="utf-8")
    result = runner.invoke(app, ["baseline", "list", "--store", str(store)])
    assert result.exit_code == 0, result.output
    error = _one_line(result.stderr)
    assert str(store / "bad.json") in error and "nights" in error
    assert "good" in result.stdout and "[/bold]x" in result.stdout
    result = runner.invoke(app, ["baseline", "show", "markup", "--store", str(store)])
    assert result.exit_code == 0 and "[/bold]x" in result.stdout


def test_baseline_save_into_an_unwritable_store_is_one_line(tmp_path: Path) -> None:
    from tests.baseline._bundles import Host, write_bundle

    bundle = write_bundle(tmp_path / "b", [Host(f"gpu{i}", bw={65536: 80.0 + i}) for i in range(3)])
    blocker = tmp_path / "file.txt"
    blocker.write_text("a regular file where a directory should be")
    result = runner.invoke(app, ["baseline", "save", str(bundle), "--store", str(blocker / "store")])
    assert result.exit_code == 2
    line = _one_line(result.stderr)
    assert str(blocker / "store" / "default.json") in line and "cannot save" in line


@pytest.mark.parametrize("breaks", ["lock", "write"])
def test_a_permission_error_while_saving_is_a_baseline_error(tmp_path: Path, monkeypatch, breaks: str) -> None:
    store = tmp_path / "store"
    store.mkdir()
    (store / "default.json").write_text(json.dumps(GOOD), encoding="utf-8")
    before = (store / "default.json").read_bytes()

    def denied(*_args, **_kwargs):
        raise PermissionError(13, "Permission denied", str(store / "x"))

    if breaks == "write":
        monkeypatch.setattr(files, "write_atomic", denied)
    else:
        monkeypatch.setattr(baseline.store, "locked", denied)
    with pytest.raises(BaselineError) as caught:
        baseline.add_night(store, "default", {**NIGHT, "id": "n1"})
    assert str(caught.value) == f"{store / 'default.json'}: cannot save the baseline (Permission denied)"
    assert (store / "default.json").read_bytes() == before


def test_diagnose_with_a_bad_baseline_is_exit_2_and_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(_spoil(GOOD, ("rule_stats", 0, "median"), "x")), encoding="utf-8")
    result = runner.invoke(app, ["diagnose", str(DEMO), "--baseline", str(bad), "--format", "json"])
    assert result.exit_code == 2
    assert str(bad) in _one_line(result.stderr) and result.stdout == ""


# --- playbooks -------------------------------------------------------------------------------------------------

RULE = """\
rules:
  - id: r
    kind: {kind}
    severity: warning
    symptom: s
    cause: c
    check: k
    fix: f
{extra}"""


@pytest.mark.parametrize(
    ("kind", "extra", "message", "line"),
    [
        ("threshold", "    metric: link_downed\n    op: '>'\n    value: {x: 1}\n", "`value` must be", 11),
        ("threshold", "    metric: link_downed\n    op: '>'\n    value: 1\n    aggregate: {value: 2}\n    group_by: 42\n",
         "`group_by` must be a list of strings, not 42", 2),
        ("deviation", "    metric: link_downed\n    mad_factor: x\n", "`mad_factor` must be a number, not 'x'", 2),
        ("deviation", "    metric: link_downed\n    min_baseline_n: .nan\n", "`min_baseline_n` must be a number", 2),
        ("missing", "    metrics: 42\n", "`metrics` must be a list of strings", 2),
        ("missing", "    metrics: link_downed\n", "`metrics` must be a list of strings", 2),
        ("missing", "    metrics: [link_downed]\n    where: {kind: {a: 1}}\n", "`where` must be", 10),
        ("missing", "    metrics: [link_downed]\n    suggest: 5\n", "`suggest` must be", 2),
        ("missing", "    metrics: [link_downed]\n    require_any: 'yes'\n", "`require_any` must be true or false", 2),
        ("threshold", "    metric: link_downed\n    op: '>'\n    value: 1\n    aggregate: 5\n", "`aggregate` must be", 2),
        ("threshold", "    metric: link_downed\n    op: '>'\n    value: 1\n    aggregate: {op: '>'}\n",
         "`aggregate` must be", 12),
        ("threshold", "    metric: link_downed\n    op: '>'\n    value: 1\n"
                      "    also: [{metric: link_downed, op: '>', value: {a: 1}}]\n", "of an `also` condition", 12),
        ("threshold", "    metric: link_downed\n    op: '>'\n    value: 1\n    also: {metric: link_downed}\n",
         "`also` must be a list of conditions", 12),
        ("threshold", "    metric: link_downed\n    op: '>'\n    value: [1, 2]\n", "needs op in or not_in", 2),
        ("threshold", "    metric: link_downed\n    op: [x]\n    value: 1\n", "`op` must be a string", 2),
        ("mismatch", "    metric: link_downed\n    expected: {a: [1]}\n", "`expected` must be", 10),
        ("mismatch", "    metric: link_downed\n    compare: roles\n    expected: [compute]\n", "two roles", 2),
        ("fleet_outlier", "    metric: link_downed\n    direction: up\n", "`direction` must be one of", 2),
        ("fleet_outlier", "    metric: link_downed\n    min_group: true\n", "`min_group` must be an integer", 2),
        ("ratio", "    numerator: link_downed\n    denominator: link_downed\n    op: '>'\n    value: 'x'\n",
         "`value` must be a number", 2),
        ("ratio", "    numerator: link_downed\n    denominator: link_downed\n    op: '>'\n    value: 1\n    scope: all\n",
         "`scope` must be one of", 2),
        ("rate", "    metric: [link_downed]\n    op: '>'\n    value: 1\n", "`metric` must be a string", 2),
    ],
)
def test_playbook_parameter_types_are_checked_at_load(tmp_path: Path, kind: str, extra: str, message: str,
                                                      line: int) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(RULE.format(kind=kind, extra=extra))
    with pytest.raises(PlaybookError) as caught:
        playbook.load_file(path)
    assert str(caught.value).startswith(f"{path}:{line}: rule r: ")
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_a_badly_typed_playbook_is_exit_2_from_the_cli(tmp_path: Path) -> None:
    (tmp_path / "x.yaml").write_text(RULE.format(kind="deviation", extra="    metric: link_downed\n    mad_factor: x\n"))
    result = runner.invoke(app, ["diagnose", str(DEMO), "--playbooks", str(tmp_path)])
    assert result.exit_code == 2
    assert _one_line(result.stderr).startswith(f"rdmatool: {tmp_path / 'x.yaml'}:2: ")


def test_every_shipped_rule_parameter_has_a_declared_type() -> None:
    from rdmatool.diagnose.pipeline import default_playbooks

    for rule in playbook.load_dir(default_playbooks()):
        assert set(rule.params) <= set(playbook.PARAM_TYPES), rule.id
    assert set().union(*(k.params for k in registry.KINDS.values())) <= set(playbook.PARAM_TYPES)


# --- YAML ------------------------------------------------------------------------------------------------------

LAUGHS = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{c}: &{c} [{', '.join(['*' + p] * 10)}]\n" for p, c in zip("abcdefgh", "bcdefghi")) + "j: [*i, *i]\n"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (LAUGHS, "aliases expand to more than 10000"),
        ("s: &s lol\nl: [" + ", ".join(["*s"] * 20_000) + "]\n", "aliases expand to more than 10000"),
        ("a: &a [1, *a]\n", "refers to its own enclosing node"),
        ("a: &a {b: *a}\n", "refers to its own enclosing node"),
        ("a:\n" + "".join(" " * (i + 1) + "a:\n" for i in range(900)), "nested deeper than"),
        ("[" * 5000 + "]" * 5000, "invalid YAML"),
    ],
)
def test_hostile_yaml_is_refused_quickly_naming_the_file(tmp_path: Path, text: str, problem: str) -> None:
    path = tmp_path / "hostile.yaml"
    path.write_text(text)
    started = time.monotonic()
    with pytest.raises(yamlio.YamlError) as caught:
        yamlio.load(path)
    assert time.monotonic() - started < 2.0
    assert str(caught.value).startswith(f"{path}") and problem in str(caught.value)
    assert "\n" not in str(caught.value)
    with pytest.raises(InventoryError) as caught:  # the last one reads as an INI inventory: refused all the same
        inventory.load(path, ssh_config=None)
    assert str(caught.value).startswith(f"{path}") and "\n" not in str(caught.value)
    with pytest.raises(PlaybookError, match="invalid YAML"):
        playbook.load_file(path)


def test_a_few_aliases_still_load() -> None:
    data = yamlio.loads("base: &b {kind: host, role: compute}\ngpu: *b\nstor: {<<: *b, role: storage}\n", "x")
    assert data["gpu"] == {"kind": "host", "role": "compute"} and data["stor"]["role"] == "storage"


def test_quoted_entries_are_cut_to_a_sane_length(tmp_path: Path) -> None:
    path = tmp_path / "inv.yaml"
    path.write_text("targets:\n  - " + json.dumps(["x" * 10_000] * 100) + "\n")
    with pytest.raises(InventoryError) as caught:
        inventory.load(path, ssh_config=None)
    assert len(str(caught.value)) < len(str(path)) + 300 and "…" in str(caught.value)
    assert len(yamlio.quote("y" * 1000)) == 200 and yamlio.quote("short") == "'short'"


# --- inventories -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("pattern", ["gpu[1-1000000000]", "gpu[1-10000000]", "a[1-1000]b[1-1000]",
                                     "x[1-999999999999999999]" * 50])
def test_huge_hostlists_are_refused_from_their_count(pattern: str) -> None:
    started = time.monotonic()
    with pytest.raises(ValueError, match="more than 100000 names"):
        hostlist.expand(pattern)
    with pytest.raises(ValueError, match="more than 100000 names"):
        hostlist.count(pattern)
    assert time.monotonic() - started < 0.5


def test_hostlist_count_matches_expand() -> None:
    for pattern in ("gpu[001-064]", "r[1-2]n[01-03,07]", "plain", "10.0.[0-1].[1-3]"):
        assert hostlist.count(pattern) == len(hostlist.expand(pattern))


def test_many_entries_cannot_add_up_past_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "inv.yaml"
    path.write_text("targets:\n" + "".join(f"  - {{name: 'n{i}x[1-60000]'}}\n" for i in range(3)))
    started = time.monotonic()
    with pytest.raises(InventoryError, match=r"inv.yaml:3: the inventory expands to more than 100000 targets"):
        inventory.load(path, ssh_config=None)
    assert time.monotonic() - started < 1.0  # refused from the counts, before building any target


def _nested_ini(levels: int) -> str:
    """Two hosts under a diamond lattice: every group of level i is a child of both groups of level i + 1."""
    lines = ["[g0a]", "h1 ansible_host=10.0.0.1", "[g0b]", "h2 ansible_host=10.0.0.2"]
    for i in range(1, levels + 1):
        for x in "ab":
            lines += [f"[g{i}{x}:children]", f"g{i - 1}a", f"g{i - 1}b"]
        lines += [f"[g{i}a:vars]", f"ansible_user=u{i}"]
    return "\n".join(lines) + "\n"


def test_nested_ini_children_load_in_linear_time(tmp_path: Path) -> None:
    path = tmp_path / "hosts.ini"
    path.write_text(_nested_ini(30))
    started = time.monotonic()
    targets = {t.name: t for t in inventory.load(path, ssh_config=None)}
    assert time.monotonic() - started < 0.5
    assert targets["h1"].user == "u1"  # the nearest group's variables win
    assert len(targets["h1"].groups) == 61


def test_ini_group_order_keeps_the_nearest_group_last(tmp_path: Path) -> None:
    path = tmp_path / "hosts.ini"
    path.write_text("[gpu]\nh1\n[rack:children]\ngpu\n[site:children]\nrack\n[fabric:children]\ngpu\n"
                    "[site:vars]\nansible_user=site\n[rack:vars]\nansible_user=rack\n[fabric:vars]\nansible_port=2222\n")
    (h1,) = inventory.load(path, ssh_config=None)
    assert h1.groups == ("fabric", "site", "rack", "gpu") and h1.user == "rack" and h1.port == 2222


@pytest.mark.parametrize(
    "text",
    ["[a:children]\nb\n[b:children]\na\n[a]\nh1\n", "[a:children]\na\n[a]\nh1\n"],
)
def test_ini_children_cycles_are_refused(tmp_path: Path, text: str) -> None:
    path = tmp_path / "hosts.ini"
    path.write_text(text)
    with pytest.raises(InventoryError, match="its own ancestor"):
        inventory.load(path, ssh_config=None)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("groups: {1: {kind: host}}\ntargets: [{name: a}]\n", "a group name must be a non-empty string, not 1"),
        ("groups: {null: {kind: host}}\ntargets: [{name: a}]\n", "a group name must be a non-empty string, not None"),
        ("groups: [a, b]\ntargets: [{name: a}]\n", "`groups` must map group names to mappings"),
        ("groups: {g: [1]}\ntargets: [{name: a}]\n", "group 'g' must be a mapping"),
        ("targets: [{name: a, group: [x, y]}]\n", "a group name must be a non-empty string"),
        ("targets: [{name: a, groups: {x: 1}}]\n", "`groups` must be a group name or a list of them"),
        ("targets: [{name: a, 1: 2}]\n", "keys must be strings"),
        ("targets: [{name: a, ports: 5}]\n", "ports must be a list"),
        ("targets: [{name: a, address: [1, 2]}]\n", "address must be a string"),
        ("targets: [{name: a, identity_file: [x]}]\n", "identity_file must be a string"),
        ("targets: [{name: a, port: true}]\n", "invalid port"),
        ("targets: [{name: a, role: {x: 1}}]\n", "role must be a string"),
        ("all:\n  children:\n    1: {hosts: {a: {}}}\n", "a group name must be a non-empty string, not 1"),
        ("all:\n  children:\n    null: {hosts: {a: {}}}\n", "a group name must be a non-empty string"),
        ("all:\n  hosts: [a, b]\n", "`hosts` of group 'all' must be a mapping"),
        ("all:\n  children: [a, b]\n", "`children` of group 'all' must be a mapping"),
        ("all:\n  vars: [a]\n  hosts: {a: {}}\n", "`vars` of group 'all' must be a mapping"),
        ("all:\n  children:\n    g: {hosts: {null: {}}}\n", "a host name must be a string"),
        ("all:\n  children:\n    g: {hosts: {a: 5}}\n", "the variables of host 'a' must be a mapping"),
        ("all:\n  children:\n    g: [1]\n", "Ansible group 'g' must be a mapping"),
    ],
)
def test_odd_types_in_inventories_are_one_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "inv.yaml"
    path.write_text(text)
    with pytest.raises(InventoryError) as caught:
        inventory.load(path, ssh_config=None)
    assert str(caught.value).startswith(str(path)) and message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_ansible_group_nesting_is_bounded_by_yaml_and_walked_without_recursion(tmp_path: Path) -> None:
    text = "all:\n  children:\n"
    indent = "    "
    for i in range(150):
        text += f"{indent}g{i}:\n{indent}  children:\n"
        indent += "    "
    text += f"{indent}leaf:\n{indent}  hosts:\n{indent}    h1: {{ansible_host: 10.0.0.1}}\n"
    path = tmp_path / "inv.yaml"
    path.write_text(text)
    with pytest.raises(InventoryError, match="nested deeper than"):  # the YAML bound comes first
        inventory.load(path, ssh_config=None)
    shallow = "all:\n  children:\n" + "".join(f"{'  ' * (2 * i + 2)}g{i}:\n{'  ' * (2 * i + 3)}children:\n"
                                               for i in range(40))
    shallow += f"{'  ' * 82}leaf:\n{'  ' * 83}hosts:\n{'  ' * 84}h1: {{ansible_host: 10.0.0.1}}\n"
    path.write_text(shallow)
    (h1,) = inventory.load(path, ssh_config=None)
    assert h1.address == "10.0.0.1" and len(h1.groups) == 41


@pytest.mark.parametrize(
    ("field", "value"),
    [("name", '"gpu01\\n"'), ("address", '"10.0.0.1\\n"'), ("user", '"root\\n"'), ("password_env", '"PW\\n"'),
     ("ports", '["Ethernet0\\n"]'), ("proxy_jump", '"bastion\\n"')],
)
def test_a_trailing_newline_never_passes_a_validator(tmp_path: Path, field: str, value: str) -> None:
    entry = {"name": '"gpu01"', "platform": "sonic" if field == "ports" else "linux", field: value}
    path = tmp_path / "inv.yaml"
    path.write_text("targets:\n  - {" + ", ".join(f"{k}: {v}" for k, v in entry.items()) + "}\n")
    with pytest.raises(InventoryError) as caught:
        inventory.load(path, ssh_config=None)
    assert "\n" not in str(caught.value)


def test_trailing_newline_in_a_baseline_name_is_refused() -> None:
    with pytest.raises(BaselineError, match="a baseline name"):
        baseline.check_name("nightly\n")


# --- identity files in bundles ---------------------------------------------------------------------------------


def test_identity_file_is_recorded_as_written_and_connected_expanded(tmp_path: Path) -> None:
    path = tmp_path / "inv.yaml"
    path.write_text("defaults: {identity_file: ~/.ssh/id_ed25519}\ntargets:\n  - {name: a}\n"
                    "  - {name: b, identity_file: keys/fabric}\n  - {name: c, identity_file: /secrets/k}\n")
    a, b, c = inventory.load(path, ssh_config=None)
    assert a.identity_file == os.path.expanduser("~/.ssh/id_ed25519") and not a.identity_file.startswith("~")
    assert a.public()["identity_file"] == "~/.ssh/id_ed25519"
    assert (b.identity_file, b.public()["identity_file"]) == ("keys/fabric", "keys/fabric")
    assert (c.identity_file, c.public()["identity_file"]) == ("/secrets/k", "/secrets/k")
    assert Target(name="x", address="x", identity_file="/k").public()["identity_file"] == "/k"


def test_identity_file_from_ssh_config_is_recorded_under_home(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    config = tmp_path / "ssh_config"
    config.write_text("Host a\n    IdentityFile ~/.ssh/fabric_key\n")
    path = tmp_path / "inv.yaml"
    path.write_text("targets:\n  - {name: a}\n")
    (a,) = inventory.load(path, ssh_config=config)
    assert a.identity_file == str(tmp_path / ".ssh" / "fabric_key")
    assert a.public()["identity_file"] == "~/.ssh/fabric_key"


def test_the_shipped_demo_bundle_names_no_path_of_the_collecting_machine() -> None:
    manifest = json.loads((DEMO / "manifest.json").read_text())
    import yaml

    listed = yaml.safe_load((DEMO / "inventory.yaml").read_text())
    for target in manifest["targets"] + listed["targets"]:
        assert not str(target.get("identity_file") or "").startswith("/"), target


# --- rdmatool parse input --------------------------------------------------------------------------------------


def test_parse_refuses_stdin_beyond_the_cap() -> None:
    result = runner.invoke(app, ["parse", "loadavg", "-"], input="0.1 0.2 0.3 1/100 42\n" * 200,
                           env={"RDMATOOL_MAX_OUTPUT_BYTES": "1000"})
    assert result.exit_code == 2
    assert _one_line(result.stderr) == "rdmatool parse: <stdin>: larger than 1000 bytes (RDMATOOL_MAX_OUTPUT_BYTES)"


def test_parse_refuses_a_file_beyond_the_cap_and_reads_one_at_the_cap(tmp_path: Path) -> None:
    line = b"0.10 0.20 0.30 1/100 42\n"
    path = tmp_path / "loadavg.txt"
    path.write_bytes(line)
    env = {"RDMATOOL_MAX_OUTPUT_BYTES": str(len(line))}
    assert runner.invoke(app, ["parse", "loadavg", str(path), "--json"], env=env).exit_code == 0
    path.write_bytes(line + b"x")
    result = runner.invoke(app, ["parse", "loadavg", str(path)], env=env)
    assert result.exit_code == 2 and f"{path}: larger than {len(line)} bytes" in _one_line(result.stderr)
    result = runner.invoke(app, ["parse", "loadavg", str(path)], env={"RDMATOOL_MAX_OUTPUT_BYTES": "lots"})
    assert result.exit_code == 2 and "RDMATOOL_MAX_OUTPUT_BYTES" in _one_line(result.stderr)


def test_parse_reads_binary_stdin_without_a_traceback() -> None:
    result = runner.invoke(app, ["parse", "loadavg", "-"], input=bytes(range(256)) * 4)
    assert result.exit_code == 1 and _one_line(result.stderr).startswith("loadavg: <stdin>:")
