"""The report's topology: a cable is red for a physical fault of either end (link errors, flapping, down, degraded
width or speed) on every rail, the compute rails included, its far end drawn unknown when the bundle did not see
it; a fault of a setting or of the traffic is marked on its port and is not a cable."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from rdmatool.model import Severity
from rdmatool.report import page, plots
from rdmatool.rules.playbook import load_dir
from rdmatool.topology import Link
from tests.helpers import REPO
from tests.report.faulted import PHYSICAL, SETTING


@pytest.fixture
def demo(demo_page) -> page.Page:
    return demo_page


class Drawn(HTMLParser):
    """The map's cables (data-host, data-nic, stroke) and port markers (data-target)."""

    def __init__(self) -> None:
        super().__init__()
        self.cables: list[dict] = []
        self.markers: list[dict] = []
        self._cable: dict | None = None

    def handle_starttag(self, tag, attrs) -> None:
        values = dict(attrs)
        classes = (values.get("class") or "").split()
        if tag == "g" and "cable" in classes:
            self._cable = {**values, "physical": "physical" in classes}
            self.cables.append(self._cable)
        elif tag == "g" and "port-fault" in classes:
            self.markers.append(values)
        elif tag in ("line", "path") and self._cable is not None:
            self._cable["stroke"] = values["stroke"]

    def handle_endtag(self, tag) -> None:
        if tag == "g":
            self._cable = None


def drawn(shown: page.Page) -> Drawn:
    found = Drawn()
    found.feed(plots.topology_svg(shown))
    return found


def test_every_cable_rule_is_a_rule_of_the_shipped_playbooks() -> None:
    shipped = {rule.id for rule in load_dir(REPO / "playbooks")}
    assert not page.CABLE_RULES - shipped, page.CABLE_RULES - shipped  # a renamed rule would silently stop counting
    settings = {"host_pfc_not_roce_priority", "pfc_priority_mismatch_host_switch", "dcqcn_rp_disabled",
                "dcqcn_np_disabled", "host_trust_not_dscp", "active_mtu_below_max", "pfc_storm", "ecn_after_pfc"}
    assert not settings & page.CABLE_RULES


def test_the_demo_draws_its_compute_rail_faults_red_and_its_settings_on_their_ports(demo: page.Page) -> None:
    bad = {(c.link.host, c.link.nic): c for c in demo.links if c.bad}
    # the InfiniBand compute rail (mlx5_0): flapping, down, 1X; no LLDP or subnet view of it, so the far end is unseen
    assert set(bad) == {("gpu01", "mlx5_0"), ("gpu06", "mlx5_0"), ("gpu07", "mlx5_0")}
    assert "ib_link_flapping" in bad["gpu01", "mlx5_0"].faults
    assert "port_phys_not_linkup" in bad["gpu06", "mlx5_0"].faults
    assert "port_width_degraded" in bad["gpu07", "mlx5_0"].faults
    assert all(c.link.switch == "" and c.name.endswith(page.FAR_END_UNSEEN) for c in bad.values())
    faults = {(f.target, f.port): f for f in demo.port_faults}
    pfc = faults["gpu03", "mlx5_1/1 (ens1f0np0)"]  # PFC on the wrong priority: a setting, on its port
    assert pfc.rules == ("host_pfc_not_roce_priority", "pfc_priority_mismatch_host_switch")
    assert pfc.cable.link == Link("gpu03", "mlx5_1", "leaf03", "Eth1/1", "lldp") and not pfc.cable.bad
    assert faults["gpu04", "mlx5_1/1 (ens1f0np0)"].rules == ("dcqcn_rp_disabled",)
    assert faults["gpu08", "mlx5_1/1 (ens1f0np0)"].rules == ("active_mtu_below_max",)  # a warning is marked too
    assert faults["leaf02", "swp1"].cable.link.host == "gpu02"  # the switch end of the storming host's cable
    assert not any(rule in page.CABLE_RULES for f in demo.port_faults for rule in f.rules)


def test_the_demo_map_draws_exactly_the_physical_faults_red(demo: page.Page) -> None:
    found = drawn(demo)
    red = {(c["data-host"], c["data-nic"]) for c in found.cables if c["stroke"] == plots.BAD_COLOUR}
    assert red == {("gpu01", "mlx5_0"), ("gpu06", "mlx5_0"), ("gpu07", "mlx5_0")}
    assert all(c["physical"] == (c["stroke"] == plots.BAD_COLOUR) for c in found.cables)
    assert len(found.cables) == len(demo.links)
    assert {m["data-target"] for m in found.markers} >= {"gpu02", "gpu03", "gpu04", "gpu08", "leaf02"}


def _faulty_rail(fabric, name: str, injected: tuple):
    """The rail of the host a fault of tests/report/faulted.py was injected on."""
    host = fabric.host(injected[0])
    if name == "optic_flapping_host":
        return next(r for r in host.rails if r.netdev == injected[1])
    if name == "rail_down":
        return next(r for r in host.rails if r.state != "Active")
    if name == "speed_downgrade":
        return min(host.rails, key=lambda r: r.rate_gbps)
    return next(r for r in host.rails if r.netdev == injected[1])


def test_a_generated_fabric_draws_each_physical_fault_red_on_its_rail(faulted) -> None:
    shown, fabric = faulted.page, faulted.fabric
    bad = {(c.link.host, c.link.nic): c for c in shown.links if c.bad}
    expected = {name: (faulted.injected[name][0], _faulty_rail(fabric, name, faulted.injected[name]).device)
                for name in PHYSICAL}
    assert set(bad) == set(expected.values()), fabric.describe()
    assert len({nic for _, nic in bad}) >= 2  # not one rail only: the compute rails the faults fell on
    down = bad[expected["rail_down"]]
    assert down.link.switch == ""  # a link down sends no LLDP: its cable is drawn with its far end unknown
    for name in ("optic_flapping_host", "speed_downgrade"):
        assert bad[expected[name]].link.switch, name  # cabled by LLDP: drawn to its switch port
    host, entity, _ = faulted.injected[SETTING]
    rail = _faulty_rail(fabric, SETTING, faulted.injected[SETTING])
    [marked] = [f for f in shown.port_faults if f.target == host]  # the PFC priority: one port, one marker
    assert "host_pfc_not_roce_priority" in marked.rules and entity in marked.port
    assert marked.cable is not None and not marked.cable.bad
    assert (marked.cable.link.host, marked.cable.link.nic) == (host, rail.device)
    red = {(c["data-host"], c["data-nic"]) for c in drawn(shown).cables if c["stroke"] == plots.BAD_COLOUR}
    assert red == set(expected.values())


def test_a_switch_port_answers_to_its_own_name_only() -> None:
    switch = page.PortRow("leaf05", "switch", "Ethernet1/1")
    assert switch.names == {"Ethernet1/1"}  # not "Ethernet1", another port of the same switch
    host = page.PortRow("gpu01", "host", "mlx5_1/1", "ens1f0np0")
    assert host.names == {"mlx5_1/1", "mlx5_1", "ens1f0np0"}


def test_names_on_the_map_are_text_never_markup() -> None:
    cable = page.Cable(Link('gpu<script>"1', "mlx5_0\x1b[31m", ""), ("ib_link_flapping",))
    shown = page.Page(result=None, ports=[], priorities=[], rates={}, links=[cable],
                      port_faults=[page.PortFault('gpu<script>"1', "eth0 & co", ("host_trust_not_dscp",),
                                                  Severity.ERROR, cable)])
    svg = plots.topology_svg(shown)
    assert "<script" not in svg and "gpu&lt;script&gt;&quot;1" in svg and "\x1b" not in svg
    found = drawn(shown)
    assert [(c["data-host"], c["stroke"]) for c in found.cables] == [('gpu<script>"1', plots.BAD_COLOUR)]
    assert [m["data-port"] for m in found.markers] == ["eth0 & co"]
