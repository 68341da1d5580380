"""TableColumns (rdmatool.table_columns): a loaded sample table answers every read as its frame would, and a diagnosis
neither makes the frame nor spells out a text column whole."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rdmatool import analysis, frame
from rdmatool.diagnose import diagnose_analysis
from rdmatool.table_columns import TableColumns
from tests.pods import bundle as pods

DEMO = Path(__file__).resolve().parents[2] / "examples" / "demo-bundle"
# codes, or one value per output
SPELLED_OUT = ("entity", "metric", "text", "raw_key", "role", "qualifier", "snapshot", "time")


@pytest.fixture(scope="module")
def pod_path(tmp_path_factory) -> Path:
    pod = pods.healthy_pod()
    pods.bump(pod.host("gpu03").port("mlx5_0").pma, "port_xmit_discards", 700)
    return pods.write(pod, tmp_path_factory.mktemp("pod") / "b")


def rows_of(table: frame.SampleTable) -> TableColumns:
    rows = table.rows
    assert isinstance(rows, TableColumns)
    return rows


@pytest.mark.parametrize("which", ["pod", "demo"])
def test_rows_and_columns_are_the_frames(which: str, pod_path: Path) -> None:
    path = pod_path if which == "pod" else DEMO
    whole = frame.load(path, write_store=False).frame
    rows = rows_of(frame.load(path, write_store=False))
    n = len(whole)
    assert len(rows) == n > 0 and list(rows.columns) == list(whole.columns) and not rows.empty
    assert rows.index.equals(whole.index)
    if which == "demo":  # its per-output and coded columns hold missing values: a wrong None/NaN would show
        assert whole["role"].isna().any() and whole["qualifier"].isna().any() and whole["text"].isna().any()
    rng = np.random.default_rng(11)
    some = ["target", "role", "qualifier", "entity", "metric", "text", "priority", "exact"]
    for at in (rng.choice(n, 300, replace=False), np.sort(rng.choice(n, 50, replace=False)), np.array([n - 1, 0, -2]),
               np.zeros(0, dtype=np.intp)):
        pd.testing.assert_frame_equal(rows.take(at), whole.take(at), check_exact=True)
        pd.testing.assert_frame_equal(rows[some].take(at), whole[some].take(at), check_exact=True)
    assert rows.frame_if_made() is None  # nothing above made the frame
    for name in whole.columns:
        pd.testing.assert_series_equal(rows[name], whole[name], check_exact=True)
        got, want = rows[name].to_numpy(dtype=object), whole[name].to_numpy(dtype=object)
        assert all(a is b or a == b or (a != a and b != b) for a, b in zip(got, want)), name  # None stays None
    for name in ("snapshot", "time", "role", "qualifier"):  # held per output: spread over its rows, the column
        values, counts = rows.of_output(name)
        assert len(values) == len(counts) and int(counts.sum()) == n
        spread = pd.Series(np.repeat(values, counts), name=name, dtype=whole[name].dtype)
        pd.testing.assert_series_equal(spread, whole[name], check_exact=True)
    assert rows.of_output("value") is None and rows.of_output("metric") is None
    with pytest.raises(IndexError):
        rows.take([n])
    with pytest.raises(KeyError):
        rows["no_such_column"]
    with pytest.raises(KeyError):
        rows[["target", "no_such_column"]]


def test_the_frame_is_made_once_on_first_read(pod_path: Path) -> None:
    table = frame.load(pod_path, write_store=False)
    rows = rows_of(table)
    assert rows.frame_if_made() is None
    made = table.frame
    assert isinstance(made, pd.DataFrame) and table.frame is made and rows.frame_if_made() is made
    assert list(made.columns) == frame.COLUMNS
    pd.testing.assert_frame_equal(rows.take([0, 1]), made.take([0, 1]))


def test_a_diagnosis_never_spells_the_table_out(pod_path: Path) -> None:
    table = frame.load(pod_path, write_store=False)
    result = diagnose_analysis(analysis.analyse(table))
    assert "gpu03" in {f.target for f in result.findings}  # a diagnosis that judged something
    rows = rows_of(table)
    assert rows.frame_if_made() is None
    assert not set(rows._whole) & set(SPELLED_OUT), sorted(rows._whole)


def test_a_hand_built_table_is_its_frame() -> None:
    """A table given a frame (a test's, a capture's) holds that frame: `rows` is the frame itself."""
    given = pd.DataFrame({"snapshot": [0, 1], "metric": ["a", "b"]})
    table = frame.SampleTable(frame=given)
    assert table.frame is given and table.rows is given
