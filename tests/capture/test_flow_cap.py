"""The flow table of a capture's scan is capped: flows beyond it are counted together as "other flows", so memory
stays bounded whatever the number of distinct flows, and every RoCE packet is still counted once."""

from __future__ import annotations

from pathlib import Path

from rdmatool.capture import Options, analyse_file
from rdmatool.capture.scan import MAX_FLOWS
from tests.capture.build import roce, write


def _packets(flows: int, per_flow: int) -> list:
    # Interleaved, each flow's PSNs in order: no flow has a gap, but two flows counted as one would have many.
    return [roce(src=f"10.0.{i // 250}.{i % 250 + 1}", qp=0x100 + i, psn=p)
            for p in range(per_flow) for i in range(flows)]


def test_flows_beyond_the_cap_are_counted_together(tmp_path: Path) -> None:
    path = write(tmp_path / "many.pcap", _packets(flows=12, per_flow=5))
    summary, tally = analyse_file(path, Options(max_flows=4))
    roce_ = summary["roce"]
    assert roce_["flows"] == 4 and len(summary["flows"]) == 4 and len(tally.flows) == 4
    other = roce_["other_flows"]
    assert other["packets"] == 8 * 5 and roce_["packets"] == 12 * 5
    assert sum(f["packets"] for f in summary["flows"]) + other["packets"] == roce_["packets"]
    assert sum(f["bytes"] for f in summary["flows"]) + other["bytes"] == roce_["bytes"]
    assert roce_["psn_gaps"] == 0 and roce_["retransmissions"] == 0  # the spilled flows' PSNs are not mixed


def test_under_the_cap_nothing_is_spilled(tmp_path: Path) -> None:
    path = write(tmp_path / "few.pcap", _packets(flows=3, per_flow=4))
    summary, _ = analyse_file(path, Options())
    assert summary["roce"]["flows"] == 3 and summary["roce"]["other_flows"] == {"packets": 0, "bytes": 0, "cnp": 0,
                                                                                  "ce": 0}
    assert 1000 <= MAX_FLOWS <= 1_000_000
