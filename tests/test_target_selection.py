"""Target selection as schedulers write it (ClusterShell NodeSet syntax): ranges, folding, exclusion, intersection,
`@group`, unknown names; Ansible INI ranges; the inventory's `links:`; the switches a hosts-only selection brings in;
the command line's one-line refusals and the gate's drain formats."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rdmatool import inventory
from rdmatool.cli import app
from rdmatool.cli.gate_cmd import _drain_text
from rdmatool.errors import InventoryError
from rdmatool.model import Target, TargetKind
from rdmatool.present import hostlist
from rdmatool.topology import Link
from rdmatool.topology import switches_for_hosts as cabling

runner = CliRunner()

NATIVE = """\
defaults: {user: root}
groups:
  gpu:  {kind: host, platform: linux, role: compute}
  stor: {kind: host, platform: linux, role: storage}
  leaf: {kind: switch, platform: sonic}
targets:
  - {name: "gpu[001-064]", address: "10.0.0.[1-64]", group: gpu}
  - {name: "st[01-04]", group: stor}
  - {name: "leaf[01-04]", address: "10.0.1.[1-4]", group: leaf, ports: [Ethernet0, Ethernet4, Ethernet8]}
links:
  - {host: "gpu[001-002]", nic: mlx5_1, switch: leaf01, switch_port: "Ethernet[0-4/4]"}
  - {host: gpu003, nic: mlx5_1, switch: leaf02, switch_port: Ethernet8}
  - {host: "st[01-04]", nic: mlx5_0, switch: leaf03}
"""


@pytest.fixture
def inv(tmp_path: Path) -> Path:
    path = tmp_path / "inv.yaml"
    path.write_text(NATIVE)
    return path


@pytest.fixture
def targets(inv: Path) -> list[Target]:
    return inventory.load(inv, ssh_config=None)


def names(chosen: list[Target]) -> list[str]:
    return [t.name for t in chosen]


# --- the hostlist module over ClusterShell ----------------------------------------------------------------------


def test_fold_writes_what_schedulers_read() -> None:
    assert hostlist.fold(["gpu003", "gpu001", "gpu002", "gpu004", "gpu009", "leaf01"]) == "gpu[001-004,009],leaf01"
    assert hostlist.fold([]) == ""
    assert hostlist.fold(["r1n2", "r1n1", "r2n1"]) == "r1n[1-2],r2n1"


def test_steps_and_padding_follow_clustershell() -> None:
    assert hostlist.expand("gpu[1-9/4]") == ["gpu1", "gpu5", "gpu9"]
    assert hostlist.expand("gpu[08-10]") == ["gpu08", "gpu09", "gpu10"]
    with pytest.raises(ValueError, match="padding"):
        hostlist.expand("gpu[001-64]")


@pytest.mark.parametrize("pattern", ["gpu01,gpu02", "gpu[01-02]!gpu01", "@gpu", "gpu*", "gpu 01"])
def test_one_pattern_has_no_operators(pattern: str) -> None:
    with pytest.raises(ValueError, match="not one host pattern"):
        hostlist.expand(pattern)


@pytest.mark.parametrize("pattern", ["gpu[1-100000000]", "a[1-1000]b[1-1000]", "x[1-1000000/1]"])
def test_millions_are_refused_before_nodeset_builds_them(pattern: str) -> None:
    started = time.monotonic()
    with pytest.raises(ValueError, match="more than 100000 names"):
        hostlist.expand(pattern)
    assert time.monotonic() - started < 0.2


def test_terms_split_outside_brackets_only() -> None:
    assert hostlist.terms("gpu[001-064,070],!gpu005 &@gpu") == [
        (",", "gpu[001-064,070]"), ("!", "gpu005"), ("&", "@gpu")]
    for bad in ("gpu01&", "gpu01&!gpu02", "", "gpu[01"):
        with pytest.raises(ValueError):
            hostlist.terms(bad)


# --- --limit and --exclude ---------------------------------------------------------------------------------------


def test_a_folded_set_selects_what_it_was_folded_from(targets) -> None:
    some = ["gpu001", "gpu002", "gpu003", "gpu009", "gpu064", "st02", "leaf03"]
    assert names(inventory.select(targets, hostlist.fold(some))) == some


def test_ranges_and_globs_select_in_inventory_order(targets) -> None:
    assert names(inventory.select(targets, "leaf*,gpu[010-011],st01")) == ["gpu010", "gpu011", "st01", "leaf01",
                                                                          "leaf02", "leaf03", "leaf04"]


@pytest.mark.parametrize("limit", ["gpu[001-006]!gpu005", "gpu[001-006],!gpu005", "gpu[001-006] !gpu005"])
def test_exclusion_in_the_limit_both_spellings(targets, limit: str) -> None:
    assert names(inventory.select(targets, limit)) == ["gpu001", "gpu002", "gpu003", "gpu004", "gpu006"]


def test_exclude_option_and_a_leading_bang(targets) -> None:
    assert names(inventory.select(targets, "@gpu", exclude="gpu[002-063]")) == ["gpu001", "gpu064"]
    everything_but = inventory.select(targets, "!@gpu")
    assert names(everything_but) == ["st01", "st02", "st03", "st04", "leaf01", "leaf02", "leaf03", "leaf04"]
    assert names(inventory.select(targets, exclude="@gpu,@leaf")) == ["st01", "st02", "st03", "st04"]


def test_intersection_and_xor(targets) -> None:
    assert names(inventory.select(targets, "@gpu&gpu[060-070]", ignore_unknown=True)) == [
        "gpu060", "gpu061", "gpu062", "gpu063", "gpu064"]
    assert names(inventory.select(targets, "gpu[001-003]^gpu[002-004]")) == ["gpu001", "gpu004"]


def test_groups_with_and_without_at(targets) -> None:
    assert names(inventory.select(targets, "@stor")) == ["st01", "st02", "st03", "st04"]
    assert names(inventory.select(targets, "stor")) == ["st01", "st02", "st03", "st04"]  # as before
    assert len(inventory.select(targets, "@gpu")) == 64


@pytest.mark.parametrize(("limit", "named"), [
    ("gpu[063-066]", "gpu[065-066]"), ("gpu01", "gpu01"), ("@nosuch", "@nosuch"), ("spine*", "spine*"),
    ("gpu001,gpu999", "gpu999"),
])
def test_an_unknown_name_is_an_error_naming_it(targets, limit: str, named: str) -> None:
    with pytest.raises(InventoryError) as caught:
        inventory.select(targets, limit)
    message = str(caught.value)
    assert message.startswith(f"--limit: {named}: no such target") and "\n" not in message


def test_an_unknown_exclusion_is_an_error_too(targets) -> None:
    with pytest.raises(InventoryError, match=r"^--exclude: gpu0650: no such target"):
        inventory.select(targets, "@gpu", exclude="gpu0650")


def test_ignore_unknown_keeps_the_rest_and_reports_what_it_skipped(targets) -> None:
    chosen = inventory.selection(targets, "gpu[063-066],@nosuch", ignore_unknown=True)
    assert names(chosen.targets) == ["gpu063", "gpu064"]
    assert chosen.unknown == ("gpu[065-066]", "@nosuch")


def test_a_huge_limit_is_one_line(targets) -> None:
    started = time.monotonic()
    with pytest.raises(InventoryError, match=r"^--limit: 'gpu\[1-900000000\]' expands to more than 100000"):
        inventory.select(targets, "gpu001,gpu[1-900000000]")
    assert time.monotonic() - started < 0.5


# --- Ansible INI and YAML ranges ---------------------------------------------------------------------------------


def test_ansible_ini_numeric_and_letter_ranges(tmp_path: Path) -> None:
    path = tmp_path / "hosts.ini"
    path.write_text("[gpu]\ngpu[01:04] ansible_user=root\nodd[1:9:4]\n\n[leaf]\nleaf-[a:c] ansible_network_os=eos\n")
    loaded = inventory.load(path, ssh_config=None)
    assert names(loaded) == ["gpu01", "gpu02", "gpu03", "gpu04", "odd1", "odd5", "odd9", "leaf-a", "leaf-b",
                             "leaf-c"]
    assert {t.user for t in loaded[:4]} == {"root"}
    assert all(t.kind is TargetKind.SWITCH and "leaf" in t.groups for t in loaded[7:])
    assert names(inventory.select(loaded, "@gpu&gpu[02-03]")) == ["gpu02", "gpu03"]


def test_ansible_yaml_host_ranges(tmp_path: Path) -> None:
    path = tmp_path / "hosts.yaml"
    path.write_text("all:\n  children:\n    gpu:\n      hosts:\n        'gpu[001:003]': {ansible_user: admin}\n")
    loaded = inventory.load(path, ssh_config=None)
    assert names(loaded) == ["gpu001", "gpu002", "gpu003"] and {t.user for t in loaded} == {"admin"}


def test_a_host_in_two_ranged_groups_is_one_target(tmp_path: Path) -> None:
    path = tmp_path / "hosts.ini"
    path.write_text("[gpu]\ngpu[01:04]\n\n[rack1]\ngpu[01:02]\n")
    loaded = {t.name: t for t in inventory.load(path, ssh_config=None)}
    assert len(loaded) == 4 and set(loaded["gpu01"].groups) == {"gpu", "rack1"} and loaded["gpu03"].groups == ("gpu",)


@pytest.mark.parametrize(("line", "expected"), [
    ("gpu[4:1]", "bad range [4:1]"), ("gpu[a:3]", "bad range [a:3]"), ("gpu[1:4:0]", "bad range [1:4:0]"),
    ("gpu[a:C]", "bad range [a:C]"), ("gpu[1:2]x[", "unbalanced brackets"),
    ("gpu[1:100000000]", "more than 100000 hosts"), ("n[1:1000]m[1:1000]", "more than 100000 hosts"),
])
def test_bad_or_huge_ansible_ranges_are_one_line(tmp_path: Path, line: str, expected: str) -> None:
    path = tmp_path / "hosts.ini"
    path.write_text(f"[gpu]\nok01\n{line}\n")
    started = time.monotonic()
    with pytest.raises(InventoryError) as caught:
        inventory.load(path, ssh_config=None)
    assert str(caught.value).startswith(f"{path}:3: ") and expected in str(caught.value)
    assert time.monotonic() - started < 0.5


def test_many_ranged_lines_cannot_add_up_past_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "hosts.ini"
    path.write_text("[gpu]\n" + "".join(f"n{i}x[1:60000]\n" for i in range(3)))
    with pytest.raises(InventoryError, match=r"hosts.ini:3: the inventory expands to more than 100000 hosts"):
        inventory.load(path, ssh_config=None)


# --- links and the switches of a hosts-only selection -----------------------------------------------------------


def test_inventory_links_pair_ranges_and_repeat_single_names(inv: Path) -> None:
    links = inventory.load_inventory(inv, ssh_config=None).links
    assert [(x.host, x.switch, x.switch_port) for x in links[:3]] == [
        ("gpu001", "leaf01", "Ethernet0"), ("gpu002", "leaf01", "Ethernet4"), ("gpu003", "leaf02", "Ethernet8")]
    assert [x.host for x in links[3:]] == ["st01", "st02", "st03", "st04"] and {x.switch_port for x in links[3:]} == {""}
    as_links = cabling.from_inventory(links)
    assert as_links[0] == Link("gpu001", "mlx5_1", "leaf01", "Ethernet0", "inventory")


@pytest.mark.parametrize(("link", "expected"), [
    ("{host: gpu999, nic: mlx5_1, switch: leaf01}", "link host 'gpu999' is not a host of the inventory"),
    ("{host: leaf02, nic: mlx5_1, switch: leaf01}", "link host 'leaf02' is not a host"),
    ("{host: gpu001, nic: mlx5_1, switch: gpu002}", "link switch 'gpu002' is not a switch"),
    ("{host: gpu001, switch: leaf01}", "a link needs `nic`"),
    ("{host: gpu001, nic: 'a;b', switch: leaf01}", "link nic 'a;b' is not a port name"),
    ("{host: gpu001, nic: mlx5_1, switch: leaf01, cable: x}", "unknown key 'cable'"),
    ("{host: 'gpu[001-003]', nic: mlx5_1, switch: leaf01, switch_port: 'E[1-2]'}", "same number of names"),
    ("{host: 'gpu[1-99999999]', nic: mlx5_1, switch: leaf01}", "more than 100000 names"),
])
def test_bad_links_are_one_line_naming_file_and_line(tmp_path: Path, link: str, expected: str) -> None:
    path = tmp_path / "inv.yaml"
    path.write_text(NATIVE.split("links:")[0] + f"links:\n  - {link}\n")
    with pytest.raises(InventoryError) as caught:
        inventory.load(path, ssh_config=None)
    assert str(caught.value).startswith(f"{path}:11: ") and expected in str(caught.value)


def test_hosts_only_selection_gains_its_switches_with_the_cabled_ports(inv: Path) -> None:
    loaded = inventory.load_inventory(inv, ssh_config=None)
    chosen = inventory.select(loaded.targets, "gpu[001-003]")
    widened = cabling.add_cabled_switches(chosen, loaded.targets, cabling.from_inventory(loaded.links))
    assert widened.added == ("leaf01", "leaf02")
    ports = {t.name: t.ports for t in widened.targets if t.kind is TargetKind.SWITCH}
    assert ports == {"leaf01": ("Ethernet0", "Ethernet4"), "leaf02": ("Ethernet8",)}
    # links without a switch port keep the switch's own port list
    storage = cabling.add_cabled_switches(inventory.select(loaded.targets, "st01"), loaded.targets,
                                          cabling.from_inventory(loaded.links))
    assert [(t.name, t.ports) for t in storage.targets[1:]] == [("leaf03", ("Ethernet0", "Ethernet4", "Ethernet8"))]


def test_a_selection_with_a_switch_is_left_alone_and_lldp_names_are_shortened(inv: Path) -> None:
    loaded = inventory.load_inventory(inv, ssh_config=None)
    chosen = inventory.select(loaded.targets, "gpu001,leaf04")
    assert cabling.add_cabled_switches(chosen, loaded.targets, cabling.from_inventory(loaded.links)).added == ()
    seen = [Link("gpu010", "mlx5_1", "leaf04.dc1.example", "Ethernet4", "lldp"),
            Link("gpu010", "mlx5_0", "spine09", "Ethernet1", "lldp")]
    widened = cabling.add_cabled_switches(inventory.select(loaded.targets, "gpu010"), loaded.targets, seen)
    assert widened.added == ("leaf04",) and widened.targets[-1].ports == ("Ethernet4",)


# --- the command line --------------------------------------------------------------------------------------------


def test_cli_unknown_name_is_exit_2_one_line_and_ignore_unknown_names_it(inv: Path) -> None:
    refused = runner.invoke(app, ["inventory", "show", "-i", str(inv), "--limit", "gpu[063-065]", "--json"])
    assert refused.exit_code == 2 and refused.output.strip().count("\n") == 0
    assert "gpu065" in refused.output and "Traceback" not in refused.output
    skipped = runner.invoke(app, ["inventory", "show", "-i", str(inv), "--limit", "gpu[063-065]", "-x", "gpu064",
                                  "--ignore-unknown", "--json"])
    assert skipped.exit_code == 0 and '"gpu063"' in skipped.stdout and '"gpu064"' not in skipped.stdout
    assert "gpu065: no such target" in skipped.stderr


def test_cli_bad_expression_is_exit_2(inv: Path) -> None:
    for limit in ("gpu001&", "gpu[1-99999999]", "gpu[3-1]"):
        result = runner.invoke(app, ["inventory", "show", "-i", str(inv), "--limit", limit])
        assert result.exit_code == 2 and result.output.startswith("rdmatool: --limit: "), result.output


def test_drain_formats() -> None:
    drain = ["gpu004", "gpu001", "gpu002", "gpu003", "gpu009"]
    assert _drain_text(drain, "lines") == "gpu004\ngpu001\ngpu002\ngpu003\ngpu009\n"
    assert _drain_text(drain, "nodeset") == "gpu[001-004,009]\n"
    assert _drain_text([], "nodeset") == "" == _drain_text([], "lines")


def test_gate_refuses_an_unknown_drain_format(inv: Path) -> None:
    result = runner.invoke(app, ["gate", "-i", str(inv), "--drain-format", "csv"])
    assert result.exit_code == 2 and "--drain-format" in result.output


# --- folded sets in reports --------------------------------------------------------------------------------------


def test_reports_group_failures_under_folded_sets() -> None:
    from rdmatool.report.hostsets import folded, grouped_failures

    failures = [{"target": f"gpu{i:03d}", "error": "connection refused"} for i in (1, 2, 3, 9)]
    failures += [{"target": "leaf01", "parser": "sonic_ecn", "error": "timed out"},
                 {"target": "gpu004", "error": "connection refused"}]
    assert grouped_failures(failures) == [("gpu[001-004,009]", "connection", "connection refused"),
                                          ("leaf01", "sonic_ecn", "timed out")]
    assert folded(["odd[name", "gpu01"]) == "odd[name, gpu01"  # not foldable: listed as it is


def test_the_text_report_names_the_hosts_it_does_not_show() -> None:
    from rich.console import Console

    from rdmatool.model import Finding, Severity, Verdict
    from rdmatool.outcome.result import DiagnoseResult
    from rdmatool.report import text

    findings = [Finding(rule="r", severity=Severity.ERROR, target=f"gpu{i:02d}", entity=None, symptom="s", cause="c",
                        check="k", fix="f", evidence={}) for i in range(1, 11)]
    result = DiagnoseResult(verdict=Verdict.FAIL, findings=findings, failures=[], source="b")
    console = Console(record=True, width=200)
    text.render(result, console)
    shown = text.PER_CAUSE  # symptoms shown per cause; the rest named as one folded set
    assert f"… and {10 - shown} more on gpu[{shown + 1:02d}-10]" in console.export_text()
