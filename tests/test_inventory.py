"""Inventory loading: hostlists, group/default inheritance, ~/.ssh/config, Ansible forms, validation, selection."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from rdmatool import inventory
from rdmatool.errors import InventoryError
from rdmatool.model import Platform, TargetKind
from rdmatool.present import hostlist

NATIVE = """\
defaults: {user: root, port: 22, identity_file: ~/.ssh/id_ed25519}
groups:
  gpu:  {kind: host, platform: linux, role: compute}
  stor: {kind: host, platform: linux, role: storage}
  leaf: {kind: switch, platform: sonic}
targets:
  - {name: "gpu[001-064]", address: "10.0.0.[1-64]", group: gpu}
  - {name: "st[01-04,07]", group: stor}
  - {name: leaf01, address: 10.0.1.1, group: leaf, user: admin}
"""


def _write(tmp_path: Path, text: str, name: str = "inv.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("gpu[001-003]", ["gpu001", "gpu002", "gpu003"]),
        ("gpu[01-02,07]", ["gpu01", "gpu02", "gpu07"]),
        ("10.0.0.[8-10]", ["10.0.0.8", "10.0.0.9", "10.0.0.10"]),
        ("r[1-2]n[1-2]", ["r1n1", "r1n2", "r2n1", "r2n2"]),
        ("plain", ["plain"]),
    ],
)
def test_hostlist_expansion(pattern: str, expected: list[str]) -> None:
    assert hostlist.expand(pattern) == expected


@pytest.mark.parametrize("bad", ["gpu[3-1]", "gpu[1-x]", "gpu[1-2", "gpu[1-999999]x[1-999]"])
def test_hostlist_rejects_nonsense(bad: str) -> None:
    with pytest.raises(ValueError):
        hostlist.expand(bad)


def test_native_inventory_resolves_ranges_groups_and_defaults(tmp_path: Path) -> None:
    targets = inventory.load(_write(tmp_path, NATIVE), ssh_config=None)
    assert len(targets) == 64 + 5 + 1
    first = targets[0]
    assert (first.name, first.address, first.role, first.user, first.port) == ("gpu001", "10.0.0.1", "compute", "root", 22)
    assert first.identity_file.endswith("/.ssh/id_ed25519") and "~" not in first.identity_file
    assert targets[63].address == "10.0.0.64"
    st07 = next(t for t in targets if t.name == "st07")
    assert st07.address == "st07" and st07.role == "storage"  # address defaults to the name
    leaf = targets[-1]
    assert leaf.kind is TargetKind.SWITCH and leaf.platform is Platform.SONIC and leaf.user == "admin"


def test_range_counts_must_match(tmp_path: Path) -> None:
    path = _write(tmp_path, NATIVE.replace('"10.0.0.[1-64]"', '"10.0.0.[1-63]"'))
    with pytest.raises(InventoryError) as caught:
        inventory.load(path, ssh_config=None)
    message = str(caught.value)
    assert message.startswith(f"{path}:7: ") and "64" in message and "63" in message


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (("group: gpu}", "group: gpux}"), "unknown group 'gpux'"),
        (("platform: sonic", "platform: junos"), "unknown platform 'junos'"),
        (('{name: leaf01,', '{name: "leaf01;reboot",'), "invalid target name"),
        (("user: admin}", "user: admin, password: hunter2}"), "passwords do not belong in an inventory"),
        (("port: 22,", "port: 70000,"), "invalid port"),
        (("user: admin}", "user: admin, colour: blue}"), "unknown key(s) ['colour']"),
    ],
)
def test_bad_inventory_gives_one_line_naming_file_and_line(tmp_path: Path, change, expected: str) -> None:
    path = _write(tmp_path, NATIVE.replace(*change))
    with pytest.raises(InventoryError) as caught:
        inventory.load(path, ssh_config=None)
    assert expected in str(caught.value)
    assert str(caught.value).startswith(str(path))
    assert "\n" not in str(caught.value)
    assert "hunter2" not in str(caught.value)


def test_duplicate_target_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path, NATIVE + '  - {name: gpu001, group: gpu}\n')
    with pytest.raises(InventoryError, match="defined twice"):
        inventory.load(path, ssh_config=None)


def test_ssh_config_applies_and_inventory_wins(tmp_path: Path) -> None:
    config = _write(tmp_path, """\
Host gpu*
    HostName %h.fabric.example
    User svc
    Port 2222
    IdentityFile /keys/fabric
    ProxyJump bastion.example
Host leaf01
    User ignored
""", "ssh_config")
    text = """\
targets:
  - {name: "gpu[1-2]"}
  - {name: leaf01, address: 10.0.1.1, platform: sonic, user: admin}
"""
    targets = inventory.load(_write(tmp_path, text), ssh_config=config)
    gpu1 = targets[0]
    assert gpu1.address == "gpu1.fabric.example"
    assert (gpu1.user, gpu1.port, gpu1.identity_file, gpu1.proxy_jump) == ("svc", 2222, "/keys/fabric", "bastion.example")
    leaf = targets[2]
    assert leaf.user == "admin" and leaf.address == "10.0.1.1"


def test_ansible_yaml_inventory(tmp_path: Path) -> None:
    text = """\
all:
  vars: {ansible_user: root}
  children:
    gpu:
      vars: {rdmatool_role: compute}
      hosts:
        gpu01: {ansible_host: 10.0.0.1, ansible_port: 2200}
        gpu02: {ansible_host: 10.0.0.2, ansible_ssh_private_key_file: /keys/k}
    leaf:
      hosts:
        leaf01: {ansible_host: 10.0.1.1, ansible_network_os: arista.eos.eos, ansible_user: admin,
                 ansible_password: "{{ vault_secret }}"}
"""
    targets = {t.name: t for t in inventory.load(_write(tmp_path, text), ssh_config=None)}
    assert targets["gpu01"].address == "10.0.0.1" and targets["gpu01"].port == 2200
    assert targets["gpu01"].role == "compute" and targets["gpu01"].user == "root"
    assert targets["gpu02"].identity_file == "/keys/k"
    leaf = targets["leaf01"]
    assert leaf.platform is Platform.EOS and leaf.kind is TargetKind.SWITCH and leaf.user == "admin"
    assert "vault" not in repr(leaf) and "vault" not in str(leaf.public())


def test_ansible_ini_inventory_with_children_and_vars(tmp_path: Path) -> None:
    text = """\
[gpu]
gpu01 ansible_host=10.0.0.1
gpu02 ansible_host=10.0.0.2 ansible_user=other

[leaf]
leaf01 ansible_host=10.0.1.1 ansible_network_os=nxos

[fabric:children]
gpu
leaf

[fabric:vars]
ansible_user=root
ansible_port=2222
"""
    targets = {t.name: t for t in inventory.load(_write(tmp_path, text, "hosts.ini"), ssh_config=None)}
    assert targets["gpu01"].user == "root" and targets["gpu01"].port == 2222
    assert targets["gpu02"].user == "other"
    assert targets["leaf01"].platform is Platform.NXOS
    assert set(targets["gpu01"].groups) == {"fabric", "gpu"}


def test_limit_accepts_names_globs_hostlists_and_groups(tmp_path: Path) -> None:
    targets = inventory.load(_write(tmp_path, NATIVE), ssh_config=None)
    names = [t.name for t in inventory.select(targets, "gpu00[1-2],gpu010,leaf*,stor")]
    assert names == ["gpu001", "gpu002", "gpu010", "st01", "st02", "st03", "st04", "st07", "leaf01"]


def test_shards_partition_the_targets(tmp_path: Path) -> None:
    targets = inventory.load(_write(tmp_path, NATIVE), ssh_config=None)
    shards = [inventory.select(targets, shard=f"{k}/4") for k in range(1, 5)]
    names = [t.name for shard in shards for t in shard]
    assert sorted(names) == sorted(t.name for t in targets) and len(names) == len(set(names))
    assert max(map(len, shards)) - min(map(len, shards)) <= 1
    with pytest.raises(InventoryError):
        inventory.select(targets, shard="5/4")


def test_public_view_has_no_secret(tmp_path: Path) -> None:
    text = NATIVE.replace("user: admin}", "user: admin, password_env: LEAF_PW}")
    leaf = inventory.load(_write(tmp_path, text), ssh_config=None)[-1]
    assert leaf.password_env == "LEAF_PW"
    assert "LEAF_PW" not in repr(leaf) and "password" not in str(leaf.public())


def test_paramiko_comes_without_invoke_until_an_ssh_config_matches_by_exec(tmp_path: Path) -> None:
    # invoke (~50-85 ms of start-up CPU) is what paramiko runs `Match exec` with, and nothing else: loaded for a
    # config that has one, never otherwise. A fresh interpreter, so that no other test imported it first.
    config = _write(tmp_path, """\
Match host gpu1 exec "true"
    HostName matched.example
MATCH host gpu2 exec "false"
    HostName never.example
""", "ssh_config")
    plain = _write(tmp_path, "Host gpu*\n    User svc\n", "plain_config")
    inv = _write(tmp_path, 'targets:\n  - {name: "gpu[1-2]"}\n')
    code = f"""
import sys
from rdmatool import inventory
before = 'invoke' in sys.modules
plain = [t.user for t in inventory.load({str(inv)!r}, ssh_config={str(plain)!r})]
after_plain = 'invoke' in sys.modules
matched = [t.address for t in inventory.load({str(inv)!r}, ssh_config={str(config)!r})]
print(before, plain, after_plain, matched, 'invoke' in sys.modules)
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split(" ", 5)[:3] == ["False", "['svc',", "'svc']"]
    assert done.stdout.strip().endswith("False ['matched.example', 'gpu2'] True"), done.stdout
