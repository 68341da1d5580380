"""The expected-topology file: loading, refusals with FILE:LINE, and its diff against the cabling seen."""

from __future__ import annotations

import pytest

from rdmatool.topology import Link
from rdmatool.topology.expected import TopologyError, diff, load

GOOD = """\
rails:
  - {nic: mlx5_0, switch: leaf-r0}
  - {nic: mlx5_1, switch: leaf-r1, hosts: "gpu[01-02],gpu04"}
links:
  - {host: gpu01, nic: mlx5_0, switch: leaf-r0, port: Ethernet0}
"""


def write(tmp_path, text: str):
    path = tmp_path / "topology.yaml"
    path.write_text(text)
    return path


def test_rails_and_links_load(tmp_path) -> None:
    topo = load(write(tmp_path, GOOD))
    assert topo.expected("gpu01", "mlx5_0") == ("leaf-r0", "Ethernet0")  # the link entry wins over the rail
    assert topo.expected("gpu02", "mlx5_0") == ("leaf-r0", "")
    assert topo.expected("gpu04", "mlx5_1") == ("leaf-r1", "")
    assert topo.expected("gpu03", "mlx5_1") is None  # the rail lists its hosts
    assert topo.links[0].source == "topology-file"


def test_diff_names_missing_link_wrong_port_and_wrong_switch(tmp_path) -> None:
    topo = load(write(tmp_path, GOOD))
    seen = [Link("gpu01", "mlx5_0", "leaf-r0", "Ethernet4"),  # wrong port
            Link("gpu01", "mlx5_1", "leaf-r1", "Ethernet0"),
            Link("gpu02", "mlx5_0", "leaf-r1", "Ethernet8")]  # wrong switch; gpu02 mlx5_1 unseen
    found = {(d.kind, d.host, d.nic): d for d in diff(topo, seen, ["gpu01", "gpu02"])}
    assert set(found) == {("wrong_port", "gpu01", "mlx5_0"), ("wrong_switch", "gpu02", "mlx5_0"),
                          ("missing_link", "gpu02", "mlx5_1")}
    assert found[("wrong_port", "gpu01", "mlx5_0")].observed_port == "Ethernet4"
    assert found[("wrong_switch", "gpu02", "mlx5_0")].expected_switch == "leaf-r0"


def test_diff_is_silent_on_matching_cabling_and_unseen_hosts(tmp_path) -> None:
    topo = load(write(tmp_path, GOOD))
    seen = [Link("gpu01", "mlx5_0", "leaf-r0", "Ethernet0"), Link("gpu01", "mlx5_1", "leaf-r1", "Ethernet0")]
    assert diff(topo, seen, ["gpu01"]) == []


@pytest.mark.parametrize("text, line, words", [
    ("rails: [{nic: mlx5_0}]\n", 1, "`switch` must be a name"),
    ("links:\n  - {host: gpu01, nic: mlx5_0, switch: leaf, port: E0}\n  - {host: gpu01, nic: mlx5_0, switch: x}\n",
     3, "already cabled at line 2"),
    ("links:\n  - {host: gpu01, nic: mlx5_0, switch: leaf, prot: E0}\n", 2, "not 'prot'"),
    ("rails:\n  - {nic: mlx5_0, switch: leaf, hosts: 'gpu[1-'}\n", 2, "`hosts`"),
    ("spines: []\n", 1, "unknown key 'spines'"),
    ("- a\n- b\n", 1, "is a mapping"),
    ("rails: {nic: a}\n", 1, "is a list of mappings"),
    ("rails: [\n", 2, "invalid YAML"),
    ("{}\n", 1, "nothing to compare"),
])
def test_bad_file_is_one_line_with_file_and_line(tmp_path, text, line, words) -> None:
    path = write(tmp_path, text)
    with pytest.raises(TopologyError) as caught:
        load(path)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{path}:{line}:"), message
    assert words in message


def test_missing_file_names_it(tmp_path) -> None:
    with pytest.raises(TopologyError, match="no such file"):
        load(tmp_path / "absent.yaml")
