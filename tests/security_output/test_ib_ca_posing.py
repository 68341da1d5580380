"""A CA's node description is set by its own host: a host may describe its CA as another host's (`gpu01 mlx5_0`),
and a cloned image gives two CAs one description. Where the bundle holds the named host's own adapters (ibstat),
a CA whose GUID that host does not list is not its port: the leaf port cabled to it names the CA by its GUID
(`ib-ca-0x...`), a note says so once, and its faults never reach the named host (rdmatool.topology.ib_fabric)."""

from __future__ import annotations

import pytest

from rdmatool.diagnose.pipeline import diagnose_bundle
from rdmatool.table.analysis import analyse_path
from rdmatool.topology import observed
from rdmatool.topology.ib_fabric import with_ib_fabric
from tests.topology import ib_fat_tree
from tests.topology.ib_fat_tree import Faults, fat_tree, write_bundle
from tests.topology.test_ib_fabric import IBSTAT

_FIXTURE_GUID = "0x5c257303006b1e40"  # the node and port GUID of IBSTAT's mlx5_0


def _ibstat(tree, host: str) -> str:
    """The host's own ibstat: its CA's GUID as the sweep prints it."""
    assert _FIXTURE_GUID in IBSTAT
    return IBSTAT.replace(_FIXTURE_GUID, tree.guid(f"{host} mlx5_0"))


def _place(tree, host: str) -> tuple[str, str]:
    """(leaf, port) the host's CA is cabled to."""
    return next(sw for sw, far in tree.cables if far == (f"{host} mlx5_0", 1))


def _sysfs(tree, host: str, symbol_errors: int) -> str:
    """The host's own sysfs view of its CA: the node GUID colon-grouped, its port counting symbol errors."""
    digits = tree.guid(f"{host} mlx5_0")[2:]
    return (f"/sys/class/infiniband/mlx5_0/node_guid:{':'.join(digits[i:i + 4] for i in range(0, 16, 4))}\n"
            f"/sys/class/infiniband/mlx5_0/ports/1/counters/symbol_error:{symbol_errors}\n")


def _bundle(path, tree, poser: str | None, victim: str | None, read: list[str], sysfs: str | None = None):
    """The tree's sweep, `poser`'s CA describing itself as `victim`'s, the poser's leaf port's cable flapping and
    counting symbol errors; `read`: the hosts whose ibstat the bundle holds; `sysfs`: a host whose own view is its
    sysfs, its port counting 5 symbol errors over the window."""
    faulty = _place(tree, poser or tree.hosts[5])
    after = Faults(counters={faulty: {"LinkDownedCounter": 2, "SymbolErrorCounter": 40}})
    extra = {(h, "ibstat"): [_ibstat(tree, h)] * 2 for h in read}
    if sysfs is not None:
        extra[(sysfs, "sysfs_counters")] = [_sysfs(tree, sysfs, 0), _sysfs(tree, sysfs, 5)]
    with pytest.MonkeyPatch.context() as patch:
        if poser is not None:
            for name, render in list(ib_fat_tree.TOOLS.items()):
                patch.setitem(ib_fat_tree.TOOLS, name, lambda t, f, render=render: render(t, f).replace(
                    f"{poser} mlx5_0", f"{victim} mlx5_0"))
        return write_bundle(path, tree, [Faults(), after], extra=extra)


def _neighbors(analysis) -> dict[tuple[str, str], str]:
    rows = analysis.query.of_metric("ib_link_neighbor")
    rows = rows[rows["kind"] == "switch"]
    return dict(zip(zip(rows["target"], rows["entity"]), rows["text"]))


@pytest.fixture(scope="module")
def tree():
    return fat_tree(8, 2, 2, 2, seed=5)  # two hosts a leaf: hosts[1] on the first leaf, hosts[5] on the third


@pytest.mark.parametrize("poser_at, victim_at", [(5, 1), (1, 5)], ids=["poser-printed-last", "poser-printed-first"])
def test_a_ca_posing_as_a_read_host_is_named_by_its_guid(tmp_path, tree, poser_at, victim_at) -> None:
    poser, victim = tree.hosts[poser_at], tree.hosts[victim_at]
    path = _bundle(tmp_path / "b", tree, poser, victim, read=[tree.hosts[0], victim, poser])
    raw = analyse_path(path)
    analysis = with_ib_fabric(raw)
    guid = tree.guid(f"{poser} mlx5_0")
    near = {leaf_port: _neighbors(analysis).get((leaf_port[0], str(leaf_port[1]))) for leaf_port in
            (_place(tree, poser), _place(tree, victim))}
    # the poser's leaf port names the CA by its GUID; the victim's own CA keeps its name, whichever printed first
    assert near[_place(tree, poser)] == f"ib-ca-{guid}|1"
    assert near[_place(tree, victim)] == f"{victim} mlx5_0|1"
    # the cabling the per-cable judges read puts the victim on its own leaf port only
    at = {(link.switch, link.switch_port) for link in observed.subnet_view(analysis) if link.host == victim}
    assert at == {(leaf, str(port)) for leaf, port in [_place(tree, victim)]}
    said = [n for n in analysis.table.notes if "ib-ca-" in n]
    leaf, port = _place(tree, poser)
    assert said == [f"InfiniBand CA {guid} on {leaf} port {port} describes itself as `{victim} mlx5_0`, which "
                    f"{victim}'s own view of its adapters (ibstat, ibv_devinfo, sysfs) does not list: named "
                    f"ib-ca-{guid}, not read as {victim}'s port"]
    with_ib_fabric(raw)  # judged again (a report, then its diagnosis): the note is not repeated
    assert [n for n in analysis.table.notes if "ib-ca-" in n] == said


def test_the_posers_faults_reach_no_host_and_the_note_shows(tmp_path, tree) -> None:
    poser, victim = tree.hosts[5], tree.hosts[1]
    result = diagnose_bundle(_bundle(tmp_path / "b", tree, poser, victim, read=[tree.hosts[0], victim]))
    leaf, port = _place(tree, poser)
    guid = tree.guid(f"{poser} mlx5_0")
    downed = [f for f in result.findings if f.rule == "ib_switch_link_downed"]
    assert [(f.target, f.entity) for f in downed] == [(leaf, str(port))]
    assert f"ib-ca-{guid} port 1" in downed[0].symptom and victim not in downed[0].symptom
    assert not {f.target for f in result.findings} & set(tree.hosts)  # no host blamed: the gate drains none
    assert not any(victim in f.symptom for f in result.findings)
    assert sum(f"ib-ca-{guid}" in n for n in result.notes) == 1


@pytest.mark.parametrize("poser_at, victim_at", [(1, 5), (5, 1)], ids=["poser-on-first-leaf", "poser-on-third-leaf"])
def test_a_victim_counting_errors_is_paired_with_its_own_leaf_port_only(tmp_path, tree, poser_at, victim_at) -> None:
    """The victim's own view is its sysfs (colon-grouped GUID) and its port counts a few errors: its finding names
    its own leaf port, never the poser's (whose 40 symbol errors would make it a both-ends cable on the victim)."""
    poser, victim = tree.hosts[poser_at], tree.hosts[victim_at]
    result = diagnose_bundle(_bundle(tmp_path / "b", tree, poser, victim, read=[tree.hosts[0]], sysfs=victim))
    poser_leaf, poser_port = _place(tree, poser)
    own_leaf, own_port = _place(tree, victim)
    cables = [f for f in result.findings if f.target == victim and f.rule.startswith("cable_errors")]
    assert [f.rule for f in cables] == ["cable_errors_host_end"]  # not both ends: the poser's errors are not its
    assert f"cabled to {own_leaf} {own_port} " in cables[0].symptom
    assert not any(poser_leaf in f.symptom or "+40" in f.symptom for f in result.findings if f.target == victim)
    assert sum(f"ib-ca-{tree.guid(f'{poser} mlx5_0')}" in n for n in result.notes) == 1


def test_a_host_the_bundle_did_not_read_keeps_todays_reading(tmp_path, tree) -> None:
    poser, victim = tree.hosts[5], tree.hosts[1]
    analysis = with_ib_fabric(analyse_path(_bundle(tmp_path / "b", tree, poser, victim, read=[tree.hosts[0]])))
    leaf, port = _place(tree, poser)
    assert _neighbors(analysis)[(leaf, str(port))] == f"{victim} mlx5_0|1"  # nothing to check the claim against
    assert not [n for n in analysis.table.notes if "ib-ca-" in n]


def test_honest_descriptions_are_read_as_their_hosts(tmp_path, tree) -> None:
    analysis = with_ib_fabric(analyse_path(_bundle(tmp_path / "b", tree, None, None, read=tree.hosts)))
    near = _neighbors(analysis)
    for host in tree.hosts:
        leaf, port = _place(tree, host)
        assert near[(leaf, str(port))] == f"{host} mlx5_0|1"
    assert not [n for n in analysis.table.notes if "ib-ca-" in n]
    assert {link.host for link in observed.subnet_view(analysis)} == set(tree.hosts)
