"""Results on disk: matrices (CSV), a heatmap (PNG, written by a small stdlib encoder), the attribution (JSON).

```
FOLDER/pairs.csv                          one row per pair run (round, server, client, bandwidth, latency, error)
FOLDER/matrix_<test>_bw_avg_gbps.csv      bandwidth tests: node x node, the worst passing value of the pair
FOLDER/matrix_<test>_lat_<p>_us.csv       latency tests: one matrix per column perftest printed (min ... p99.9)
FOLDER/heatmap_<test>.png                 the matrix as colours: green at/above expected, red far below, grey
                                          error, light grey not measured; nodes in the CSV's order
FOLDER/attribution.json                   bad nodes, bad links, missing, suspects, errors, evidence
FOLDER/results.json                       every PairResult (without raw outputs)
FOLDER/raw/<n>_r<round>_<server>_<client>.{server,client}.txt   what perftest printed
```
A matrix cell is symmetric (the pair's bandwidth whichever end served); `error` when the pair only errored,
empty when it was not measured, `-` on the diagonal.
"""

from __future__ import annotations

import csv
import json
import struct
import zlib
from pathlib import Path

from rdmatool.perf.attribution import LAT_FACTOR
from rdmatool.perf.model import LAT_TESTS, Attribution, PairResult

LAT_COLUMNS = ("lat_min_us", "lat_typical_us", "lat_avg_us", "lat_p99_us", "lat_p999_us", "lat_max_us",
               "lat_stdev_us")


def write_results(results: list[PairResult], attribution: Attribution, folder: Path) -> None:
    folder = Path(folder)
    (folder / "raw").mkdir(parents=True, exist_ok=True)
    _pairs_csv(results, folder / "pairs.csv")
    expected = attribution.evidence.get("_expected_gbps", {}) if attribution.evidence else {}
    for test in sorted({r.test for r in results}):
        mine = [r for r in results if r.test == test]
        nodes = sorted({n for r in mine for n in (r.server, r.client)})
        if test in LAT_TESTS:
            columns = [c for c in LAT_COLUMNS if any((r.lat or {}).get(c) is not None for r in mine)]
            for column in columns:
                cells = matrix(mine, nodes, lambda r, c=column: (r.lat or {}).get(c), worst=max)
                _matrix_csv(nodes, cells, folder / f"matrix_{test}_{column}.csv")
            typical = next((c for c in ("lat_typical_us", "lat_avg_us") if c in columns), None)
            if typical:
                cells = matrix(mine, nodes, lambda r, c=typical: (r.lat or {}).get(c), worst=max)
                values = sorted(v for row in cells for v in row if isinstance(v, float))
                reference = values[len(values) // 2] if values else 1.0
                write_heatmap(cells, lambda v, i, j, ref=reference: LAT_FACTOR * ref / v if v else 0.0, folder / f"heatmap_{test}.png")
        else:
            cells = matrix(mine, nodes, lambda r: r.bw_avg_gbps, worst=min)
            _matrix_csv(nodes, cells, folder / f"matrix_{test}_bw_avg_gbps.csv")
            top = max((v for row in cells for v in row if isinstance(v, float)), default=1.0)

            def ratio(v: float, i: int, j: int, nodes=nodes, top=top) -> float:
                ends = [expected.get(nodes[i]), expected.get(nodes[j])]
                ends = [e for e in ends if e]
                return v / (0.9 * min(ends)) if ends else v / top

            write_heatmap(cells, ratio, folder / f"heatmap_{test}.png")
    (folder / "attribution.json").write_text(json.dumps(attribution.as_dict(), indent=2, default=str) + "\n")
    (folder / "results.json").write_text(json.dumps([r.as_dict() for r in results], indent=1, default=str) + "\n")
    for index, r in enumerate(results):
        stem = f"{index:04d}_r{r.round}_{r.server}_{r.client}"
        if r.server_output:
            (folder / "raw" / f"{stem}.server.txt").write_text(r.server_output)
        if r.client_output:
            (folder / "raw" / f"{stem}.client.txt").write_text(r.client_output)


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
                      *LAT_COLUMNS, "error", "duration_s"])
        for r in results:
            lat = r.lat or {}
            out.writerow([r.round, r.server, r.client, r.test, _cell(r.size_bytes), _cell(r.bw_avg_gbps),
                          _cell(r.bw_peak_gbps), *(_cell(lat.get(c)) for c in LAT_COLUMNS), r.error or "",
                          r.duration_s])


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


# --------------------------------------------------------------------------------------------------- PNG


def _colour(ratio: float) -> tuple[int, int, int]:
    """ratio 1 = at the pass line: green at/above it, yellow to red as it falls to half and below."""
    if ratio >= 1.0:
        return (46, 160, 67)
    t = max(0.0, min(1.0, (ratio - 0.5) / 0.5))
    if t >= 0.5:  # yellow -> green
        u = (t - 0.5) * 2
        return (int(230 - 184 * u), int(190 - 30 * u), int(40 + 27 * u))
    u = t * 2  # red -> yellow
    return (int(200 + 30 * u), int(40 + 150 * u), 40)


def write_heatmap(cells: list[list], ratio, path: Path, cell: int | None = None) -> None:
    """Node x node cells as coloured squares with 1-pixel grid lines; `ratio(value, i, j)` maps a value to 0..1+."""
    n = max(1, len(cells))
    size = cell or max(4, min(24, 600 // n))
    side = n * (size + 1) + 1
    grid, white, grey, error = (255, 255, 255), (250, 250, 250), (225, 225, 225), (70, 70, 70)
    colours = [[grey] * n for _ in range(n)]
    for i, row in enumerate(cells):
        for j, v in enumerate(row):
            colours[i][j] = (white if v == "-" else error if v == "error" else grey if v is None
                             else _colour(ratio(v, i, j)))
    rows = []
    grid_row = bytes(grid) * side
    for i in range(n):
        rows.append(grid_row)
        line = bytearray(bytes(grid))
        for j in range(n):
            line += bytes(colours[i][j]) * size + bytes(grid)
        rows.extend([bytes(line)] * size)
    rows.append(grid_row)
    write_png(path, side, side, rows)


def write_png(path: Path, width: int, height: int, rows: list[bytes]) -> None:
    """8-bit RGB PNG, filter 0 on every scanline, one zlib IDAT."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    assert len(rows) == height and all(len(r) == 3 * width for r in rows)
    raw = b"".join(b"\x00" + r for r in rows)
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
    png += chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b"")
    Path(path).write_bytes(png)
