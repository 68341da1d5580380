"""JUnit XML for CI dashboards: one testsuite per gate stage, one testcase per node (and one for the fabric)."""

from __future__ import annotations

from xml.etree import ElementTree as ET

from rdmatool.gate.policy import HARD, UNFINISHED, StageResult
from rdmatool.report.shown import cleaned


def render(stages: list[StageResult], nodes: list[str], drain: list[str]) -> str:
    # XML 1.0 has no place for most control characters, and a lone surrogate cannot be encoded: what a device said
    # is written as visible text (rdmatool.report.shown)
    stages, nodes, drain = cleaned(stages), cleaned(nodes), cleaned(drain)
    root = ET.Element("testsuites", name="rdmatool gate")
    for stage in stages:
        suite = ET.SubElement(root, "testsuite", name=stage.name, time=f"{stage.duration_s:.3f}")
        cases = 0
        failures = 0
        for node in [*nodes, "fabric"]:
            mine = [f for f in stage.findings if f.target == node]
            case = ET.SubElement(suite, "testcase", classname=f"gate.{stage.name}", name=node)
            cases += 1
            hard = [f for f in mine if f.severity in HARD]
            if node in stage.excluded:
                ET.SubElement(case, "skipped", message="left out: unread, or condemned in an earlier stage")
            elif stage.status in ("skipped",):
                ET.SubElement(case, "skipped", message=stage.detail or "skipped")
            elif hard:
                failures += 1
                failure = ET.SubElement(case, "failure", message=hard[0].symptom, type=hard[0].rule)
                failure.text = "\n".join(f"[{f.severity.value}] {f.rule}: {f.symptom} — {f.cause}" for f in hard)
            elif stage.status in UNFINISHED and node != "fabric":
                ET.SubElement(case, "error", message=f"{stage.name}: {stage.status}: {stage.detail}")
            said = _nics(stage.figures or {}, node)
            if node in drain and stage.name == stages[-1].name:
                said.append("drain")
            if said:
                ET.SubElement(case, "system-out").text = "\n".join(said)
        suite.set("tests", str(cases))
        suite.set("failures", str(failures))
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def _nics(figures: dict, node: str) -> list[str]:
    """What a perftest stage says of a node's NICs: the device/port its pairs ran on, and each NIC it did not test
    with why."""
    lines = []
    tested = (figures.get("nics") or {}).get(node)
    if tested:
        lines.append(f"tested on {', '.join(tested)}")
    for device, why in ((figures.get("untested_nics") or {}).get(node) or {}).items():
        lines.append(f"not tested: {device} ({why})")
    return lines
