"""A known_hosts file, a bundle, a baseline store or an output file that cannot be written (or a named known_hosts
that cannot be read) is one line naming the path and exit 2, found before any host is dialled: never a host
"unreachable (Permission denied)", never a traceback or an internal error.

A path below a regular file cannot be made by anyone, root included (`Not a directory`), so these tests see the
refusal whoever runs them; the same refusal as a service user (`Permission denied`) is tests/slurm/test_service_user.py.
The inventory's hosts listen nowhere: a run that dialled them would say so ("connection refused", exit 3).
"""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from rdmatool.cli import app
from rdmatool.transport.hostkeys import KnownHosts, KnownHostsError
from tests.pods import bundle as pods

INVENTORY = """targets:
  - {name: gpu01, address: 127.0.0.1, port: 1, kind: host, platform: linux}
  - {name: gpu02, address: 127.0.0.1, port: 1, kind: host, platform: linux}
"""


@pytest.fixture
def site(tmp_path):
    (tmp_path / "inventory.yaml").write_text(INVENTORY)
    (tmp_path / "a-file").write_text("not a folder\n")
    return tmp_path


def _run(*args: str):
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})


def _one_line_naming(result, path: str) -> str:
    assert result.exit_code == 2, (result.exit_code, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and path in lines[0], result.stderr
    assert "unreachable" not in lines[0] and "internal error" not in lines[0] and "refused" not in lines[0]
    return lines[0]


def test_known_hosts_that_cannot_take_new_keys_is_refused_before_any_host(site) -> None:
    blocked = site / "a-file" / "known_hosts"
    with pytest.raises(KnownHostsError, match=f"^{blocked}: cannot record new host keys there"):
        KnownHosts(blocked, accept_new=True)
    KnownHosts(blocked)  # only read: absent, its hosts are unknown (each is refused as such when dialled)
    for command in (["collect", "-o", str(site / "bundle"), "--interval", "0"], ["gate", "--budget", "20"],
                    ["diagnose"]):
        result = _run(*command, "-i", str(site / "inventory.yaml"), "--accept-new-host-keys",
                      "--known-hosts", str(blocked))
        line = _one_line_naming(result, str(blocked))
        assert "cannot record new host keys there (Not a directory)" in line
    assert not (site / "bundle").exists()


def test_a_named_known_hosts_that_is_not_a_readable_file_is_refused(site) -> None:
    with pytest.raises(KnownHostsError, match="not a known_hosts file"):
        KnownHosts(site)
    result = _run("gate", "-i", str(site / "inventory.yaml"), "--budget", "20", "--known-hosts", str(site))
    _one_line_naming(result, str(site))


@pytest.mark.parametrize("option", ["--save", "--drain-file", "--junit"])
def test_gate_outputs_that_cannot_be_written(site, option: str) -> None:
    blocked = str(site / "a-file" / "out")
    result = _run("gate", "-i", str(site / "inventory.yaml"), "--budget", "20", option, blocked)
    assert "cannot write" in _one_line_naming(result, blocked)


def test_a_bundle_or_store_that_cannot_be_written(site) -> None:
    blocked = str(site / "a-file" / "bundle")
    result = _run("collect", "-i", str(site / "inventory.yaml"), "-o", blocked, "--interval", "0")
    assert "cannot write (Not a directory)" in _one_line_naming(result, blocked)
    pods.write(pods.healthy_pod(gpus=1), site / "bundle")
    store = str(site / "a-file" / "store")
    result = _run("baseline", "save", str(site / "bundle"), "--store", store)
    _one_line_naming(result, store)
