"""The diagnosis pipeline as one call: bundle → facts → rules (+ baseline, profile) → findings → verdict."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pandas as pd

from rdmatool.capture.facts import analyse_with_captures
from rdmatool.diagnose.judges import Given, with_judges
from rdmatool.errors import PlaybookError
from rdmatool.model import Finding, Verdict
from rdmatool.outcome.failures import bundle_failures, tool_gaps
from rdmatool.outcome.result import DiagnoseResult, finding_ids
from rdmatool.outcome.verdict import no_data, verdict
from rdmatool.rules import engine, playbook
from rdmatool.table.analysis import Analysis
from rdmatool.table.facts import FactQuery
from rdmatool.table.frame import noise_notes
from rdmatool.topology.expected import load as load_topology
from rdmatool.topology.paths import bundle_pairs

_PACKAGE = Path(__file__).resolve().parent.parent  # rdmatool/


def default_playbooks() -> Path:
    """The shipped playbooks: beside the package in a checkout, under <prefix>/share when installed."""
    for candidate in (_PACKAGE.parent / "playbooks", Path(sys.prefix) / "share" / "rdmatool" / "playbooks"):
        if candidate.is_dir():
            return candidate
    raise PlaybookError("the shipped playbooks were not found; pass --playbooks DIR")


def failures_of(analysis: Analysis) -> list[dict]:
    """Targets that could not be collected, commands that failed, outputs that could not be parsed (the same list
    `bundle show` prints: rdmatool.outcome.failures) and the files of the bundle the reader skipped: the inconclusive part."""
    return bundle_failures(analysis.table.collection_failures, analysis.table.parse_failures) + \
        unread_files(getattr(analysis.table, "skipped", None) or [])


# `snapshots/<i>/<target>[.outputs][/<file>]: <why>; skipped`, as the reader names what it did not read.
_UNREAD = re.compile(r"snapshots/(?P<snapshot>\d+)/(?P<target>[A-Za-z0-9][A-Za-z0-9_.-]*?)(?:\.outputs)?"
                     r"(?:/(?P<file>[^/:]+))?: ")
_READ_ELSEWHERE = "whose output is read"  # a folder's copy of an output its pack holds: nothing is missing


def unread_files(skipped: list[str]) -> list[dict]:
    """The bundle's files the reader skipped (a name that is no output file, side data of the wrong type, a file too
    large), as failures of kind `unread`: a diagnosis of the rest must say what it did not see in every view, and a
    bundle whose only perftest outputs were skipped is never a pass. A copy of an output read from its pack is no
    loss and is left out."""
    out = []
    for line in skipped:
        if _READ_ELSEWHERE in line:
            continue
        where = _UNREAD.match(line)
        file = where["file"] if where and where["file"] else None
        of_output = file is not None and file.endswith((".txt", ".json")) and file != "outputs.json"
        out.append({"target": where["target"] if where else "", "kind": "unread",
                    "parser": file.partition(".")[0] if of_output else None,
                    "qualifier": None, "error": line, "snapshots": [int(where["snapshot"])] if where else []})
    return out


def nothing_to_judge(analysis: Analysis) -> str | None:
    """Why an analysis has nothing to judge, as one line, or None: no target said anything (no fact, not even an
    output its parser refused), whatever the manifest lists. The gate asks the same question."""
    answered = not FactQuery.of(analysis).empty() or bool(analysis.table.parse_failures)
    return no_data(len(analysis.table.targets), answered, failures_of(analysis))


def diagnose_analysis(
    analysis: Analysis, playbooks_dir: str | Path | None = None, baseline: pd.DataFrame | None = None,
    profile: dict | None = None, source: str = "", topology: str | Path | None = None, pairs: list | None = None,
    keep: Callable[[Finding], bool] | None = None,
) -> DiagnoseResult:
    """`topology`: an expected-topology file (rdmatool.topology.expected) the cabling is compared with; `pairs`:
    perftest pair results, judged by path class against the cabling (rdmatool.topology.paths); `keep`: the findings
    judged, when a selection of the bundle's targets is (rdmatool.bundle.select: not another host's cable)."""
    from rdmatool.tune import SUGGESTERS  # the calculators; imported late to keep `rdmatool parse` light

    rules = playbook.load_dir(playbooks_dir or default_playbooks(), site=profile)  # the site's RoCE / CNP class
    # The judges' verdicts are facts too (rdmatool.diagnose.judges); the cabling file is read before any rule runs.
    expected_topology = load_topology(topology) if topology else None
    analysis = with_judges(analysis, Given(expected_topology, pairs))
    findings = engine.evaluate(analysis, rules, baseline=baseline, profile=profile, suggesters=SUGGESTERS)
    if keep is not None:
        findings = kept_findings(findings, keep)
    failures = failures_of(analysis)
    notes = list(analysis.table.notes) + noise_notes(analysis.table.frame)
    if any(note.startswith(tuple("0123456789")) and "manifest's snapshot times" in note for note in notes):
        for finding in findings:  # a window between snapshots is an estimate: the evidence says whose
            if finding.evidence.get("window_s") is not None:
                finding.evidence["window_from"] = "manifest snapshot times"
    nothing = nothing_to_judge(analysis)
    gaps = tool_gaps(failures)  # a tool missing on a host warns, as in the gate and collect (rdmatool.outcome.verdict)
    judged = verdict(findings, [f for f in failures if f not in gaps], gaps=gaps)
    return DiagnoseResult(Verdict.INCONCLUSIVE if nothing else judged, findings, failures,
                          source=source, window_s=analysis.window_s, notes=notes, no_data=nothing,
                          hosts=[str(t.get("name")) for t in analysis.table.targets if t.get("kind", "host") == "host"])


def kept_findings(findings: list[Finding], keep: Callable[[Finding], bool]) -> list[Finding]:
    """The findings `keep` accepts; one explained by a finding left out stands on its own (its story is told)."""
    ids = finding_ids(findings)
    kept = {i for i, f in zip(ids, findings) if keep(f)}
    return [f if f.explained_by is None or f.explained_by in kept else replace(f, explained_by=None)
            for i, f in zip(ids, findings) if i in kept]


def diagnose_bundle(path: str | Path, on_skipped: Callable[[str], None] | None = None, **kwargs) -> DiagnoseResult:
    """Diagnose a bundle directory. Files of the bundle that were not read (not regular files, too large, side files
    of the wrong shape: see rdmatool.bundle) are passed one line each to `on_skipped` before the rules run: the
    diagnosis is of the rest, and whoever reads it must know what it did not see."""
    analysis = analyse_with_captures(path, kwargs.get("profile"))  # its packet captures too, on the site's class
    if on_skipped is not None:
        for line in analysis.table.skipped:
            on_skipped(line)
    kwargs.setdefault("pairs", bundle_pairs(path))  # a gate's or `perf run`'s pairs stored in the bundle
    return diagnose_analysis(analysis, source=str(path), **kwargs)
