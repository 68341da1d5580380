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


def test_the_watch_textfiles_and_json_lines_carry_device_text_as_characters(tmp_path, capsys) -> None:
    """A host's netdev and port state text (its output) in the watch's textfile labels and its JSON event lines;
    a target that cannot name a file is refused, named, never written elsewhere."""
    from rdmatool.cli.watch_cmd import _emit
    from rdmatool.watch import textfile
    from rdmatool.watch.history import History, Shape
    from rdmatool.watch.light import Reading

    history = History(Shape(20, 4, 5))
    for i in range(2):
        reading = Reading("gpu01", 100.0 + 10 * i, {(f"ens{HOSTILE}", "rx_pause_frames", 3): 100.0 * i},
                          {("mlx5_1/1", "port_state"): HOSTILE}, {})
        history.record(100.0 + 10 * i, [reading, Reading("../x", 100.0 + 10 * i, {("eth0", "rx_pause_frames", 3): 1.0})])
    finding = {"target": "gpu01", "rule": "watch_periodic_spike", "severity": "warning"}
    refused = textfile.write(tmp_path, history, ["gpu01", "../x"], ["gpu01", "../x"], [finding], 1e9)
    assert refused == ["../x"] and sorted(p.name for p in tmp_path.iterdir()) == ["rdmatool-gpu01.prom",
                                                                                   "rdmatool.prom"]
    node = (tmp_path / "rdmatool-gpu01.prom").read_bytes().decode("utf-8")  # encodable: no lone surrogate
    assert "\\\\e]52;c;cm0=" in node and not RAW.search(node.replace("\n", ""))
    assert node.count('value="e\\\\e]52') == 1  # the port state's text, once
    _emit({"event": "finding", "target": "gpu01", "entity": f"ens{HOSTILE}", "symptom": HOSTILE})
    line = capsys.readouterr().out
    assert line.count("\n") == 1 and not RAW.search(line) and "\\u001b]52" in line
