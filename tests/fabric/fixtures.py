"""Test entry points to the simulated fabric.

    from tests.fabric.fixtures import sim_fabric

    with sim_fabric("healthy") as fab:          # or "degraded", a YAML path, or a Scenario (scenario.build(128))
        fab.port, fab.client_key, fab.known_hosts, fab.inventory_path, fab.targets, fab.scenario
        fab.address("gpu01"); fab.set_fault("pfc_storm", "gpu03", nic="mlx5_1", priority=3)

or as a pytest fixture: `fabric = fabric_fixture("degraded", scope="module")` at module level.

When sshd is missing, we are not root or `unshare -m` fails, `sim_fabric` calls pytest.skip with the reason,
unless the environment variable CI is "true": then it fails loudly (CI must never skip these tests).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.fabric import scenario as scenario_mod
from tests.fabric.server import SSHD, Fabric, start


def missing_prerequisite() -> str | None:
    """Why the simulated fabric cannot run here, or None."""
    if not (os.path.exists(SSHD) and os.access(SSHD, os.X_OK)):
        return "openssh-server is not installed (no sshd)"
    if shutil.which("ssh-keygen") is None:
        return "ssh-keygen is not installed"
    if os.geteuid() != 0:
        return "the simulated fabric needs root (bind mounts in a private mount namespace)"
    try:
        probe = subprocess.run(["unshare", "-m", "true"], capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"`unshare -m` cannot run: {exc}"
    if probe.returncode != 0:
        return f"`unshare -m` fails: {probe.stderr.decode(errors='replace').strip()}"
    return None


def require_fabric() -> None:
    reason = missing_prerequisite()
    if reason is None:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"simulated fabric unavailable in CI: {reason}", pytrace=False)
    pytest.skip(f"simulated fabric unavailable: {reason}")


@contextmanager
def sim_fabric(scenario: str | Path | scenario_mod.Scenario = "healthy", workdir: Path | None = None,
               ) -> Iterator[Fabric]:
    require_fabric()
    sc = scenario if isinstance(scenario, scenario_mod.Scenario) else scenario_mod.load(scenario)
    fabric = start(sc, workdir=workdir)
    try:
        yield fabric
    finally:
        fabric.stop()


# One started fabric per named scenario for the whole test session: an sshd with its keys costs seconds to start,
# and the modules that use the same scenario only differ in the faults they inject (reset between modules).
_SHARED: dict[str, Fabric] = {}


def shared_fabric(scenario: str) -> Fabric:
    """The session's fabric of a named scenario, started on first use (stopped by `stop_shared` at the end)."""
    fabric = _SHARED.get(scenario)
    if fabric is None:
        require_fabric()
        fabric = _SHARED[scenario] = start(scenario_mod.load(scenario))
    return fabric


def stop_shared() -> None:
    while _SHARED:
        _SHARED.popitem()[1].stop()


def fabric_fixture(scenario: str = "healthy", scope: str = "module"):  # noqa: ANN201 - a pytest fixture
    """A pytest fixture yielding the session's started Fabric for a named scenario; assign it to a module-level
    name. The fabric is shared with every other module asking for the same scenario, so whatever a test injects is
    undone when the fixture's scope ends (`Fabric.reset`)."""

    def _fabric() -> Iterator[Fabric]:
        fab = shared_fabric(scenario)
        fab.reset()
        try:
            yield fab
        finally:
            fab.reset()

    _fabric.simulated_fabric = True  # tests/conftest.py marks every test that uses it `e2e` (set before wrapping)
    return pytest.fixture(scope=scope)(_fabric)
