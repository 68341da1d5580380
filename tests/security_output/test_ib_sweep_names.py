"""Switch names from an InfiniBand sweep are node descriptions any node of the subnet sets: a switch claiming a host's
name, control bytes and escapes, markup, a path, a very long name. None may put a switch's fault on a host, and each
view (table, Markdown, HTML, Prometheus textfiles, JSON) shows them as characters."""

from __future__ import annotations

import dataclasses
import io
import json
import re

import pytest
from rich.console import Console

from rdmatool.diagnose.pipeline import diagnose_bundle
from rdmatool.model import Severity
from rdmatool.report import html, markdown, page, text
from rdmatool.report.prometheus import bundle_export
from rdmatool.report.prometheus.textfiles import write_per_target
from tests.security_output.test_every_view import RAW, outside_code
from tests.topology.ib_fat_tree import Faults, fat_tree, write_bundle
from tests.topology.test_ib_fabric import IBSTAT

ESCAPES = "evil\x1b]52;c;cm0gLXJm\x07\x15\x9b2J"
MARKUP = "<script>alert(1)</script>\"'&"


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    """A fat tree whose leaves describe themselves as the sweeping host, with escapes, with markup, as a path, at
    300 characters and as a port of the sweeping host; each of them has a cable that went down."""
    tree = fat_tree(12, 2, 2, 2, seed=4)
    victim = tree.hosts[0]
    claims = [victim, ESCAPES, MARKUP, "../../etc", "l" * 300, f"{victim} mlx5_9"]
    own = dict(zip(tree.leaves, claims, strict=True))
    plain = tree.desc
    tree.desc = lambda node: f"MF0;{own[node]}:MQM9790/U1" if node in own else plain(node)
    # each leaf's first uplink (port 3: two hosts a leaf) went down between the snapshots
    grown = {(leaf, 3): {"LinkDownedCounter": 2} for leaf in tree.leaves}
    path = write_bundle(tmp_path_factory.mktemp("ib") / "b", tree, [Faults(), Faults(counters=grown)],
                        extra={(victim, "ibstat"): [_own_ibstat(tree, victim)] * 2})
    return tree, path, diagnose_bundle(path)


def _own_ibstat(tree, host: str) -> str:
    """The host's ibstat with its own adapter's GUID, as the sweep prints it (else its CA reads as posing)."""
    return IBSTAT.replace("0x5c257303006b1e40", tree.guid(f"{host} mlx5_0"))


def test_no_switch_takes_a_host_s_name_and_each_fault_stays_on_a_switch(swept) -> None:
    tree, _path, result = swept
    downed = [f for f in result.findings if f.rule == "ib_switch_link_downed"]
    assert len(downed) == len(tree.leaves)
    assert not {f.target for f in result.findings} & set(tree.hosts)  # no host blamed, none drained
    by_guid = {f.target for f in downed if f.target.startswith("ib-switch-0x")}
    # the host's name, the escapes, the long name and the host's port are replaced by the GUID; the others stay
    renamed = (tree.leaves[0], tree.leaves[1], tree.leaves[4], tree.leaves[5])
    assert by_guid == {f"ib-switch-{tree.guid(leaf)}" for leaf in renamed}
    assert {f.target for f in downed} - by_guid == {MARKUP, "../../etc"}


def test_text_markdown_and_json_show_the_names_as_characters(swept) -> None:
    _tree, _path, result = swept
    out = io.StringIO()
    text.render(result, Console(file=out, width=200, color_system=None, force_terminal=False), Severity.INFO,
                show_all=True)
    assert not RAW.search(out.getvalue())
    md = markdown.render(result, Severity.INFO)
    assert "&lt;script&gt;" in md and "<script" not in outside_code(md) and not RAW.search(md)
    said = json.dumps([dataclasses.asdict(f) for f in result.findings], default=str)
    assert not RAW.search(said)  # escaped by JSON, the exact text kept


def test_the_html_report_shows_the_markup_as_text(swept) -> None:
    _tree, path, _result = swept
    shown = html.render(page.build(path))
    assert "<script>alert(1)" not in shown and "&lt;script&gt;alert(1)" in shown
    assert not RAW.search(shown.replace("\n", ""))


def test_prometheus_labels_are_escaped_and_no_name_makes_a_path(swept, tmp_path) -> None:
    _tree, path, _result = swept
    export = bundle_export(path)
    exposition = export.text()
    assert not RAW.search(exposition.replace("\n", ""))
    # every label value is a quoted string of the exposition format: \\, \" and \n escaped, nothing else raw
    for labels in re.findall(r"\{(.*)\}", exposition):
        assert re.fullmatch(r'(\w+="(?:[^"\\\n]|\\[\\"n])*",?)*', labels), labels
    assert 'target="<script>alert(1)</script>\\"\'&"' in exposition
    folder = tmp_path / "textfiles"
    folder.mkdir()
    refused = write_per_target(folder, export)
    assert "../../etc" in refused and MARKUP in refused
    written = sorted(p.name for p in tmp_path.rglob("*") if p.is_file())
    assert all(name.startswith("rdmatool") and name.endswith(".prom") for name in written)
    assert not (tmp_path / "etc").exists() and len(written) == len(list(folder.iterdir()))


def test_commands_and_bundle_diff_show_the_names_as_characters(swept, tmp_path) -> None:
    from rdmatool.bundle_ops.diff import diff_paths
    from rdmatool.report import bundle_diff
    from rdmatool.report import commands as commands_report
    from rdmatool.topology.ib_fabric import with_ib_fabric

    tree, path, result = swept
    said = commands_report.render(result, Severity.INFO)
    assert all(line.isprintable() for line in said.splitlines())
    assert not [n for n in result.notes if "describes itself as" in n]  # the victim's own CA is its own
    # B: the markup-named leaf's and the escape-named leaf's uplinks gone (cabling compared switch by switch)
    after = write_bundle(tmp_path / "after", tree, [Faults(gone={(tree.leaves[1], 3), (tree.leaves[2], 3)})] * 2,
                         extra={(tree.hosts[0], "ibstat"): [_own_ibstat(tree, tree.hosts[0])] * 2})
    diff = diff_paths(path, after, prepare=with_ib_fabric).as_json()
    out = io.StringIO()
    bundle_diff.render_text(diff, Console(file=out, width=200, color_system=None))
    assert "<script>" in out.getvalue() and not RAW.search(out.getvalue())
    md = bundle_diff.render_markdown(diff)
    assert "&lt;script&gt;" in md and "<script" not in outside_code(md) and not RAW.search(md)
