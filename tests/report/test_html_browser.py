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
from tests.report.contrast import AA, ratio

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
    assert "gpu01 mlx5_0 ↔ far end not seen" in seen.text  # the flapping cable, under its map
    images = chrome.evaluate("Array.from(document.images).map(i => [i.complete, i.naturalWidth])")
    assert len(images) >= 3 and all(done and width > 100 for done, width in images)  # every plot decoded
    assert chrome.evaluate("document.querySelector('svg.topology').getBoundingClientRect().height") > 200
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
                             ".findIndex(th => th.textContent === 'pause % of time')")
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


RED = "rgb(214, 39, 40)"  # rdmatool.report.plots.BAD_COLOUR as the browser computes it

_CABLES = """Array.from(document.querySelectorAll('#topology svg g.cable')).map(g => {
  const shape = g.querySelector('line, path');
  return [g.dataset.host, g.dataset.nic, g.dataset.switch, getComputedStyle(shape).stroke,
          g.querySelector('title').textContent, shape.tagName === 'line' ? [shape.x1.baseVal.value,
          shape.y1.baseVal.value, shape.x2.baseVal.value, shape.y2.baseVal.value] : null];
})"""
_MARKERS = """Array.from(document.querySelectorAll('#topology svg g.port-fault')).map(g => {
  const box = g.getBBox();
  return [g.dataset.target, g.querySelector('title').textContent, box.x + box.width / 2, box.y + box.height / 2];
})"""


def test_the_map_draws_physical_faults_red_and_settings_on_their_ports(chrome: Chrome, report: Path) -> None:
    chrome.load(report, full_page=False)
    cables = chrome.evaluate(_CABLES)
    red = {(host, nic): title for host, nic, _, stroke, title, _ in cables if stroke == RED}
    # the compute rail's flapping, down and 1X cables (their far ends unseen: no LLDP, no subnet view of that rail)
    assert set(red) == {("gpu01", "mlx5_0"), ("gpu06", "mlx5_0"), ("gpu07", "mlx5_0")}
    assert "ib_link_flapping" in red["gpu01", "mlx5_0"] and "port_width_degraded" in red["gpu07", "mlx5_0"]
    pfc = next(c for c in cables if c[:3] == ["gpu03", "mlx5_1", "leaf03"])  # PFC on the wrong priority: a setting
    assert pfc[3] != RED
    markers = {target: (title, x, y) for target, title, x, y in chrome.evaluate(_MARKERS)}
    title, x, y = markers["gpu03"]
    assert "host_pfc_not_roce_priority" in title
    x1, y1, x2, y2 = pfc[5]  # (x1, y1) the host end: the marker sits on the cable, nearer that end
    assert abs((x2 - x1) * (y - y1) - (y2 - y1) * (x - x1)) / max(abs(y2 - y1), 1) < 2
    assert abs(y - y1) < abs(y - y2)
    listed = chrome.evaluate("document.getElementById('bad-cables').innerText")
    assert "gpu03" not in listed and "gpu04" not in listed and "gpu07 mlx5_0" in listed
    ports = chrome.evaluate("document.getElementById('port-faults').innerText")
    assert "gpu03 mlx5_1/1 (ens1f0np0): host_pfc_not_roce_priority" in ports
    assert "gpu04 mlx5_1/1 (ens1f0np0): dcqcn_rp_disabled" in ports


# Every element holding text: its text colour (an SVG text's fill), and the background it is drawn on (the nearest
# ancestor's that is not transparent, else the page's white).
_TEXT_COLOURS = """(() => {
  const background = el => {
    for (let e = el; e; e = e.parentElement) {
      const colour = getComputedStyle(e).backgroundColor;
      if (colour && colour !== 'rgba(0, 0, 0, 0)' && colour !== 'transparent') return colour;
    }
    return 'rgb(255, 255, 255)';
  };
  const out = [], seen = new Set(), walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const el = walker.currentNode.parentElement, text = walker.currentNode.textContent.trim();
    if (!text || !el || seen.has(el) || el.closest('title, script, style')) continue;
    const style = getComputedStyle(el);
    if (style.display === 'none' || style.visibility === 'hidden') continue;
    seen.add(el);
    out.push([el.closest('pre.oncall') ? 'oncall' : 'page', text.slice(0, 50),
              el instanceof SVGElement ? style.fill : style.color, background(el)]);
  }
  return out;
})()"""


def _poor(texts: list) -> list:
    return [(where, text, colour, background, round(ratio(colour, background), 2))
            for where, text, colour, background in texts if ratio(colour, background) < AA]


def test_every_text_on_the_page_meets_wcag_aa_in_the_browser(chrome: Chrome, report: Path, tmp_path: Path) -> None:
    control = tmp_path / "control.html"  # the walk is proven first: it must catch dark red on black, pale SVG text
    control.write_text('<!DOCTYPE html><html><body><p>fine</p><pre class="oncall" style="background:#0d1117">'
                       '<span style="color:#800000">dark red</span></pre><svg><text y="20" fill="#cccccc">pale'
                       "</text><title>a tooltip is not drawn</title></svg></body></html>")
    chrome.load(control, full_page=False)
    assert [(where, text) for where, text, *_ in _poor(chrome.evaluate(_TEXT_COLOURS))] == [
        ("oncall", "dark red"), ("page", "pale")]
    chrome.load(report, full_page=False)
    texts = chrome.evaluate(_TEXT_COLOURS)
    pane = [t for t in texts if t[0] == "oncall"]
    assert len(pane) > 50 and {background for *_, background in pane} == {"rgb(13, 17, 23)"}
    assert len({colour for _, _, colour, _ in pane}) >= 5  # the view's reds, yellows, greens, dims... all checked
    assert _poor(texts) == []


def test_the_fleet_table_shows_shares_in_percent_in_the_browser(chrome: Chrome, report: Path) -> None:
    chrome.load(report, full_page=False)
    cells = chrome.evaluate("""(() => {
      const heads = Array.from(document.querySelectorAll('#fleet-table th')).map(th => th.textContent);
      return ['pause % of time', 'ECN-marked %'].map(name => [name, heads.indexOf(name),
        Array.from(document.querySelectorAll('#fleet-table tbody tr')).map(r => r.cells[heads.indexOf(name)].innerText)]);
    })()""")
    for name, column, shown in cells:
        assert column > 0, name
        figures = [cell for cell in shown if cell != "—"]
        assert len(figures) > 10 and all(cell.endswith(" %") and "e" not in cell for cell in figures), (name, figures)
    pause = dict(zip(chrome.evaluate("Array.from(document.querySelectorAll('#fleet-table tbody tr'))"
                                     ".map(r => r.cells[0].innerText + ' ' + r.cells[1].innerText)"), cells[0][2]))
    assert pause["gpu02 mlx5_1/1"] == "97.5 %"  # as the on-call view says: paused 97.5 % of the time
