"""The NIC-side host parsers (ethtool_stats, ethtool_info, mlnx_qos, mlxlink, fw_query) over every real sample.

No verbatim capture of these tools was public when the parsers were written (see each docstring), so the corpus
folders may be absent and the tests skip; when samples are added under REAL_OUTPUTS/host/<tool>/ every one of them
must parse (a ParseError fails the test) and satisfy the invariants each tool's format guarantees. The folder
names cover both the tool spelling (ethtool_S, flint_query) and the parser name.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rdmatool import metrics
from rdmatool.model import MetricKind, Sample
from tests.helpers import REAL_OUTPUTS, pick, run

_FOLDERS = {
    "ethtool_stats": ("ethtool_S", "ethtool_stats"),
    "ethtool_info": ("ethtool_i", "ethtool_info"),
    "mlnx_qos": ("mlnx_qos",),
    "mlxlink": ("mlxlink",),
    "fw_query": ("flint_query", "mlxfwmanager", "fw_query"),
}


def _samples_for(parser: str) -> list[tuple[Path, list[Sample]]]:
    folders = [REAL_OUTPUTS / "host" / name for name in _FOLDERS[parser]]
    files = sorted(p for folder in folders if folder.is_dir() for p in folder.iterdir() if p.suffix == ".txt")
    if not files:
        pytest.skip(f"no real {parser} samples under {REAL_OUTPUTS / 'host'}")
    return [(path, run(parser, path.read_text(encoding="utf-8", errors="replace"))) for path in files]


def _assert_common(path: Path, samples: list[Sample]) -> None:
    assert samples, f"{path.name}: nothing parsed"
    for sample in samples:
        assert metrics.is_known(sample.metric), f"{path.name}: {sample.metric} not in the glossary"
        if metrics.kind_of(sample.metric) is MetricKind.COUNTER:
            assert sample.value is None or isinstance(sample.value, int), (
                f"{path.name}: {sample} is not an int"
            )
    counters = [
        (s.entity, s.metric, s.priority, s.size_bytes)
        for s in samples
        if metrics.kind_of(s.metric) is MetricKind.COUNTER
    ]
    assert len(counters) == len(set(counters)), f"{path.name}: duplicate counter keys"


def test_ethtool_stats_real_samples() -> None:
    for path, samples in _samples_for("ethtool_stats"):
        _assert_common(path, samples)
        assert {s.entity for s in samples} == {"netdev"}
        for sample in samples:
            assert sample.priority is None or 0 <= sample.priority <= 7


def test_ethtool_info_real_samples() -> None:
    for path, samples in _samples_for("ethtool_info"):
        _assert_common(path, samples)
        if pick(samples, metric="tool_error"):
            continue
        driver = [s.text for s in pick(samples, metric="driver")]
        assert driver and driver[0].startswith(("mlx", "ice", "bnxt", "i40e", "ixgbe")), (
            f"{path.name}: {driver}"
        )
        for sample in pick(samples, metric="fw_version"):
            assert "(" not in sample.text, f"{path.name}: PSID left in the firmware version"


def test_mlnx_qos_real_samples() -> None:
    for path, samples in _samples_for("mlnx_qos"):
        _assert_common(path, samples)
        trust = pick(samples, metric="trust_mode")
        assert all(s.text in ("pcp", "dscp", "none") for s in trust), f"{path.name}: {trust}"
        pfc = pick(samples, metric="pfc_enabled")
        assert len(pfc) in (0, 8) and all(s.value in (0, 1) for s in pfc), f"{path.name}: {pfc}"
        assert sorted(s.priority for s in pick(samples, metric="priority_to_tc")) == sorted(
            {s.priority for s in pick(samples, metric="priority_to_tc")}
        ), f"{path.name}: a priority mapped to two TCs"


def test_mlxlink_real_samples() -> None:
    for path, samples in _samples_for("mlxlink"):
        _assert_common(path, samples)
        if pick(samples, metric="tool_error"):
            continue
        assert pick(samples, metric="port_state") or pick(samples, metric="effective_ber"), path.name
        for sample in pick(samples, metric="effective_ber") + pick(samples, metric="raw_ber"):
            assert sample.value is None or 0 <= sample.value < 1, f"{path.name}: {sample}"


def test_fw_query_real_samples() -> None:
    for path, samples in _samples_for("fw_query"):
        _assert_common(path, samples)
        if pick(samples, metric="tool_error"):
            continue
        versions = pick(samples, metric="fw_version")
        assert versions, f"{path.name}: no firmware version"
        assert all(re.fullmatch(r"\d+\.\d+\.\d+", s.text) for s in versions), f"{path.name}: {versions}"
