"""The HTML report in a real browser: Debian's headless Chromium loads the file the CLI wrote, and the DevTools
protocol says what it fetched, what it logged and what it shows.

The observers are proven first: a control page with a deliberate request to a local HTTP server and a deliberate
console error must be caught, and a URL slipped into the report must be seen (refused by its policy, said on the
console), so "no request, no console error" on the report is a finding, not an assumption.
"""

from __future__ import annotations

import http.server
import io
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.helpers import rdmatool
from tests.helpers import REPO
from tests.report.browser import Chrome, browser

DEMO = REPO / "examples" / "demo-bundle"
BASELINE = REPO / "baselines" / "demo-healthy.json"


class _Recorder(http.server.BaseHTTPRequestHandler):
    hits: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - the name http.server calls
        type(self).hits.append(self.path)
        self.send_response(404)
        self.end_headers()

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def server() -> Iterator[tuple[str, list[str]]]:
    """A local HTTP server that records every path asked of it."""
    handler = type("Recorder", (_Recorder,), {"hits": []})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", handler.hits
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture(scope="module")
def chrome() -> Iterator[Chrome]:
    with browser() as started:
        yield started


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    """The demo's report, written by the real command line."""
    out = tmp_path_factory.mktemp("report") / "report.html"
    result = rdmatool("report", str(DEMO), "--baseline", str(BASELINE), "-o", str(out))
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 1, result.stderr  # the demo fails: critical findings
    assert out.is_file()
    return out


def test_the_observers_catch_a_request_and_a_console_error(chrome: Chrome, server, tmp_path: Path) -> None:
    base, hits = server
    control = tmp_path / "control.html"
    control.write_text(f'<!DOCTYPE html><html><body><p>control page</p><img src="{base}/deliberate.png">'
                       '<script>console.error("deliberate console error")</script></body></html>')
    seen = chrome.load(control)
    assert f"{base}/deliberate.png" in seen.requests
    assert "/deliberate.png" in hits
    assert any("deliberate console error" in line for line in seen.console)
    assert "control page" in seen.text


def test_the_report_loads_offline_and_shows_the_verdict_and_the_findings(chrome: Chrome, report: Path,
                                                                         server) -> None:
    _, hits = server
    seen = chrome.load(report)
    assert seen.requests == [] and hits == []
    assert seen.console == []
    assert "verdict: FAIL" in seen.text
    for symptom in ("PFC storm: ens1f0np0 on gpu02", "RDMA port mlx5_0/1 on gpu06 is not Active",
                    "mlx5_0/1 on gpu07 runs at 1 lane(s) instead of 4"):
        assert symptom in seen.text
    assert "gpu02 mlx5_1 ↔ leaf02 swp1" in seen.text  # the bad cable, under its map
    images = chrome.evaluate("Array.from(document.images).map(i => [i.complete, i.naturalWidth])")
    assert len(images) >= 4 and all(done and width > 100 for done, width in images)  # every plot decoded
    from matplotlib.image import imread

    shot = imread(io.BytesIO(seen.screenshot), format="png")
    assert shot.shape[0] > 2000 and shot.shape[1] >= 1200  # the whole page, taller than one screen
    assert shot[:, :, :3].std() > 0.05  # not a blank page


def test_a_url_slipped_into_the_report_would_be_seen(chrome: Chrome, report: Path, server, tmp_path: Path) -> None:
    base, hits = server
    leaky = tmp_path / "leaky.html"
    leaky.write_text(report.read_text().replace("<footer", f'<img src="{base}/leak.png"><footer', 1))
    seen = chrome.load(leaky)
    assert hits == []  # the report's policy refuses it ...
    assert any("leak.png" in line or "Content Security Policy" in line for line in seen.console)  # ... and says so


def test_the_fleet_table_sorts_in_the_browser(chrome: Chrome, report: Path) -> None:
    chrome.load(report, full_page=False)
    column = chrome.evaluate("Array.from(document.querySelectorAll('#fleet-table th'))"
                             ".findIndex(th => th.textContent === 'pause fraction')")
    assert column > 0

    def click_and_read():
        return chrome.evaluate(
            f"document.querySelectorAll('#fleet-table th')[{column}].click();"
            f"Array.from(document.querySelectorAll('#fleet-table tbody tr'))"
            f".map(r => [r.cells[0].textContent, r.cells[{column}].dataset.sort])")

    ascending = click_and_read()
    numbers = [float(key) for _, key in ascending if key]
    assert numbers == sorted(numbers) and len(numbers) > 10
    assert all(key == "" for _, key in ascending[len(numbers):])  # ports without the figure last
    descending = click_and_read()
    assert descending[0][0] == "gpu02"  # the storm first
    assert [float(key) for _, key in descending if key] == sorted(numbers, reverse=True)
