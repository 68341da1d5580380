"""One trigger capture per shipped capture rule (the per-rule coverage guard in tests/rules counts these): the
capture that makes exactly that rule fire, checked through the `rdmatool pcap` command line."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.capture.build import ACK, cnp, pcap_cli, periodic_bursts, pfc_frame, roce, tcp, write


@dataclass(frozen=True)
class Trigger:
    rule: str
    packets: Callable[[], list]
    args: tuple[str, ...] = ()  # more options of `rdmatool pcap` (a link rate for the pause time)


TRIGGERS = [
    Trigger("capture_roce_off_dscp", lambda: [roce(psn=i) for i in range(10)] + [roce(qp=0x44, psn=0, dscp=0)]),
    Trigger("capture_other_traffic_on_roce_class", lambda: [roce(psn=i) for i in range(10)] + [tcp(dscp=26)]),
    Trigger("capture_pfc_on_priority_without_roce", lambda: [roce(psn=i) for i in range(10)] + [pfc_frame({5: 200})]),
    Trigger("capture_ce_without_cnp", lambda: [roce(psn=i, ecn=3) for i in range(10)]),
    Trigger("capture_cnp_without_ce", lambda: [roce(psn=i) for i in range(5)] + [cnp()]),
    Trigger("capture_psn_gaps", lambda: [roce(psn=p) for p in (0, 1, 2, 5, 6)]),
    Trigger("capture_naks", lambda: [roce(psn=i) for i in range(4)]
            + [roce(src="10.0.0.2", dst="10.0.0.1", qp=0x22, psn=3, opcode=ACK, syndrome=0x60)]),
    Trigger("capture_retransmissions", lambda: [roce(psn=p) for p in (0, 1, 2, 3, 2, 3)]),
    Trigger("capture_periodic_interference", periodic_bursts),
    Trigger("capture_heavy_ce_marking", lambda: [roce(psn=i, ecn=3 if i % 5 == 0 else 2) for i in range(2000)]
            + [cnp()]),
    Trigger("capture_roce_priority_paused",  # 65535 quanta every 2 ms at 100G: paused 335.5 us of each 2 ms
            lambda: sorted([(10.0 + ms / 1000, roce(psn=ms)) for ms in range(200)]
                           + [(10.0005 + ms / 1000, pfc_frame({3: 0xFFFF})) for ms in range(0, 200, 2)],
                           key=lambda x: x[0]), ("--link-gbps", "100")),
]


@pytest.mark.parametrize("trigger", TRIGGERS, ids=lambda t: t.rule)
def test_the_trigger_capture_fires_its_rule(trigger: Trigger, tmp_path: Path) -> None:
    path = write(tmp_path / "trigger.pcapng", trigger.packets(), fmt="pcapng")
    out = pcap_cli(str(path), "--json", *trigger.args)
    assert out.stdout, out.stderr
    fired = {f["rule"] for f in json.loads(out.stdout)["findings"]}
    assert trigger.rule in fired
