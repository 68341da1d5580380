"""Results on disk: matrices (CSV), a heatmap (PNG, drawn by matplotlib), the attribution (JSON).

```
FOLDER/pairs.csv                          one row per pair run (round, server, client, bandwidth, latency, error,
                                          rail: the NIC both ends ran on, empty for each host's one tested NIC;
                                          server_nic, client_nic: the device/port each end ran on, `mlx5_1/1`)
FOLDER/matrix_<test>_bw_avg_gbps.csv      bandwidth tests: node x node, the worst passing value of the pair
FOLDER/matrix_<test>_lat_<p>_us.csv       latency tests: one matrix per column perftest printed (min ... p99.9)
FOLDER/heatmap_<test>.png                 (with rdmatool[report]: matplotlib)
                                          the matrix as colours with a colour bar: green at/above the pass line,
                                          red at half of it and below, dark grey error, light grey not measured;
                                          host names on both axes in the CSV's order (up to 64 nodes)
FOLDER/attribution.json                   bad nodes, bad links, missing, suspects, errors, evidence
FOLDER/results.json                       every PairResult (without raw outputs)
FOLDER/raw/<n>_r<round>_<server>_<client>[_<rail>].{server,client}.txt   what perftest printed
```
A matrix cell is symmetric (the pair's bandwidth whichever end served); `error` when the pair only errored,
empty when it was not measured, `-` on the diagonal.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

from rdmatool import extras
from rdmatool.perf.attribution import LAT_FACTOR
from rdmatool.perf.model import LAT_TESTS, Attribution, PairResult
from rdmatool.present import figures
from rdmatool.schemas import tag

LAT_COLUMNS = ("lat_min_us", "lat_typical_us", "lat_avg_us", "lat_p99_us", "lat_p999_us", "lat_max_us",
               "lat_stdev_us")


def write_results(results: list[PairResult], attribution: Attribution, folder: Path) -> None:
    folder = Path(folder)
    (folder / "raw").mkdir(parents=True, exist_ok=True)
    _pairs_csv(results, folder / "pairs.csv")
    for test in sorted({r.test for r in results}):
        mine = [r for r in results if r.test == test]
        nodes = sorted({n for r in mine for n in (r.server, r.client)})
        if test in LAT_TESTS:
            columns = [c for c in LAT_COLUMNS if any((r.lat or {}).get(c) is not None for r in mine)]
            for column in columns:
                cells = matrix(mine, nodes, lambda r, c=column: (r.lat or {}).get(c), worst=max)
                _matrix_csv(nodes, cells, folder / f"matrix_{test}_{column}.csv")
        else:
            cells = matrix(mine, nodes, lambda r: r.bw_avg_gbps, worst=min)
            _matrix_csv(nodes, cells, folder / f"matrix_{test}_bw_avg_gbps.csv")
    if extras.installed("report"):  # a picture of the CSV matrices: a node install without matplotlib has none
        for test, png in heatmaps(results, attribution).items():
            (folder / f"heatmap_{test}.png").write_bytes(png)
    record = {"schema": tag("perf"), **attribution.as_dict()}  # the shape tools rely on: rdmatool/schemas/perf
    (folder / "attribution.json").write_text(json.dumps(record, indent=2, default=str) + "\n")
    (folder / "results.json").write_text(json.dumps([r.as_dict() for r in results], indent=1, default=str) + "\n")
    for index, r in enumerate(results):
        stem = f"{index:04d}_r{r.round}_{r.server}_{r.client}" + (f"_{r.rail}" if r.rail else "")
        if r.server_output:
            (folder / "raw" / f"{stem}.server.txt").write_text(r.server_output)
        if r.client_output:
            (folder / "raw" / f"{stem}.client.txt").write_text(r.client_output)


def nics_of(results: list[PairResult]) -> dict[str, list[str]]:
    """host -> the `<device>/<port>` its pairs ran on, in name order (a multi-rail host: one per rail)."""
    out: dict[str, set[str]] = {}
    for r in results:
        for host, nic in ((r.server, r.server_nic), (r.client, r.client_nic)):
            if nic:
                out.setdefault(host, set()).add(nic)
    return {host: sorted(nics) for host, nics in sorted(out.items())}


def nics_detail(nics: dict[str, list[str]], untested: dict[str, dict[str, str]]) -> str:
    """`; NICs <n>/1 on <k> hosts, ...; not tested: <host> <device> (why), ...` for a stage's one-line detail (the
    NICs tested counted by name; each untested NIC named, the first few)."""
    counts: dict[str, int] = {}
    for found in nics.values():
        for nic in found:
            counts[nic] = counts.get(nic, 0) + 1
    out = ("; NICs " + ", ".join(f"{nic} on {n} host{'s' if n > 1 else ''}" for nic, n in sorted(counts.items()))
           if counts else "")
    named = [f"{host} {device} ({why})" for host, found in untested.items() for device, why in found.items()]
    if named:
        out += "; not tested: " + ", ".join(named[:6]) + (f" and {len(named) - 6} more" if len(named) > 6 else "")
    return out


def heatmaps(results: list[PairResult], attribution: Attribution | None = None) -> dict[str, bytes]:
    """One heatmap PNG per test of the results: `heatmap_<test>.png` of a results folder, and the HTML report's.

    Bandwidth: a cell's colour is its share of the pass line, 90 % of the slower end's expected rate (the
    attribution's `_expected_gbps`), else of the best pair measured. Latency: LAT_FACTOR x the median pair's typical
    (else average) latency over the cell's, so that 1 is the attribution's own limit there too."""
    evidence = attribution.evidence if attribution is not None and attribution.evidence else {}
    expected = evidence.get("_expected_gbps", {}) or {}
    out: dict[str, bytes] = {}
    for test in sorted({r.test for r in results}):
        mine = [r for r in results if r.test == test]
        nodes = sorted({n for r in mine for n in (r.server, r.client)})
        if test in LAT_TESTS:
            typical = next((c for c in ("lat_typical_us", "lat_avg_us")
                            if any((r.lat or {}).get(c) is not None for r in mine)), None)
            if typical is None:
                continue
            cells = matrix(mine, nodes, lambda r, c=typical: (r.lat or {}).get(c), worst=max)
            values = sorted(v for row in cells for v in row if isinstance(v, float))
            reference = values[len(values) // 2] if values else 1.0

            def lat_ratio(v: float, i: int, j: int, ref=reference) -> float:
                return LAT_FACTOR * ref / v if v else 0.0

            out[test] = heatmap_png(cells, nodes, lat_ratio, f"{test}: {typical.removeprefix('lat_')} latency (µs)",
                                    f"{LAT_FACTOR:g} × median latency / latency (1 = limit)")
        else:
            cells = matrix(mine, nodes, lambda r: r.bw_avg_gbps, worst=min)
            top = max((v for row in cells for v in row if isinstance(v, float)), default=1.0)

            def bw_ratio(v: float, i: int, j: int, nodes=nodes, top=top) -> float:
                ends = [e for e in (expected.get(nodes[i]), expected.get(nodes[j])) if e]
                return v / (0.9 * min(ends)) if ends else v / top

            out[test] = heatmap_png(cells, nodes, bw_ratio, f"{test}: bandwidth (Gb/s), worst of each pair",
                                    "share of the pass line (1 = 90 % of expected)")
    return out


def matrix(results: list[PairResult], nodes: list[str], value, worst=min) -> list[list[float | str | None]]:
    """Symmetric node x node cells: the worst passing value of the pair, "error", None (not measured), "-"."""
    position = {n: i for i, n in enumerate(nodes)}
    cells: list[list[float | str | None]] = [[None] * len(nodes) for _ in nodes]
    for i in range(len(nodes)):
        cells[i][i] = "-"
    for r in results:
        i, j = position[r.server], position[r.client]
        v = value(r) if r.error is None else None
        current = cells[i][j]
        if v is not None:
            new = float(v) if not isinstance(current, float) else float(worst(current, float(v)))
        else:
            new = current if current is not None else "error"
        cells[i][j] = cells[j][i] = new
    return cells


def _pairs_csv(results: list[PairResult], path: Path) -> None:
    with open(path, "w", newline="") as handle:
        out = csv.writer(handle)
        out.writerow(["round", "server", "client", "test", "size_bytes", "bw_avg_gbps", "bw_peak_gbps",
                      *LAT_COLUMNS, "error", "duration_s", "rail", "server_nic", "client_nic"])
        for r in results:
            lat = r.lat or {}
            out.writerow([r.round, r.server, r.client, r.test, _cell(r.size_bytes), _cell(r.bw_avg_gbps),
                          _cell(r.bw_peak_gbps), *(_cell(lat.get(c)) for c in LAT_COLUMNS), r.error or "",
                          r.duration_s, r.rail or "", r.server_nic or "", r.client_nic or ""])


def _cell(v: object) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.2f}"
    return str(v)


def _matrix_csv(nodes: list[str], cells: list[list], path: Path) -> None:
    with open(path, "w", newline="") as handle:
        out = csv.writer(handle)
        out.writerow(["node", *nodes])
        for node, row in zip(nodes, cells):
            out.writerow([node, *(_cell(v) for v in row)])


# ------------------------------------------------------------------------------------------------------- heatmap

_DIAGONAL, _ERROR, _UNMEASURED = (1.0, 1.0, 1.0, 1.0), (0.27, 0.27, 0.27, 1.0), (0.88, 0.88, 0.88, 1.0)
LABELLED_NODES = 64  # beyond this many nodes the host names overlap: the axes say how many, the CSV names them
ANNOTATED_NODES = 16  # up to this many, each cell prints its value


def heatmap_png(cells: list[list], nodes: list[str], ratio, title: str, colour_label: str) -> bytes:
    """Node x node cells as a PNG drawn by matplotlib: host names on both axes, a colour bar (red at half the pass
    line and below, through yellow, green at it and above), the values in the cells of small matrices, and a
    legend for the cells that hold no number. `ratio(value, i, j)` is a value's share of the pass line."""
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import LinearSegmentedColormap, Normalize
    from matplotlib.figure import Figure  # a Figure of its own, never pyplot's global state: Agg, no display
    from matplotlib.patches import Patch

    n = max(1, len(cells))
    cmap = LinearSegmentedColormap.from_list("pass_line", [(0.78, 0.16, 0.16), (0.90, 0.75, 0.16),
                                                           (0.18, 0.63, 0.26)])
    norm = Normalize(vmin=0.5, vmax=1.0)
    rgba = [[_DIAGONAL] * n for _ in range(n)]
    for i, row in enumerate(cells):
        for j, v in enumerate(row):
            rgba[i][j] = (_DIAGONAL if v == "-" else _ERROR if v == "error" else _UNMEASURED if v is None
                          else tuple(cmap(norm(ratio(v, i, j)))))
    side = min(16.0, 3.5 + 0.32 * n)
    figure = Figure(figsize=(side + 1.3, side), dpi=100, layout="constrained")
    axes = figure.add_subplot()
    axes.imshow(rgba, interpolation="nearest")
    axes.set_title(title, fontsize=10)
    labels = list(nodes) if len(nodes) <= LABELLED_NODES else []
    axes.set_xticks(range(len(labels)), labels=labels, rotation=90, fontsize=7)
    axes.set_yticks(range(len(labels)), labels=labels, fontsize=7)
    axes.set_xlabel("client / server (symmetric)" if labels else f"{len(nodes)} nodes, in the CSV's order")
    if n <= ANNOTATED_NODES:
        for i, row in enumerate(cells):
            for j, v in enumerate(row):
                if isinstance(v, float):
                    axes.text(j, i, f"{v:.3g}", ha="center", va="center", fontsize=6)
    bar = figure.colorbar(ScalarMappable(norm=norm, cmap=cmap), ax=axes, shrink=0.8, extend="both")
    bar.set_label(colour_label, fontsize=8)
    axes.legend(handles=[Patch(color=_ERROR, label="error"), Patch(color=_UNMEASURED, label="not measured")],
                loc="upper left", bbox_to_anchor=(1.0, -0.02), fontsize=7, frameon=False)
    return figures.png(figure)  # host and test names drawn as the characters they are, never as TeX
