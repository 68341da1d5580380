"""What the commands print for people never shows a Python repr (a dict, a list, a tuple, None): the text views of
the main commands on the demo bundle, on two written bundles and on a written capture that has every part of the
pcap summary (DSCP and ECN counts, other traffic on the RoCE class, pause frames, flows, periodic bursts)."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from rdmatool.cli import app
from tests.capture.build import cnp, pfc_frame, roce, tcp, write
from tests.helpers import REPO
from tests.pods import bundle as pods

DEMO = str(REPO / "examples" / "demo-bundle")
# `{'a': 1}`, `['a']`, `[]`, `{}`, `None`, `('a', 1)`, `(1, 2)`: what str() of a Python value looks like
REPR = re.compile(r"\{'|\['|\[\]|\{\}|\bNone\b|\('[^']*',|\(\d+(?:\.\d+)?, \d+(?:\.\d+)?\)")
runner = CliRunner()


@pytest.fixture(scope="module", autouse=True)
def one_diagnosis():
    """The three views of `diagnose` read one diagnosis of the demo: the rules run once, not once per view."""
    from rdmatool.diagnose import pipeline as diagnose

    made: dict = {}
    real = diagnose.diagnose_bundle

    def once(path, **kwargs):  # noqa: ANN001, ANN202 - diagnose_bundle's own signature
        if str(path) not in made:
            made[str(path)] = real(path, **kwargs)
        return made[str(path)]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(diagnose, "diagnose_bundle", once)
        yield


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("texts")
    # one second of RoCE with TCP bursts on its class every 100 ms and a pause in each period, a CNP, a CE mark:
    # each frame built once and written as bytes (scapy builds a frame in milliseconds)
    data, other, pause = bytes(roce()), bytes(tcp(dscp=26)), pfc_frame({3: 500})
    capture = [(10.5, bytes(cnp())), (10.6, bytes(roce(psn=9000, ecn=3, dscp=34)))]
    for ms in range(1000):
        t = 10.0 + ms / 1000
        capture += [(t, data), *((t + k / 10000, other) for k in range(1, 6) if ms % 100 < 5)]
        capture += [(t, pause)] if ms % 100 == 5 else []
    pod = pods.healthy_pod(gpus=4)
    pod.host("gpu02").port("mlx5_1").active_mtu = 1024
    return {"capture": str(write(root / "c.pcap", sorted(capture, key=lambda x: x[0]))),
            "before": str(pods.write(pods.healthy_pod(), root / "a")), "after": str(pods.write(pod, root / "b"))}


COMMANDS = {
    "diagnose": ["diagnose", DEMO, "--all"],
    "diagnose markdown": ["diagnose", DEMO, "--format", "markdown", "--all"],
    "diagnose commands": ["diagnose", DEMO, "--format", "commands"],
    "gate": ["gate", "--replay", DEMO],
    "bundle show": ["bundle", "show", DEMO],
    "bundle diff": ["bundle", "diff", "{before}", "{after}"],
    "bundle diff markdown": ["bundle", "diff", "{before}", "{after}", "--format", "markdown"],
    "pcap": ["pcap", "{capture}", "--link-gbps", "100"],
    "inventory show": ["inventory", "show", "-i", str(REPO / "examples" / "inventories" / "cluster.yaml")],
    "parse": ["parse", "mlnx_qos", str(REPO / "tests" / "fixtures" / "parsers" / "mlnx_qos" / "ofed23_dscp_trust.txt")],
    "plan bandwidth": ["plan", "bandwidth", "--params", "7e9", "--iterations-per-s", "1", "--nodes", "8", "--bundle",
                       DEMO],
    "plan checkpoint": ["plan", "checkpoint", "--size", "100GB", "--interval", "1h", "--write-gbps", "100"],
    "config show": ["config", "show"],
    "doctor": ["doctor"],
}


@pytest.mark.parametrize("name", COMMANDS)
def test_a_text_view_shows_no_python_repr(name: str, written: dict[str, str]) -> None:
    args = [arg.format(**written) for arg in COMMANDS[name]]
    # wide, so that a repr is never split over two lines; no configuration file, so that the output is the same
    result = runner.invoke(app, args, env={"COLUMNS": "200", "RDMATOOL_CONFIG": ""})
    assert result.exit_code in (0, 1), result.output
    text = result.stdout + result.stderr
    assert len(text.strip().splitlines()) >= 2, text  # the view was printed
    found = [line for line in text.splitlines() if REPR.search(line)]
    assert not found, "\n".join(found)


def test_the_pattern_finds_what_str_of_a_python_value_prints() -> None:
    for value in ({"26": 1000}, ["Polling", "Sleep"], [], {}, None, ("a", 1), (1, 2), (0.5, 1.0)):
        assert REPR.search(f"DSCP {value} on mlx5_0"), value
    for text in ("ECT(0) ×1000, CE ×0", "(rdmatool docs tuning §2.5, row 6)", "not in {Polling, Sleep}", "Nonempty",
                 "rows (1 of 2)", "gpu[01-04]"):
        assert not REPR.search(text), text
