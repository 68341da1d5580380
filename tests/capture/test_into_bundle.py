"""Where a capture lands in a bundle: names checked whole, the manifest read as every bundle reader reads it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rdmatool.capture.remote import capture_into_bundle
from rdmatool.errors import BundleError
from rdmatool.model import Target


def _never(handle):  # the capture itself: never reached when the bundle or a name is refused
    raise AssertionError("nothing may be captured into a refused place")


@pytest.mark.parametrize("interface", ["../../etc/x", "mlx5_0/1", "eth0\n", "-i", ""])
def test_an_interface_that_is_no_device_name_never_becomes_a_file(tmp_path: Path, interface: str) -> None:
    with pytest.raises(BundleError, match="refusing interface name"):
        capture_into_bundle(Target("gpu01", "10.0.0.1"), interface, tmp_path / "b", _never, lambda p: None)
    assert not (tmp_path / "b").exists()


def test_a_bundle_whose_manifest_is_of_the_wrong_shape_is_refused(tmp_path: Path) -> None:
    bundle = tmp_path / "b"
    bundle.mkdir()
    (bundle / "manifest.json").write_text(json.dumps({"format": "rdmatool-bundle/1", "snapshots": "all"}))
    with pytest.raises(BundleError, match="key snapshots"):
        capture_into_bundle(Target("gpu01", "10.0.0.1"), "mlx5_0", bundle, _never, lambda p: None)
    assert sorted(p.name for p in bundle.iterdir()) == ["manifest.json"]
