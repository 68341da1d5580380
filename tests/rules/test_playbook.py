"""Playbook validation: every problem is one `FILE:LINE: message`, and the shipped playbooks load."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rdmatool import yamlio
from rdmatool.diagnose.pipeline import default_playbooks
from rdmatool.errors import PlaybookError
from rdmatool.rules import playbook, registry
from tests.helpers import REPO

GOOD = """\
rules:
  - id: flaps
    kind: rate
    metric: link_downed
    field: delta
    op: ">"
    value: 0
    severity: critical
    symptom: s
    cause: c
    check: k
    fix: f
"""


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "p.yaml"
    path.write_text(text)
    return path


def test_good_rule_loads(tmp_path: Path) -> None:
    (rule,) = playbook.load_file(_write(tmp_path, GOOD))
    assert rule.id == "flaps" and rule.kind == "rate" and rule.params["value"] == 0
    assert rule.source.endswith("p.yaml:2")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("metric: link_downed", "metric: link_dwned"), "unknown metric 'link_dwned'"),
        (("kind: rate", "kind: magic"), "unknown kind 'magic'"),
        (("    fix: f\n", ""), "missing field 'fix'"),
        (('op: ">"', 'op: "=~"'), "unknown operator"),
        (("severity: critical", "severity: loud"), "severity must be one of"),
        (("field: delta", "field: delta\n    expression: x+1"), "unknown parameter(s) ['expression']"),
    ],
)
def test_bad_rule_names_file_and_line(tmp_path: Path, change: tuple[str, str], message: str) -> None:
    path = _write(tmp_path, GOOD.replace(*change))
    with pytest.raises(PlaybookError) as caught:
        playbook.load_file(path)
    assert str(caught.value).startswith(f"{path}:2: ")
    assert message in str(caught.value)


def test_invalid_yaml_names_the_line(tmp_path: Path) -> None:
    path = _write(tmp_path, "rules:\n  - id: x\n    kind: [unclosed\n")
    with pytest.raises(PlaybookError) as caught:
        playbook.load_file(path)
    assert str(caught.value).startswith(f"{path}:")
    assert "invalid YAML" in str(caught.value)


def test_duplicate_ids_across_files_are_refused(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(GOOD)
    (tmp_path / "b.yaml").write_text(GOOD)
    with pytest.raises(PlaybookError, match="already defined"):
        playbook.load_dir(tmp_path)


def test_shipped_playbooks_load_and_cover_the_seed_table() -> None:
    rules = playbook.load_dir(default_playbooks())
    ids = {r.id for r in rules}
    assert len(rules) >= 40
    for required in ("ib_link_flapping", "pfc_priority_mismatch_host_switch", "dcqcn_rp_disabled", "firmware_drift",
                     "storage_node_overloaded", "bandwidth_below_line_rate", "latency_jitter", "missing_port_state",
                     "training_storage_share_lossless_priority", "ecn_after_pfc", "pfc_storm"):
        assert required in ids
    kinds = {r.kind for r in rules}
    assert kinds == set(playbook.KINDS)
    for rule in rules:
        assert rule.symptom and rule.cause and rule.check and rule.fix


# --- values, not only keys: one test per refusal, each naming FILE:LINE and what is wrong --------------------------

HEAD = """\
rules:
  - id: r
    kind: {kind}
    severity: warning
    symptom: s
    cause: c
    check: k
    fix: f
"""  # the rule starts on line 2; parameters follow from line 9


def _refusal(tmp_path: Path, kind: str, body: str) -> tuple[Path, str]:
    path = tmp_path / "p.yaml"
    path.write_text(HEAD.format(kind=kind) + body)
    with pytest.raises(PlaybookError) as caught:
        playbook.load_file(path)
    message = str(caught.value)
    assert "\n" not in message
    return path, message


THRESHOLD = "    metric: link_downed\n    op: '>'\n    value: 0\n"
MISMATCH = "    metric: pfc_enabled\n"


@pytest.mark.parametrize(
    ("kind", "body", "line", "message"),
    [
        # closed sets of plain parameters
        ("mismatch", MISMATCH + "    compare: nearest\n    expected: 1\n", 2,
         "`compare` must be one of expected, peer, metric, roles, not 'nearest'"),
        ("deviation", "    metric: bw_avg_gbps\n    direction: sideways\n", 2,
         "`direction` must be one of both, above, below, not 'sideways'"),
        ("fleet_outlier", "    metric: link_rate_gbps\n    direction: up\n", 2,
         "`direction` must be one of both, above, below, not 'up'"),
        ("threshold", "    metric: link_downed\n    op: '=~'\n    value: 0\n", 2,
         "unknown operator '=~' (one of > >= < <= == != in not_in)"),
        ("threshold", THRESHOLD + "    aggregate: {op: '=>', value: 2}\n    group_by: [target]\n", 2,
         "unknown operator '=>'"),
        ("rate", "    metric: link_downed\n    op: '>'\n    value: 0\n    field: ratee\n", 2,
         "`field` must be one of value, rate, delta, not 'ratee'"),
        ("deviation", "    metric: rx_pause_frames\n    field: delta\n", 2,
         "`field` must be one of value, rate, not 'delta'"),
        ("ratio", "    numerator: cnp_handled\n    denominator: cnp_sent\n    op: '<'\n    value: 0.5\n"
                  "    scope: pod\n", 2, "`scope` must be one of entity, fleet, not 'pod'"),
        ("mismatch", MISMATCH + "    against: leaf\n", 2, "`against` must be one of switch, not 'leaf'"),
        # where: keys and value types, located at the `where` mapping's own line
        ("threshold", THRESHOLD + "    where: {kind: host, rack: r1}\n", 12,
         "unknown `where` key(s) ['rack'] (one of entity, kind, link_layer, platform, priority, raw_key, role)"),
        ("threshold", THRESHOLD + "    where: {parser: ibstat}\n", 12, "unknown `where` key(s) ['parser']"),
        ("threshold", THRESHOLD + "    where:\n      kind: host\n      priority: '3'\n", 13,
         "`where` key `priority` takes an integer 0-7 or a list of them, not '3'"),
        ("threshold", THRESHOLD + "    where: {priority: [3, 9]}\n", 12, "`where` key `priority` takes an integer 0-7"),
        ("threshold", THRESHOLD + "    where: {role: 7}\n", 12,
         "`where` key `role` takes a string or a list of strings, not 7"),
        ("threshold", THRESHOLD + "    where: {kind: Host}\n", 12,
         "`where` key `kind` takes host, switch (or a list of them), not 'Host'"),
        ("threshold", THRESHOLD + "    where: {platform: [sonic, junos]}\n", 12,
         "`where` key `platform` takes linux, sonic, cumulus, onyx, eos, nxos (or a list of them)"),
        ("threshold", THRESHOLD + "    where: host\n", 2, "`where` must be a mapping of filter keys"),
        ("missing", "    metrics: [port_state]\n    where: {kind: host, priority: 3}\n", 10,
         "unknown `where` key(s) ['priority'] (one of kind, link_layer, platform, role)"),
        ("rate", THRESHOLD + "    also:\n      - {metric: cnp_sent, op: '==', value: 0, where: {rack: r1}}\n", 13,
         "an `also` condition's unknown `where` key(s) ['rack']"),
        # mismatch: exactly one mode, and the keys it reads
        ("mismatch", MISMATCH + "    against: switch\n    against_metric: pfc_enabled\n", 2,
         "mismatch mode is ambiguous: `against` (peer), `against_metric` (metric); name it with compare: metric or "
         "peer"),
        ("mismatch", MISMATCH + "    expected: 1\n    against_metric: max_mtu\n", 2,
         "mismatch mode is ambiguous: `against_metric` (metric), `expected` (expected)"),
        ("mismatch", MISMATCH + "    compare: peer\n    expected: 1\n", 2,
         "compare: peer does not read `expected` (it takes `against`, `against_metric`, `when_value`)"),
        ("mismatch", MISMATCH + "    compare: metric\n    against_metric: max_mtu\n    when_value: 1\n", 2,
         "compare: metric does not read `when_value`"),
        ("mismatch", MISMATCH + "    compare: expected\n", 2, "compare: expected needs `expected`"),
        ("mismatch", MISMATCH + "    compare: metric\n", 2, "compare: metric needs `against_metric`"),
        ("mismatch", MISMATCH, 2, "a mismatch rule compares with `expected` (a value), `against: switch`"),
        ("mismatch", MISMATCH + "    expected: [1, 0]\n", 2,
         "with compare: expected, `expected` is one value or a mapping of priorities to values, not a list"),
        ("mismatch", MISMATCH + "    expected: {9: 1}\n", 10, "`expected` must be a string, a number, a list of them, "
                                                              "or a mapping of priorities 0-7"),
        # parameters that would be read in a way their author did not mean
        ("threshold", THRESHOLD + "    group_by: [target]\n", 2,
         "`group_by` of a threshold rule groups its `aggregate` count"),
        ("threshold", THRESHOLD + "    aggregate: {value: 2}\n    group_by: [entity]\n", 2,
         "the `group_by` of an `aggregate` count must include target"),
        ("threshold", THRESHOLD + "    aggregate: {value: 2}\n    group_by: [target, rack]\n", 2,
         "`group_by` takes target, entity, priority, size_bytes, kind, role, platform, raw_key, not 'rack'"),
        ("fleet_outlier", "    metric: fw_version\n    group_by: [ca_typ]\n", 2,
         "`group_by` takes target, entity, priority, size_bytes, kind, role, platform, raw_key or a glossary metric, "
         "not 'ca_typ'"),
        ("rate", THRESHOLD + "    also:\n      - {metric: port_state, op: in, value: [Active, Init]}\n", 2,
         "an `also` condition compares a list `value` with numbers only"),
        ("rate", THRESHOLD + "    also:\n      - {metric: cnp_sent, op: '==', value: none, scope: target}\n", 2,
         "an `also` condition with scope: target compares the target's total with a number, not 'none'"),
        ("rate", THRESHOLD + "    also:\n      - {metric: cnp_sent, op: '==', value: 0, field: rates}\n", 2,
         "`field` of an `also` condition must be one of value, rate, delta, not 'rates'"),
        # a number compared with text matches nothing: the rule would never fire
        ("threshold", "    metric: link_downed\n    op: '>'\n    value: lots\n", 2,
         "`value` compared with link_downed must be a finite number, not 'lots'"),
        ("threshold", "    metric: link_downed\n    op: '>'\n    value: nan\n", 2,
         "`value` compared with link_downed must be a finite number, not 'nan'"),
        ("threshold", "    metric: link_downed\n    op: in\n    value: [1, many]\n", 2,
         "`value` compared with link_downed must be a finite number"),
        ("threshold", "    metric: link_downed\n    op: '>'\n    value: .inf\n", 2,
         "`value` must be a string, a number or a list of them, not"),
        ("threshold", "    metric: link_downed\n    op: '>'\n    value: .nan\n", 2,
         "`value` must be a string, a number or a list of them, not"),
        ("rate", THRESHOLD + "    also:\n      - {metric: cnp_sent, op: '>', value: lots}\n", 2,
         "`value` compared with cnp_sent must be a finite number, not 'lots'"),
        ("rate", THRESHOLD.replace("value: 0", "value: Active").replace("link_downed", "port_state"), 2,
         "`value` compared with port_state must be a finite number, not 'Active'"),
        ("ecn_vs_pause", "    metric: rx_pause_fraction\n    paused_above: lots\n    marked_below: 0.01\n", 2,
         "`paused_above` must be a number, not 'lots'"),
        ("ecn_vs_pause", "    metric: rx_pause_fraction\n    paused_above: .inf\n    marked_below: 0.01\n", 2,
         "`paused_above` must be a number, not"),
        ("ratio", "    numerator: cnp_handled\n    denominator: cnp_sent\n    op: '<'\n    value: .nan\n", 2,
         "`value` must be a number, not"),
        ("deviation", "    metric: bw_avg_gbps\n    min_deviation: .inf\n", 2, "`min_deviation` must be a number"),
    ],
)
def test_bad_values_are_refused_with_file_line_and_reason(tmp_path: Path, kind: str, body: str, line: int,
                                                          message: str) -> None:
    path, got = _refusal(tmp_path, kind, body)
    assert got.startswith(f"{path}:{line}: rule r: "), got
    assert message in got, got


@pytest.mark.parametrize("key", ["description", "ref"])
def test_description_and_ref_are_refused_not_silently_dropped(tmp_path: Path, key: str) -> None:
    path, got = _refusal(tmp_path, "threshold", THRESHOLD + f"    {key}: see the runbook\n")
    assert got.startswith(f"{path}:2: rule r: `{key}` is not shown to the operator; ")
    assert "symptom, cause, check or fix" in got


def test_no_shipped_rule_uses_description_or_ref() -> None:
    for path in sorted(default_playbooks().glob("*.y*ml")):
        for raw in yamlio.load(path)["rules"]:
            assert not {"description", "ref"} & set(raw), (path, raw.get("id"))


@pytest.mark.parametrize(
    ("kind", "body"),
    [
        ("mismatch", MISMATCH + "    against: switch\n    when_value: 1\n"),
        ("mismatch", MISMATCH + "    compare: peer\n    against_metric: pfc_enabled\n    when_value: 1\n"),
        ("mismatch", MISMATCH + "    compare: roles\n"),
        ("mismatch", "    metric: active_mtu\n    compare: metric\n    against_metric: max_mtu\n"),
        ("mismatch", MISMATCH + "    expected: {3: 1, default: 0}\n    where: {kind: host, priority: [3, 4]}\n"),
        ("missing", "    metrics: [port_state]\n    where: {kind: [host, switch], link_layer: Ethernet}\n"),
        ("threshold", THRESHOLD + "    aggregate: {value: 2}\n    group_by: [target, entity, priority]\n"),
        ("rate", THRESHOLD + "    also:\n      - {metric: port_state, op: '==', value: Active}\n"
                             "      - {metric: cnp_sent, op: '>', value: 0, scope: target}\n"),
        ("fleet_outlier", "    metric: link_rate_gbps\n    group_by: [ca_type, role]\n"),
        ("threshold", "    metric: port_state\n    op: '!='\n    value: Active\n"),  # text for a state metric
        ("threshold", "    metric: link_downed\n    op: in\n    value: [1, 2.5]\n"),
    ],
)
def test_the_same_checks_accept_what_the_kinds_read(tmp_path: Path, kind: str, body: str) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(HEAD.format(kind=kind) + body)
    (rule,) = playbook.load_file(path)
    assert rule.kind == kind and rule.source == f"{path}:2"


# --- the reference: playbooks/README.md documents every kind and every key --------------------------------------

README = default_playbooks() / "README.md"


def _sections(text: str) -> dict[str, str]:
    """`### \\`kind\\`` heading → the text up to the next heading of level 2 or 3."""
    out = {}
    for match in re.finditer(r"^### `([a-z_]+)`\n(.*?)(?=^##)", text + "\n##", re.S | re.M):
        out[match.group(1)] = match.group(2)
    return out


def _row(section: str, key: str) -> str | None:
    return next((line for line in section.splitlines() if line.startswith(f"| `{key}` |")), None)


def test_readme_has_a_section_for_every_kind_documenting_each_of_its_keys() -> None:
    sections = _sections(README.read_text())
    assert set(playbook.KINDS) <= set(sections), sorted(set(playbook.KINDS) - set(sections))
    for kind in playbook.KINDS:
        for key in sorted(registry.KINDS[kind].params):
            row = _row(sections[kind], key)
            assert row, f"playbooks/README.md: kind {kind} does not document `{key}`"
            if key in registry.KINDS[kind].required:
                assert row.split("|")[2].strip() == "yes", (kind, key)
            for choice in playbook._KIND_PARAM_CHOICES.get((kind, key)) or playbook.PARAM_CHOICES.get(key, ()):
                assert f"`{choice}`" in row, (kind, key, choice)
        assert "```yaml" in sections[kind], f"no example for kind {kind}"


def test_readme_documents_the_common_keys_where_keys_placeholders_and_suggesters() -> None:
    from rdmatool.rules.engine import _evidence
    from rdmatool.tune import SUGGESTERS

    text = README.read_text()
    common = text.split("## Common keys", 1)[1].split("\n## ", 1)[0]
    for key in playbook._COMMON:
        assert _row(common, key), key
    where = text.split("## where filters", 1)[1].split("\n## ", 1)[0]
    for key in playbook.WHERE_KEYS:
        assert _row(where, key), key
    evidence = _evidence(playbook.load_file(default_playbooks() / "10-links.yaml")[0], {"target": "t"})
    for name in evidence:
        assert f"| `{{{name}}}` |" in text, name
    for name in SUGGESTERS:
        assert f"| `{name}` |" in text, name
    for name in ("description", "ref"):
        assert f"`{name}`" in common


# --- the CLI: a bad playbook is exit 2 and one line ---------------------------------------------------------------


def test_a_bad_copy_of_the_shipped_playbooks_is_exit_2_with_one_line(tmp_path: Path) -> None:
    shutil.copytree(default_playbooks(), tmp_path / "pb")
    broken = tmp_path / "pb" / "20-roce-congestion.yaml"
    text = broken.read_text()
    start = "  - id: host_pfc_not_roce_priority\n"
    assert start in text
    line = text[: text.index(start)].count("\n") + 1
    broken.write_text(text.replace(start, start + "    against_metric: pfc_enabled\n"))
    result = subprocess.run([sys.executable, "-m", "rdmatool", "diagnose", str(REPO / "examples" / "demo-bundle"),
                             "--playbooks", str(tmp_path / "pb")], capture_output=True, text=True, timeout=120)
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert lines[0].startswith(f"rdmatool: {broken}:{line}: rule host_pfc_not_roce_priority: mismatch mode is ambiguous")


def test_a_threshold_that_is_not_a_number_is_exit_2_naming_the_line(tmp_path: Path) -> None:
    """`value: lots` used to load, compare as text, match nothing and let the diagnosis pass."""
    shutil.copytree(default_playbooks(), tmp_path / "pb")
    (tmp_path / "pb" / "99-site.yaml").write_text(HEAD.format(kind="threshold").replace("  - id: r", "  - id: lots_of")
                                                  + "    metric: link_downed\n    op: '>'\n    value: lots\n")
    result = subprocess.run([sys.executable, "-m", "rdmatool", "diagnose", str(REPO / "examples" / "demo-bundle"),
                             "--playbooks", str(tmp_path / "pb")], capture_output=True, text=True, timeout=120)
    assert result.returncode == 2, result.stderr
    assert result.stderr == (f"rdmatool: {tmp_path / 'pb' / '99-site.yaml'}:2: rule lots_of: `value` compared with "
                             f"link_downed must be a finite number, not 'lots'\n")
