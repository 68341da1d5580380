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


@pytest.fixture(scope="module")
def document(demo: page.Page) -> str:
    """The demo's report, drawn once (its plots take seconds)."""
    return html.render(demo)


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


def test_the_report_is_one_file_that_fetches_nothing(document: str) -> None:
    found = Resources()
    found.feed(document)
    images = [url for tag, name, url in found.urls if tag == "img"]
    assert len(images) >= 3  # pause & ECN per priority, counter rates, trend (the topology is inline SVG)
    assert document.count('<svg xmlns="http://www.w3.org/2000/svg" class="topology"') == 1
    for tag, name, url in found.urls:
        assert url.startswith("#") or url.startswith("data:image/png;base64,"), (tag, name, url[:80])
    for url in images:
        from matplotlib.image import imread

        assert imread(io.BytesIO(base64.b64decode(url.split(",", 1)[1])), format="png").shape[0] > 100
    assert "default-src 'none'" in found.csp and "img-src data:" in found.csp
    assert not re.search(r"<link\b|@import|url\(", document)  # no stylesheet or font from elsewhere


def test_the_fleet_table_reads_the_facts_and_the_findings(demo: page.Page, document: str) -> None:
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
    table = document.split('id="fleet-table"', 1)[1].split("</table>", 1)[0]
    assert table.count("<tr") == len(demo.ports) + 1


def test_the_fleet_table_says_shares_in_percent_as_the_text_does(document: str) -> None:
    table = document.split('id="fleet-table"', 1)[1].split("</table>", 1)[0]
    head = re.findall(r"<th>([^<]*)</th>", table)
    assert "pause % of time" in head and "ECN-marked %" in head
    rows = [re.findall(r"<td[^>]*>([^<]*)</td>", row) for row in table.split("<tr")[2:]]
    storm = next(r for r in rows if r[:2] == ["gpu02", "mlx5_1/1"])
    assert storm[head.index("pause % of time")] == "97.5 %"  # the on-call view's "paused 97.5 % of the time"
    shares = [r[head.index(h)] for r in rows for h in ("pause % of time", "ECN-marked %")]
    assert all(re.fullmatch(r"(< )?\d[\d.,]* %|—", cell) for cell in shares), shares
    assert any(re.fullmatch(r"0\.000\d+ %", cell) for cell in shares)  # the demo's 6e-06 of the time, in percent
    shown = " ".join(re.findall(r">([^<]*)<", table))  # what the cells say (their data-sort keeps the exact value)
    assert not re.search(r"\de[+-]?\d", shown)  # no scientific notation in any cell


@pytest.mark.parametrize(("value", "shown"), [(6.03e-06, "0.0006 %"), (0.975, "97.5 %"), (0.0, "0 %"),
                                              (4e-9, "< 0.0001 %"), (None, "—")])
def test_a_share_reads_in_percent_without_an_exponent(value, shown) -> None:
    assert html._share(value) == shown


@pytest.mark.parametrize(("value", "shown"), [(38.44, "38.44"), (14820.0, "14,820"), (0.0, "0"), (2e-05, "< 0.001"),
                                              (3, "3"), (None, "—")])
def test_a_number_reads_without_an_exponent(value, shown) -> None:
    assert html._number(value) == shown


def test_a_cable_is_bad_for_a_physical_fault_of_either_end_only(demo: page.Page, document: str) -> None:
    links = {(c.link.host, c.link.switch, c.link.switch_port): c.bad for c in demo.links}
    assert links[("gpu02", "leaf02", "swp1")] is False  # a PFC storm is the host's, not the cable's: on its port
    assert links[("gpu03", "leaf03", "Eth1/1")] is False  # PFC on the wrong priority: a setting
    assert links[("gpu01", "leaf01", "Ethernet0")] is False  # gpu01's bad port is its InfiniBand one, not this
    assert links[("gpu01", "", "")] is True  # ... that one, flapping: its far end is not in the bundle
    listed = document.split('id="bad-cables"', 1)[1].split("</ul>", 1)[0]
    assert "gpu01 mlx5_0 ↔ far end not seen" in listed and "gpu02" not in listed and "gpu03" not in listed
    ports = document.split('id="port-faults"', 1)[1].split("</ul>", 1)[0]
    assert re.search(r"gpu03 mlx5_1/1 \(ens1f0np0\): <code>host_pfc_not_roce_priority", ports)
    assert re.search(r"gpu02 mlx5_1/1 \(ens1f0np0\): <code>pfc_storm", ports)


def test_the_evidence_reads_in_the_unit_of_its_metric() -> None:
    evidence = {"metric": "tx_pause_fraction", "observed": 6.03e-06, "expected": "<= 0.5", "window_s": 3.2,
                "device": "mlx5_1"}
    assert html._evidence(evidence) == ("metric tx_pause_fraction; observed 0.0006 %; expected <= 0.5; "
                                        "window_s 3.2 s; device mlx5_1")


def test_the_trend_has_each_baseline_night_and_this_bundle(demo: page.Page) -> None:
    nights = json.loads(BASELINE.read_text())["nights"]
    tx = [p for p in demo.trend if p["label"] == "host pause fraction (tx)"]
    assert [p["night"] for p in tx] == [n["created"] for n in nights] + ["this bundle"]
    assert tx[-1]["max"] > 0.9  # tonight's storm, invisible in the median and the p90
    assert all(p["max"] < 0.01 for p in tx[:-1])
    assert tx[-1]["median"] < 0.01
    without = page.build(DEMO)
    assert without.trend == [] and "no baseline given" in html._trend(without)


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


def test_a_bundle_without_perftest_pairs_says_so(document: str) -> None:
    assert "no perftest pairs" in document
