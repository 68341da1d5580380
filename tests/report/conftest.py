"""Fixtures shared by the report's tests: the generated fabric with several faults (tests/report/faulted.py),
written, diagnosed and gathered as a report page once per session (the page and the browser tests both read it)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest


@pytest.fixture(scope="session")
def faulted(tmp_path_factory) -> SimpleNamespace:
    """fabric, injected (fault name -> (host, entity, rules)), bundle, page: its report page (site profile applied)."""
    from rdmatool.report import page
    from tests.report.faulted import faulted_fabric

    fabric, injected, bundle = faulted_fabric(tmp_path_factory.mktemp("faulted"))
    return SimpleNamespace(fabric=fabric, injected=injected, bundle=bundle,
                           page=page.build(bundle, profile=fabric.site.config()))


@pytest.fixture(scope="session")
def demo_page():
    """The demo bundle's report page, without a baseline."""
    from rdmatool.report import page
    from tests.helpers import REPO

    return page.build(REPO / "examples" / "demo-bundle")
