"""The samples store is sealed with a keyed MAC whose key stays with the user (rdmatool.table.store_mac): a store of valid
structure whose values were changed, or one written under another key, is not trusted and the raw outputs are
parsed instead; the store this user's rdmatool wrote is used as before."""

from __future__ import annotations

import io
import os
import stat
import zipfile
from pathlib import Path

import numpy as np
import pytest

from rdmatool.bundle import BundleWriter
from rdmatool.model import CommandResult, Target
from rdmatool.table import samples_store, store_mac

HOSTS = ("gpu01", "gpu02")


@pytest.fixture(autouse=True)
def own_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    key = tmp_path / "state" / "store.key"
    monkeypatch.setenv(store_mac.ENV_KEY_FILE, str(key))
    store_mac._key_at.cache_clear()
    yield key
    store_mac._key_at.cache_clear()


def _bundle(path: Path) -> Path:
    writer = BundleWriter(path)
    for i, host in enumerate(HOSTS, start=1):
        text = f"NIC statistics:\n     rx_packets: {1000 * i}\n     rx_prio3_pause: {7 * i}\n"
        writer.add(0, CommandResult(target=host, parser="ethtool_stats", command="ethtool -S eth0", stdout=text,
                                    qualifier="eth0", started="2024-05-01T02:00:00+00:00"))
    return writer.commit([Target(name=h, address=f"10.0.0.{i}") for i, h in enumerate(HOSTS, start=1)],
                         [{"index": 0}], [], 10.0, before_commit=samples_store.write_for)


def _members(store: Path) -> dict[str, np.ndarray]:
    with zipfile.ZipFile(store) as archive:
        return {name[:-4]: np.lib.format.read_array(archive.open(name), allow_pickle=False)
                for name in archive.namelist()}


def _rewrite(store: Path, members: dict[str, np.ndarray], comment: bytes) -> None:
    """The store as an attacker rebuilds it: the same members, valid structure, the comment of their choosing."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, array in members.items():
            with archive.open(f"{name}.npy", "w", force_zip64=True) as stream:
                np.lib.format.write_array(stream, array, allow_pickle=False)
        archive.comment = comment
    store.write_bytes(buffer.getvalue())


def _values(path: Path) -> list[float]:
    return sorted(samples_store.load_or_parse(path, write_store=False).arrays["value"].tolist())


def test_the_store_written_is_sealed_and_used(tmp_path: Path, own_key: Path) -> None:
    path = _bundle(tmp_path / "b")
    data = (path / samples_store.STORE_NAME).read_bytes()
    assert data.endswith(store_mac.SEAL_PREFIX + data[-64:]) and data[-64:] != b"0" * 64
    assert store_mac.verifies(data)
    assert samples_store.load(path) is not None
    assert stat.S_IMODE(os.stat(own_key).st_mode) == 0o600 and len(own_key.read_bytes()) == store_mac.KEY_BYTES


@pytest.mark.parametrize("comment", ["genuine", "blank", "none"])
def test_changed_values_of_valid_structure_are_parsed_again(tmp_path: Path, comment: str) -> None:
    path = _bundle(tmp_path / "b")
    store = path / samples_store.STORE_NAME
    honest = _values(path)
    assert 1000.0 in honest and 2000.0 in honest
    genuine = store.read_bytes()[-store_mac.SEAL_BYTES:]
    members = _members(store)
    members["value"] = members["value"] * 3  # every reading tripled; the exact column follows, structure intact
    members["exact"] = np.where(members["is_int"], members["value"].astype(np.uint64), 0).astype(np.uint64)
    seal = {"genuine": genuine, "blank": store_mac.BLANK_SEAL, "none": b""}[comment]
    _rewrite(store, members, seal)
    assert samples_store.load(path) is None
    assert _values(path) == honest
    # ...and the same doctored store carrying a MAC of this user's key would be trusted: what the seal decides
    _rewrite(store, members, store_mac.BLANK_SEAL)
    data = bytearray(store.read_bytes())
    assert store_mac.seal(memoryview(data))
    store.write_bytes(bytes(data))
    assert samples_store.load(path) is not None and _values(path) == sorted(v * 3 for v in honest)


def test_a_store_sealed_under_another_key_is_parsed_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _bundle(tmp_path / "b")
    assert samples_store.load(path) is not None
    monkeypatch.setenv(store_mac.ENV_KEY_FILE, str(tmp_path / "colleague" / "store.key"))
    assert samples_store.load(path) is None
    assert len(_values(path)) > 0


def test_without_a_usable_key_nothing_is_trusted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    short = tmp_path / "short.key"
    short.write_bytes(b"too short")
    monkeypatch.setenv(store_mac.ENV_KEY_FILE, str(short))
    path = _bundle(tmp_path / "b")
    assert samples_store.load(path) is None  # written unsealed, never trusted
    assert 1000.0 in _values(path)
