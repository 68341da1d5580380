"""The HTML report's page: one self-contained file whose figures come from the bundle's facts and findings."""

from __future__ import annotations

import base64
import io
import json
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest

from rdmatool.model import Severity
from rdmatool.report import html, page
from tests.helpers import REPO

DEMO = REPO / "examples" / "demo-bundle"
BASELINE = REPO / "baselines" / "demo-healthy.json"


@pytest.fixture(scope="module")
def demo() -> page.Page:
    return page.build(DEMO, baseline=BASELINE)


class Resources(HTMLParser):
    """Every URL-bearing attribute of a document, and its CSP."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[tuple[str, str, str]] = []
        self.csp = ""

    def handle_starttag(self, tag, attrs) -> None:
        values = dict(attrs)
        if tag == "meta" and values.get("http-equiv") == "Content-Security-Policy":
            self.csp = values.get("content", "")
        for name in ("src", "href", "srcset", "data", "action", "poster"):
            if values.get(name) is not None:
                self.urls.append((tag, name, values[name]))


def test_the_report_is_one_file_that_fetches_nothing(demo: page.Page) -> None:
    document = html.render(demo)
    found = Resources()
    found.feed(document)
    images = [url for tag, name, url in found.urls if tag == "img"]
    assert len(images) >= 4  # pause & ECN per priority, counter rates, topology, trend
    for tag, name, url in found.urls:
        assert url.startswith("#") or url.startswith("data:image/png;base64,"), (tag, name, url[:80])
    for url in images:
        from matplotlib.image import imread

        assert imread(io.BytesIO(base64.b64decode(url.split(",", 1)[1])), format="png").shape[0] > 100
    assert "default-src 'none'" in found.csp and "img-src data:" in found.csp
    assert not re.search(r"<link\b|@import|url\(", document)  # no stylesheet or font from elsewhere


def test_the_fleet_table_reads_the_facts_and_the_findings(demo: page.Page) -> None:
    rows = {(r.target, r.port): r for r in demo.ports}
    storm = rows[("gpu02", "mlx5_1/1")]  # the demo's PFC storm, on the netdev ens1f0np0 of this RDMA port
    assert storm.netdev == "ens1f0np0" and storm.pause_fraction > 0.9 and storm.pause_priority == 3
    assert storm.severity is Severity.CRITICAL
    assert ("gpu02", "ens1f0np0") not in rows  # the netdev's counters joined the RDMA port's row
    assert rows[("gpu07", "mlx5_0/1")].rate_gbps == 100.0  # the degraded link
    assert rows[("gpu06", "mlx5_0/1")].state == "Down"
    assert rows[("gpu01", "mlx5_0/1")].errors >= 77  # symbol errors grew by 77 (counted once, two tools saw them)
    assert rows[("gpu10", "mlx5_1/1")].severity is None and rows[("gpu10", "mlx5_1/1")].errors == 0
    assert rows[("gpu01", "mlx5_1/1")].cnp_sent_per_s > 0
    table = html.render(demo).split('id="fleet-table"', 1)[1].split("</table>", 1)[0]
    assert table.count("<tr") == len(demo.ports) + 1


def test_a_link_is_bad_when_a_bad_finding_names_either_end(demo: page.Page) -> None:
    links = {(link.host, link.switch, link.switch_port): bad for link, bad in demo.links}
    assert links[("gpu02", "leaf02", "swp1")] is True  # PFC storm on the host end (and ECN after PFC on the switch)
    assert links[("gpu01", "leaf01", "Ethernet0")] is False  # gpu01's bad port is its InfiniBand one, not this
    assert links[("gpu10", "leaf05", "Ethernet1/2")] is False
    assert "gpu02 mlx5_1 ↔ leaf02 swp1" in html.render(demo)


def test_the_trend_has_each_baseline_night_and_this_bundle(demo: page.Page) -> None:
    nights = json.loads(BASELINE.read_text())["nights"]
    tx = [p for p in demo.trend if p["label"] == "host pause fraction (tx)"]
    assert [p["night"] for p in tx] == [n["created"] for n in nights] + ["this bundle"]
    assert tx[-1]["max"] > 0.9  # tonight's storm, invisible in the median and the p90
    assert all(p["max"] < 0.01 for p in tx[:-1])
    assert tx[-1]["median"] < 0.01
    without = page.build(DEMO)
    assert without.trend == [] and "no baseline given" in html.render(without)


def test_a_bundle_with_perftest_pairs_gets_its_matrix(tmp_path: Path) -> None:
    bundle = tmp_path / "bundle"
    shutil.copytree(DEMO, bundle)
    hosts = ["gpu01", "gpu03", "gpu04", "gpu05"]
    records = []
    for i, server in enumerate(hosts):
        for client in hosts[i + 1:]:
            slow = "gpu05" in (server, client)
            records.append({"server": server, "client": client, "test": "ib_write_bw", "size_bytes": 65536,
                            "bw_avg_gbps": 120.0 if slow else 380.0, "bw_peak_gbps": None, "lat": None,
                            "error": None, "round": 0, "duration_s": 1.0})
    (bundle / "perf").mkdir()
    (bundle / "perf" / "results.json").write_text(json.dumps(records))
    (bundle / "perf" / "attribution.json").write_text("{}")
    shown = page.build(bundle)
    assert len(shown.pairs) == 6 and shown.attribution.bad_nodes == ("gpu05",)
    document = html.render(shown)
    assert 'alt="perftest matrix ib_write_bw"' in document and "bad: gpu05" in document
    assert "no perftest pairs" in html.render(page.build(DEMO))
