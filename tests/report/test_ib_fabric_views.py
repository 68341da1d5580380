"""The InfiniBand subnet's sweep everywhere it shows: the on-call view names the link, the HTML map draws the spines
with the bad cable red, the Prometheus export has switch-port series, `bundle diff` lists the cabling and switch-port
changes (rdmatool.topology.ib_fabric; tests/topology/ib_fat_tree.py renders the sweep)."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from rdmatool.bundle_ops.diff import diff_paths
from rdmatool.report import page as pages
from rdmatool.report import plots, prometheus
from rdmatool.report.text import render
from rdmatool.topology.ib_fabric import with_ib_fabric
from tests.helpers import PARSER_FIXTURES
from tests.topology.ib_fat_tree import Faults, fat_tree, write_bundle

IBSTAT = (PARSER_FIXTURES / "ibstat" / "healthy.txt").read_text().split("CA 'mlx5_bond_0'")[0]
TREE = fat_tree(16, 4, 2, 2, seed=9)
LEAF, SPINE = TREE.leaves[1], TREE.spines[0]


def _write(path, snapshots):
    return write_bundle(path, TREE, snapshots, extra={(TREE.hosts[0], "ibstat"): [IBSTAT] * len(snapshots)})


@pytest.fixture(scope="module")
def bundles(tmp_path_factory):
    root = tmp_path_factory.mktemp("ib-views")
    flapping = Faults(counters={(LEAF, 5): {"LinkDownedCounter": 3, "SymbolErrorCounter": 40}})
    before = _write(root / "before", [Faults(), Faults()])
    after = _write(root / "after", [Faults(), Faults(counters=flapping.counters, gone={(TREE.leaves[2], 6)},
                                                             narrow={(TREE.leaves[3], 5): "2x"})])
    return before, after


@pytest.fixture(scope="module")
def page(bundles):
    return pages.build(bundles[1])  # the report's page: its diagnosis is `rdmatool diagnose`'s


def test_the_oncall_view_names_the_link_not_the_host(page) -> None:
    out = io.StringIO()
    render(page.result, Console(file=out, width=100, color_system=None))
    text = out.getvalue()
    assert f"InfiniBand link {LEAF} port 5 ↔ {SPINE} port" in text and "[ib_switch_link_downed]" in text
    assert "[ib_cable_gone]" in text and "MF0;" not in text
    assert not [f for f in page.result.findings if f.target in TREE.hosts]


def test_the_map_draws_the_spines_and_the_bad_cable_red(page) -> None:
    svg = plots.topology_svg(page)
    arcs = [c for c in page.links if c.link.host in TREE.switches]
    assert len(arcs) == len(TREE.leaves) * 2 - 1  # every uplink once, the cable gone left out
    bad = {(c.link.host, c.link.nic): c.faults for c in page.links if c.bad}
    assert "ib_switch_link_downed" in bad[(LEAF, "5")]
    assert "ib_switch_link_below_fabric" in bad[(TREE.leaves[3], "5")]
    assert f'class="cable physical" data-host="{LEAF}" data-nic="5" data-switch="{SPINE}"' in svg
    assert f">{SPINE}</text>" in svg


def test_prometheus_has_series_per_switch_port(bundles) -> None:
    text = prometheus.bundle_export(bundles[1]).text()
    leaf_series = [line for line in text.splitlines() if f'target="{LEAF}"' in line and 'port="5"' in line]
    assert any("link_downed" in line for line in leaf_series), leaf_series[:5]
    assert not [line for line in text.splitlines() if "MF0;" in line]


def test_bundle_diff_lists_the_cabling_and_switch_port_changes(bundles) -> None:
    changed = diff_paths(*bundles, prepare=with_ib_fabric)
    cabling = {(r["target"], str(r["port"])): (r["before"], r["after"]) for r in changed.cabling}
    assert cabling[(TREE.leaves[2], "6")] == (f"{TREE.spines[1]} 3", None)  # leaf 2's second uplink, gone
    widths = {(r["target"], str(r["entity"])): (r["before"], r["after"]) for r in changed.config
              if r["setting"] == "ib_link_width"}
    assert widths[(TREE.leaves[3], "5")] == ("4X", "2X")
    assert not diff_paths(bundles[0], bundles[0], prepare=with_ib_fabric).cabling
