"""Fuzzing the readers of operator files: YAML and INI inventories, hostlist patterns, known_hosts content.

Whatever the input, a reader returns or raises the project's own error (InventoryError, ValueError for a bare
hostlist); never another exception, never a hang (each example is timed) and never a memory blow-up (the peak RSS
of the process may not grow by more than MAX_RSS_GROWTH_MB over a test).
"""

from __future__ import annotations

import contextlib
import resource
import time
from pathlib import Path

import paramiko
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rdmatool import inventory
from rdmatool.errors import InventoryError
from rdmatool.model import Target
from rdmatool.present import hostlist
from rdmatool.transport import hostkeys

pytestmark = pytest.mark.slow

MAX_RSS_GROWTH_MB = 300
MAX_SECONDS_PER_EXAMPLE = 5.0
FUZZ = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                         HealthCheck.function_scoped_fixture])


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kB on Linux


@pytest.fixture(autouse=True)
def _bounded_memory():
    before = _peak_rss_mb()
    yield
    grown = _peak_rss_mb() - before
    assert grown < MAX_RSS_GROWTH_MB, f"peak RSS grew by {grown:.0f} MB"


@pytest.fixture(autouse=True)
def _no_machine_files(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(hostkeys, "SYSTEM_KNOWN_HOSTS", str(tmp_path / "absent-system"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


class _Timed:
    def __enter__(self):
        self.started = time.monotonic()
        return self

    def __exit__(self, *exc) -> None:
        elapsed = time.monotonic() - self.started
        assert elapsed < MAX_SECONDS_PER_EXAMPLE, f"took {elapsed:.1f} s"


# --- strategies ------------------------------------------------------------------------------------------------

NAMES = st.sampled_from(["gpu01", "gpu[01-04]", "gpu[1-1000000000]", "leaf01", "10.0.0.[1-4]", "a[1-9]b[1-9]",
                         "x[5-1]", "y[", "", "gpu01\n", "host name", "[1-2]", "n[001-100]", "ü"])
KEYS = st.sampled_from(["targets", "groups", "defaults", "all", "hosts", "children", "vars", "name", "address",
                        "group", "kind", "platform", "role", "user", "port", "identity_file", "proxy_jump", "ports",
                        "password_env", "password", "ansible_host", "ansible_user", "ansible_port",
                        "ansible_network_os", "rdmatool_role", "rdmatool_ports", "gpu", "leaf", "colour"])
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=True),
                    st.text(max_size=20), NAMES, st.sampled_from(["host", "switch", "sonic", "linux", "eos", "22"]))


def _plain(children):
    return st.one_of(st.lists(children, max_size=5),
                     st.dictionaries(st.one_of(KEYS, st.integers(0, 3), st.none()), children, max_size=5))


DOCS = st.recursive(SCALARS, _plain, max_leaves=40)

INI_LINES = st.one_of(
    st.builds(lambda g, s: f"[{g}{s}]", st.sampled_from(["gpu", "leaf", "all", "a", "b", "c", "x:y", ""]),
              st.sampled_from(["", ":children", ":vars", ":other"])),
    st.builds(lambda h, kv: " ".join([h, *kv]), NAMES,
              st.lists(st.sampled_from(["ansible_host=10.0.0.1", "ansible_user=root", "ansible_port=x",
                                        "ansible_network_os=eos", "junk", "rdmatool_role=compute", "=",
                                        "ansible_password=s"]), max_size=3)),
    st.sampled_from(["a", "b", "c", "gpu", "leaf", "# comment", ";", "", "key=value", "ansible_user=admin"]),
    st.text(max_size=15),
)

HOSTLISTS = st.one_of(
    st.text(alphabet="gpu0123456789[]-,. ", max_size=40),
    st.builds(lambda parts: "".join(parts), st.lists(st.one_of(
        st.sampled_from(["gpu", "n", ".", "-", "x"]),
        st.builds(lambda lo, hi, pad: f"[{str(lo).zfill(pad)}-{hi}]", st.integers(0, 10**20),
                  st.integers(0, 10**20), st.integers(0, 25)),
        st.builds(lambda items: "[" + ",".join(map(str, items)) + "]", st.lists(st.integers(0, 10**6), max_size=6)),
    ), max_size=8)),
)


def _key_lines():
    key = paramiko.ECDSAKey.generate()
    real = f"{key.get_name()} {key.get_base64()}"
    return st.one_of(
        st.builds(lambda m, h, k: " ".join(x for x in (m, h, k) if x),
                  st.sampled_from(["", "@revoked", "@cert-authority", "@other", "#"]),
                  st.sampled_from(["h1", "h1,h2", "[h1]:2222", "*", "!h1", "|1|abc|def", "|1|", "",
                                   paramiko.HostKeys.hash_host("h1")]),
                  st.sampled_from([real, "ssh-ed25519 AAAA", "ssh-rsa !!!", "ssh-ed25519", "x y z", ""])),
        st.text(max_size=30),
    )


KNOWN_HOSTS_LINES = _key_lines()


# --- tests -----------------------------------------------------------------------------------------------------


def _load_inventory(path: Path, content: bytes | str) -> None:
    if isinstance(content, str):
        path.write_text(content, encoding="utf-8", errors="surrogatepass")
    else:
        path.write_bytes(content)
    with _Timed():
        try:
            targets = inventory.load(path, ssh_config=None)
        except InventoryError as exc:
            assert "\n" not in str(exc) and str(exc).startswith(str(path))
            return
    assert targets and all(isinstance(t, Target) for t in targets)
    assert len(targets) <= 100_000


@FUZZ
@given(doc=DOCS)
def test_structured_yaml_inventories(tmp_path: Path, doc) -> None:
    wrapped = doc if isinstance(doc, dict) and ("targets" in doc or "all" in doc) else {"targets": doc}
    for candidate in (doc, wrapped):
        try:
            text = yaml.safe_dump(candidate, allow_unicode=True)
        except yaml.YAMLError:
            continue
        _load_inventory(tmp_path / "inv.yaml", text)


@FUZZ
@given(text=st.text(alphabet=st.sampled_from(list("targets:-{}[]&*!|>,'\"\n #name:address gpu01[1-9]all:hosts")),
                    max_size=200))
def test_raw_yaml_like_text(tmp_path: Path, text: str) -> None:
    _load_inventory(tmp_path / "inv.yaml", text)


@FUZZ
@given(lines=st.lists(INI_LINES, max_size=25))
def test_ini_inventories(tmp_path: Path, lines: list[str]) -> None:
    _load_inventory(tmp_path / "hosts.ini", "\n".join(["[gpu]", *lines]) + "\n")


@FUZZ
@given(data=st.binary(max_size=300))
def test_binary_inventories(tmp_path: Path, data: bytes) -> None:
    _load_inventory(tmp_path / "inv", data)


@FUZZ
@given(pattern=HOSTLISTS)
def test_hostlist_patterns(pattern: str) -> None:
    with _Timed():
        try:
            names = hostlist.expand(pattern)
        except ValueError as exc:
            assert "\n" not in str(exc) and len(str(exc)) < 600
            return
    assert 1 <= len(names) <= 100_000 and hostlist.count(pattern) == len(names)


@FUZZ
@given(lines=st.lists(KNOWN_HOSTS_LINES, max_size=12), junk=st.binary(max_size=64))
def test_known_hosts_content(tmp_path: Path, lines: list[str], junk: bytes) -> None:
    path = tmp_path / "known_hosts"
    path.write_bytes("\n".join(lines).encode("utf-8", "surrogatepass") + b"\n" + junk)
    key = paramiko.ECDSAKey.generate()
    with _Timed():
        known = hostkeys.KnownHosts(path)
        for name in ("h1", "h2", "[h1]:2222"):
            assert isinstance(known.lookup(name), dict)
            with contextlib.suppress(hostkeys.HostKeyUnknown, hostkeys.HostKeyChanged):
                known.check(name.strip("[]").split("]")[0], 2222 if ":" in name else 22, key)
        known.disabled_key_algorithms("h1", 22)
