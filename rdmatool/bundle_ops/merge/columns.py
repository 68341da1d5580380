"""The merged samples store's columns: every input's kept outputs in the bundle's canonical order, their codes in
one string pool, and the row columns written run by run (never made whole: a second copy of every row at 10,000
hosts)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from rdmatool.table.sample_columns import ARRAY_NAMES, OUT_INT, OUT_TEXT, Columns

if TYPE_CHECKING:
    from rdmatool.bundle_ops.merge import _Input


def _merged_columns(loaded: list[_Input]) -> tuple[dict[str, np.ndarray], list[str], dict[str, RunColumn]]:
    """The kept outputs of every input as one store's columns, in the bundle's canonical order (snapshot, target,
    file name: what a reader's scan lists), their rows gathered alike and their codes in one pool."""
    pool = Columns().with_pool(loaded[0].strings)
    parts_out, parts_rows = [], []
    for i in loaded:
        out, rows = i.outputs, i.arrays
        remap = np.array([pool.code(s) for s in i.strings] + [-1], dtype=np.int32)
        keep = i.kept()
        whole = bool(keep.all())  # the usual case (shards do not overlap): no copy
        parts_out.append({name: out[name] if whole else out[name][keep] for name in (*OUT_TEXT, *OUT_INT, "time")})
        row_keep = None if whole else np.repeat(keep, out["rows"])
        part_rows = {name: rows[name] if whole else rows[name][row_keep] for name in ARRAY_NAMES}
        for name in ("entity", "metric", "raw_key", "text"):  # -1 (None) indexes the appended -1
            part_rows[name] = remap[part_rows[name]]
        parts_rows.append(part_rows)
        i.arrays = {}  # its rows are in the parts now: 10 shards of 1,000 hosts hold 50 MB each
    outputs = {name: np.concatenate([p[name] for p in parts_out]) for name in parts_out[0]}
    order = _canonical_order(outputs)
    runs = _row_runs(order, [len(p["rows"]) for p in parts_out], outputs["rows"])
    total = int(outputs["rows"].sum())
    # Each column stays in its inputs' parts and is written to the store run by run, in its final order: the inputs'
    # outputs of one snapshot are already in order and stay together (20 runs for 10 shards of 2 snapshots). Made
    # whole, the columns would be a second copy of every row (460 MB at 10,000 hosts) to allocate and write first.
    arrays = {name: RunColumn([p.pop(name) for p in parts_rows], runs, total) for name in ARRAY_NAMES}
    outputs = {name: column[order] for name, column in outputs.items()}
    return outputs, pool.strings, arrays


class RunColumn:
    """One row column of the merged store, never made whole: runs of its inputs' columns, in order — (input, first
    row there, first row in the merged column, rows), as `_row_runs` gives them. The samples store writes it with
    `write_npy` as it would write the whole array; `array()` makes it whole (for a reader that wants one)."""

    def __init__(self, sources: list[np.ndarray], runs: list[tuple[int, int, int, int]], total: int) -> None:
        self.sources, self.runs, self.total = sources, runs, total
        self.dtype = sources[0].dtype if sources else np.dtype(np.float64)

    def __len__(self) -> int:
        return self.total

    def write_npy(self, stream) -> None:
        """The column as one `.npy` member, the bytes `np.lib.format.write_array` writes for the whole array."""
        header = {"descr": np.lib.format.dtype_to_descr(self.dtype), "fortran_order": False, "shape": (self.total,)}
        np.lib.format.write_array_header_1_0(stream, header)
        for part, src, _, length in self.runs:
            stream.write(np.ascontiguousarray(self.sources[part][src:src + length], dtype=self.dtype).data)

    def array(self) -> np.ndarray:
        column = np.empty(self.total, dtype=self.dtype)
        for part, src, dst, length in self.runs:
            column[dst:dst + length] = self.sources[part][src:src + length]
        return column


def _row_runs(order: np.ndarray, part_sizes: list[int], rows: np.ndarray) -> list[tuple[int, int, int, int]]:
    """The row copies that put the inputs' rows in `order` (a permutation of the concatenated outputs): (input,
    first row there, first row in the merged columns, rows), one per run of outputs that are consecutive in one
    input."""
    if not len(order):
        return []
    part_of = np.repeat(np.arange(len(part_sizes)), part_sizes)
    part_start = np.concatenate([[0], np.cumsum(part_sizes)[:-1]]).astype(np.int64)
    row_begin = np.cumsum(rows) - rows  # each output's first row in the concatenated parts
    # each input's first row (an input with no outputs is clipped to a neighbour's, and never read)
    part_row_start = row_begin[part_start.clip(max=len(rows) - 1)]
    ordered_part = part_of[order]
    breaks = np.flatnonzero((np.diff(order) != 1) | (ordered_part[1:] != ordered_part[:-1])) + 1
    starts = np.concatenate([[0], breaks])
    counts = rows[order]
    dst = np.cumsum(counts) - counts
    run_rows = np.add.reduceat(counts, starts)
    first = order[starts]
    part = part_of[first]
    src = row_begin[first] - part_row_start[part]
    return list(zip(part.tolist(), src.tolist(), dst[starts].tolist(), run_rows.tolist(), strict=True))


def _canonical_order(outputs: dict[str, np.ndarray]) -> np.ndarray:
    """The permutation that lists outputs as the bundle reader does: by snapshot, target name, raw file name. An
    input's outputs of one (snapshot, target) are already in file order and stay together: only these blocks are
    sorted (20,000 for 10,000 hosts, instead of 460,000 outputs)."""
    n = len(outputs["rows"])
    if not n:
        return np.zeros(0, dtype=np.int64)
    snapshot, target = outputs["snapshot"], outputs["target"]
    change = np.flatnonzero((snapshot[1:] != snapshot[:-1]) | (target[1:] != target[:-1])) + 1
    starts = np.concatenate([[0], change])
    ends = np.concatenate([change, [n]])
    blocks = sorted(zip(snapshot[starts].tolist(), target[starts].tolist(), starts.tolist(), ends.tolist()))
    return np.concatenate([np.arange(b, e) for _, _, b, e in blocks])
