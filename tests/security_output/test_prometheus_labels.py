"""A device's text in a Prometheus label value (an entity: netdev, port, device; an info state's text) is written as
characters: its controls shown, a lone surrogate made U+FFFD (it made the export raise UnicodeEncodeError), the
exposition format's own escapes (backslash, quote, line break) done by the client library. The watch's textfiles
label their series through the same EntityLabels and label_value."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from rdmatool.model import Verdict
from rdmatool.outcome.result import DiagnoseResult
from rdmatool.report import prometheus
from rdmatool.table.analysis import FACT_COLUMNS
from tests.security_output.test_every_view import RAW

HOSTILE = 'e\x1b]52;c;cm0=\x07\x9b\ud800"\n\\<script>'


def fact(entity: str, metric: str, value=np.nan, text=None, target: str = "gpu01") -> dict:
    return {**dict.fromkeys(FACT_COLUMNS), "target": target, "kind": "host", "entity": entity, "metric": metric,
            "value": value, "text": text, "flag": ""}


@pytest.fixture(scope="module")
def exposition() -> str:
    facts = pd.DataFrame([fact("mlx5_0/1", "netdev", text=HOSTILE), fact("mlx5_0/1", "port_state", text=HOSTILE),
                          fact(f"mlx5_{HOSTILE}/1", "rx_bytes", 5.0), fact(f"eth{HOSTILE}", "ecn_mode", text="on")],
                         columns=FACT_COLUMNS)
    text = prometheus.render(facts, DiagnoseResult(verdict=Verdict.PASS, findings=[], failures=[], source="b"))
    text.encode("utf-8")  # where the file is written: a lone surrogate raised here
    return text


def test_entity_and_state_labels_hold_no_raw_control(exposition: str) -> None:
    mine = [line for line in exposition.splitlines() if 'target="gpu01"' in line and "\\\\e]52" in line]
    assert len(mine) == 4, mine  # the netdev and port state infos, the counter's device, the ECN mode's netdev
    assert not RAW.search(exposition.replace("\n", ""))
    for line in mine:
        labels = line[line.index("{") + 1: line.rindex("}")]
        assert re.fullmatch(r'(\w+="(?:[^"\\\n]|\\[\\"n])*",?)*', labels), labels  # the format's escapes only
    assert '\\\\e]52;c;cm0=\\\\a\\\\x9b\ufffd\\"\\n\\\\<script>' in exposition
