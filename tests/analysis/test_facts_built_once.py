"""The facts are built once, from the sample rows' codes (rdmatool.table.analysis._base_facts): spelled out, they
must be the very frame the plain concatenation of the parts gives — the reference below is the analysis as it was
before, frame by frame (latest values, rates, resets, derived ratios, efficiency, triage; a tool that complained twice) — on a pod
with every part, and on the demo bundle."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rdmatool.metrics import rate_name
from rdmatool.table import analysis, frame
from rdmatool.table.facts import plain
from rdmatool.table.triage import triage_facts
from tests.bundle_sides import put_output
from tests.pods import bundle as pods

DEMO = Path(__file__).resolve().parents[2] / "examples" / "demo-bundle"
COLUMNS = analysis.FACT_COLUMNS


def reference(table: frame.SampleTable) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The facts and links as pd.concat of whole frames makes them (the analysis before the facts were built once)."""
    _, series, _ = analysis._in_snapshot_order(table)
    samples = table.frame  # the plain frame (a loader's rows come in snapshot order)
    meta = samples[["target", "kind", "platform", "role"]].drop_duplicates("target")
    latest = analysis._latest(samples, series)
    codes, names = pd.factorize(latest["metric"].to_numpy())
    code_of = {name: code for code, name in enumerate(names)}
    errors = codes == code_of.get("tool_error", -2)
    if errors.any():
        every = samples[(samples["metric"] == "tool_error").to_numpy()]
        joined = every.groupby(frame.KEY, dropna=False, sort=False)["text"].transform(
            lambda texts: " | ".join(dict.fromkeys(t for t in texts if isinstance(t, str))))
        text = latest["text"].copy()
        text[errors] = joined[~every.duplicated(frame.KEY, keep="last")].to_numpy()
        latest = latest.assign(text=text)
    latest = latest.assign(window_s=np.nan, delta=np.nan, flag="")

    def latest_of(metric: str) -> pd.DataFrame:
        return latest[codes == code_of.get(metric, -2)]

    parts = [latest]
    rates, first_rows = frame.rates_with_rows(samples, series)
    if not rates.empty:
        rows = rates.assign(**{c: pd.Series(samples[c].to_numpy()[first_rows], dtype=object, index=rates.index)
                               for c in ("kind", "platform", "role")})
        rows = rows.assign(metric=rows["metric"].map({m: rate_name(m) for m in rows["metric"].unique()}),
                           value=rows["rate"], text=None)
        parts.append(rows[COLUMNS])
        resets = rows[rows["flag"] == "reset"]
        if not resets.empty:
            parts.append(resets.assign(metric="counter_reset", text=resets["metric"].str.removesuffix("_per_s"),
                                       value=np.nan)[COLUMNS])
        window = float(rates.loc[rates["flag"].isin(["", "wrap32", "wrap64"]), "window_s"].median())
        parts.append(analysis._derived(rates, meta, window))  # every rate: the analysis cuts only what it reads
    kept = [p for p in parts if not p.empty]
    facts = pd.concat(kept, ignore_index=True) if kept else pd.DataFrame(columns=COLUMNS)
    facts = facts.astype({"priority": "Int64", "size_bytes": "Int64"})
    efficiency = analysis._efficiency(latest_of("bw_avg_gbps"), latest_of("link_rate_gbps"))
    if not efficiency.empty:
        facts = pd.concat([facts, efficiency], ignore_index=True)
    triage = triage_facts(samples, facts)
    if not triage.empty:
        facts = pd.concat([facts, triage.reindex(columns=COLUMNS)], ignore_index=True)
        facts = facts.astype({"priority": "Int64", "size_bytes": "Int64"})
    return facts, analysis._links(latest_of("lldp_neighbor"), set(facts["target"]), latest_of("port_alias"))


def _dcqcn(path: Path, host: str, snapshot: int, complaint: str) -> None:
    """A DCQCN read of one host where one port's folder is missing: a tool error (`complaint`) among the values."""
    put_output(path, snapshot, host, "dcqcn_sysfs",
               "/sys/class/net/eth2/ecn/roce_np/enable/3: 1\n/sys/class/net/eth2/ecn/roce_rp/enable/3: 1\n"
               f"grep: /sys/class/net/eth3/ecn/roce_np/*: {complaint}\n")


@pytest.fixture(scope="module")
def pod_bundle(tmp_path_factory) -> Path:
    pod = pods.healthy_pod()
    pods.bump(pod.host("gpu02").port("mlx5_0").pma, "symbol_error", -50)  # goes down: a reset
    pods.bump(pod.host("gpu03").port("mlx5_0").pma, "port_xmit_discards", 700)
    path = pods.write(pod, tmp_path_factory.mktemp("pod") / "b")
    _dcqcn(path, "gpu01", 0, "No such file or directory")  # the same read complaining twice, differently
    _dcqcn(path, "gpu01", 1, "Permission denied")
    return path


@pytest.mark.parametrize("which", ["pod", "demo"])
def test_the_facts_are_the_concatenation_of_their_parts(which: str, pod_bundle: Path) -> None:
    table = frame.load(pod_bundle if which == "pod" else DEMO, write_store=False)
    built = analysis.analyse(table)
    facts, links = reference(table)
    pd.testing.assert_frame_equal(plain(built.facts), facts, check_exact=True)
    pd.testing.assert_frame_equal(built.links, links, check_exact=True)
    metrics = set(facts["metric"])
    if which == "pod":  # the case holds every part
        assert {"counter_reset", "bw_efficiency", "triage_verdict", "rx_pause_fraction"} <= metrics, metrics
        joined = facts.loc[facts["metric"] == "tool_error", "text"]
        assert joined.str.contains(" | ", regex=False).any(), joined
    assert_codes_name_the_facts(built)


def assert_codes_name_the_facts(built: analysis.Analysis) -> None:
    """The codes the query groups by are the facts' categoricals' (never a factorize of the strings) and name every
    fact's metric and target, each distinct value once: the query's groups are the ones a factorize would give."""
    for column in ("metric", "target"):
        codes, uniques = built.query.codes(column)
        assert (codes == built.facts[column].cat.codes.to_numpy()).all()  # the columns' own
        assert len(codes) == len(built.facts) > 0
        assert len(set(uniques.tolist())) == len(uniques)
        named = np.array([*uniques.tolist(), None], dtype=object)[codes]
        assert (named == plain(built.facts)[column].to_numpy(dtype=object)).all(), column
    groups = built.query.target_positions()
    expected = built.facts.groupby("target", sort=False).indices
    assert {t: list(at) for t, at in groups.items()} == {t: list(at) for t, at in expected.items()}
    for metric in ("triage_verdict", "counter_reset", "symbol_errors_per_s", "tool_error"):
        assert list(built.query.positions(metric)) == list(np.flatnonzero(built.facts["metric"] == metric)), metric
