"""Citations in the code and the playbooks point at places that exist in docs/tuning.md and say what is relied on.

The code and the playbooks cite `§N.N` (a section), `§1.3 item N`, `row N` (a row of the §7 decision table) and
source labels `[C4]` (the list of §8). Each one must resolve in docs/tuning.md, and every markdown document they
name must be in the repository (a path as written, a bare file name anywhere in it). What an operator reads (a
finding's text, a suggestion's rationale) cites `rdmatool docs NAME PLACE`: a document the package ships (docs/tuning.md
is a link to it), a place that `rdmatool docs` prints.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rdmatool import docs_data
from rdmatool.cli import app
from tests.helpers import REPO

DOC = Path(docs_data.path("tuning"))  # the shipped file, which docs/tuning.md links to
SHIPPED_CITATION = re.compile(r"rdmatool docs ([\w-]+)([^()\"]*)")
SECTION = re.compile(r"§(\d+(?:\.\d+)?)(?:\s+item\s+(\d+))?(?:\s+\"([^\"]+)\")?")
ROWS = re.compile(r"\brows?\s+(\d+(?:\s*(?:,\s*and|,|and|/)\s*\d+)*)")
LABEL = re.compile(r"\[(C\d+[a-z]?)\]")
MARKDOWN = re.compile(r"(?<![\w.-])((?:/|\.\./)?(?:[\w.-]+/)*[\w.-]+\.md)\b")


def _cited_files() -> list[Path]:
    return sorted([*(REPO / "rdmatool").rglob("*.py"), *(REPO / "playbooks").glob("*.y*ml")])


def _doc() -> dict:
    """docs/tuning.md as {section number: its text}, the §7 row numbers, the item numbers per section, the labels."""
    sections: dict[str, str] = {}
    current = None
    for line in DOC.read_text().splitlines():
        heading = re.match(r"^#{2,3} (\d+(?:\.\d+)?)\.? ", line)
        if heading:
            current = heading.group(1)
            sections[current] = ""
            major = current.split(".")[0]
            if major != current:
                sections[major] = sections.get(major, "")
        elif current is not None:
            sections[current] += line + "\n"
            if "." in current:
                sections[current.split(".")[0]] += line + "\n"
    rows = {int(m) for m in re.findall(r"^\| (\d+) \|", sections.get("7", ""), re.M)}
    items = {name: {int(m) for m in re.findall(r"^(\d+)\. ", text, re.M)} for name, text in sections.items()}
    labels = set(LABEL.findall(sections.get("8", "")))
    return {"sections": sections, "rows": rows, "items": items, "labels": labels}


def _citations() -> list[tuple[str, str, str]]:
    """(file:line, kind, what) for every citation in the code and the playbooks."""
    out = []
    for path in _cited_files():
        for number, line in enumerate(path.read_text().splitlines(), 1):
            where = f"{path.relative_to(REPO)}:{number}"
            for m in SECTION.finditer(line):
                out.append((where, "section", m.group(1)))
                if m.group(2):
                    out.append((where, "item", f"{m.group(1)}/{m.group(2)}"))
                if m.group(3):
                    out.append((where, "phrase", f"{m.group(1)}/{m.group(3)}"))
            for m in ROWS.finditer(line):
                out.extend((where, "row", n) for n in re.findall(r"\d+", m.group(1)))
            out.extend((where, "label", label) for label in LABEL.findall(line))
    return out


def test_the_code_and_the_playbooks_do_cite_the_tuning_reference() -> None:
    kinds = {kind for _, kind, _ in _citations()}
    assert {"section", "item", "phrase", "row", "label"} <= kinds
    assert len(_citations()) > 100


def test_every_citation_resolves_in_docs_tuning_md() -> None:
    doc = _doc()
    broken = []
    for where, kind, what in _citations():
        if kind == "section":
            ok = what in doc["sections"]
        elif kind == "item":
            section, item = what.split("/")
            ok = int(item) in doc["items"].get(section, set())
        elif kind == "phrase":
            section, phrase = what.split("/", 1)
            ok = phrase in doc["sections"].get(section, "")
        elif kind == "row":
            ok = int(what) in doc["rows"]
        else:
            ok = what in doc["labels"]
        if not ok:
            broken.append(f"{where}: {kind} {what}")
    assert not broken, "citations that docs/tuning.md does not have:\n" + "\n".join(broken)


def test_the_decision_table_is_complete_and_in_order() -> None:
    text = _doc()["sections"]["7"]
    numbers = [int(m) for m in re.findall(r"^\| (\d+) \|", text, re.M)]
    assert numbers == list(range(1, 23))


def test_every_markdown_document_cited_is_in_the_repository() -> None:
    documents = set()
    for folder, subfolders, files in os.walk(REPO):
        subfolders[:] = [d for d in subfolders if not d.startswith(".") and d != "__pycache__"]
        documents |= {(Path(folder) / f).relative_to(REPO).as_posix() for f in files if f.endswith(".md")}
    assert "docs/tuning.md" in documents
    names = {Path(d).name for d in documents}
    missing = []
    for path in _cited_files():
        for number, line in enumerate(path.read_text().splitlines(), 1):
            for cited in MARKDOWN.findall(line):
                if cited not in documents and ("/" in cited or cited not in names):
                    missing.append(f"{path.relative_to(REPO)}:{number}: {cited}")
    assert not missing, "documents the reader does not have:\n" + "\n".join(missing)


def test_no_comment_leans_on_unchecked_memory() -> None:
    flagged = []
    for path in _cited_files():
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if re.search(r"from memory|\[U[:\]]|verify\]", line, re.I):
                flagged.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
    assert not flagged, "\n".join(flagged)


# What the code computes from a cited place, and what that place must therefore say.
RELIED_ON = [
    ("1.1", ["DSCP 26", "priority 3", "DSCP 48", "strict", "TOS = DSCP × 4 + ECN", "106"]),
    ("1.2", ["qos_config.j2", "TC1"]),
    ("1.3", ["--trust dscp", "--dscp2prio set,26,3", "cma_roce_tos", "roce_np/enable", "roce_rp/enable",
             "--cable_len", "7 m"]),
    ("2.3", ["BDP = R × RTT / 8", "RTT 10 µs", "Suggested computation", "Kmin = clamp(BDP/7, low = 10 KB, "
             "high = 0.5·T_xoff)", "Kmax = min(2·BDP, 0.8·T_xoff)", "Kmax = max(Kmax, Kmin + 2·MTU)", "17,857",
             "160,000"]),
    ("2.4", ["T = α·B / (1 + m·α)", "Kmin < Kmax < T_xoff", "1 MB"]),
    ("3.1", ["(301 + 2.16 · cable_m) · max(R_Gbps, 40) + 2.72 · MTU", "1.98", "394", "9216", "46,080", "18,432",
             "64,512"]),
    ("3.4", ["One lossless priority", "headroom block per port"]),
    ("4", ["`cnp_dscp` / `cnp_802p_prio`", "48 / 6", "notification point", "reaction point"]),
    ("6.2", ["90 %", "2 QPs", "64 KB"]),
]
ROW_SAYS = {
    1: ["DSCP 26", "PFC on the same priority 3"], 2: ["trust"], 3: ["roce_np/enable/3"], 4: ["roce_rp/enable/3", "48"],
    5: ["TOS 104 instead of 106"], 6: ["Kmax = min(2·BDP, 0.8·T_xoff)", "5 % → 20 %", "100 %"], 7: ["Raise Kmin"],
    9: ["XOFF trigger"], 10: ["cable_length", "--cable_len"], 11: ["out_of_buffer"], 12: ["out_of_sequence"],
    13: ["PFC storm"], 14: ["deadlock"], 15: ["head-of-line"], 16: ["two or more lossless priorities"],
    17: ["SymbolErrorCounter", "LinkErrorRecoveryCounter"], 18: ["PortXmitWait"],
    19: ["PortXmitDiscards", "ExcessiveBufferOverrunErrors"], 20: ["90 %"], 21: ["flaps"], 22: ["rp_cnp_ignored"],
}


@pytest.mark.parametrize(("section", "phrases"), RELIED_ON)
def test_cited_sections_say_what_the_code_relies_on(section: str, phrases: list[str]) -> None:
    text = _doc()["sections"][section]
    for phrase in phrases:
        assert phrase.lower() in text.lower(), (section, phrase)


def test_cited_rows_say_what_the_playbooks_rely_on() -> None:
    rows = {int(m.group(1)): m.group(0) for m in re.finditer(r"^\| (\d+) \|.*$", _doc()["sections"]["7"], re.M)}
    for number, phrases in ROW_SAYS.items():
        for phrase in phrases:
            assert phrase.lower() in rows[number].lower(), (number, phrase)


def test_operator_facing_citations_name_the_document() -> None:
    """What an operator reads (a finding's text, a suggestion's rationale) says which document a row or § is in."""
    from rdmatool.rules import playbook
    from rdmatool.tune.suggest.context import REF

    assert REF == "rdmatool docs tuning"
    unnamed = []
    for rule in playbook.load_dir(REPO / "playbooks"):
        for text in (rule.symptom, rule.cause, rule.check, rule.fix):
            for group in re.findall(r"\(([^()]*)\)", text):
                if (ROWS.search(group) or "§" in group) and not group.startswith(REF + " "):
                    unnamed.append(f"{rule.source}: ({group})")
            assert "docs/tuning.md" not in text, f"{rule.source}: an installed rdmatool has no docs/ folder"
    assert not unnamed, "\n".join(unnamed)


def _shipped_citations() -> list[tuple[str, str, str]]:
    """(file:line, document, places) for every `rdmatool docs NAME PLACES` in the playbooks' texts and the
    suggestions' rationales (REF in the code)."""
    out = []
    for path in sorted((REPO / "playbooks").glob("*.yaml")):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if not line.lstrip().startswith("#"):
                out += [(f"{path.name}:{number}", m.group(1), m.group(2)) for m in SHIPPED_CITATION.finditer(line)]
    for path in sorted((REPO / "rdmatool" / "tune" / "suggest").glob("*.py")):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            out += [(f"{path.name}:{number}", "tuning", m.group(1)) for m in re.finditer(r"\{REF\}([^()\"]*)", line)]
    return out


def test_every_shipped_citation_resolves_to_a_shipped_document_and_its_place() -> None:
    cited = _shipped_citations()
    assert sum(".yaml:" in where for where, _, _ in cited) > 50 and sum(".py:" in where for where, _, _ in cited) >= 9
    broken = []
    for where, name, places in cited:
        try:
            sections, rows = docs_data.places(name, places)
        except (KeyError, ValueError) as exc:
            broken.append(f"{where}: {exc}")
            continue
        doc = docs_data.load(name)
        broken += [f"{where}: {name} §{s} is not a heading" for s in sections
                   if not re.match(rf"^#+ {re.escape(s)}\.? ", doc.lines[doc.sections[s][0]])]
        broken += [f"{where}: {name} row {r} is not a row of the §7 table" for r in rows
                   if doc.lines[doc.table[0]] != "## 7. Decision table" or not doc.lines[doc.rows[r]].startswith(f"| {r} |")]
    assert not broken, "\n".join(broken)


def test_docs_prints_what_a_finding_cites_and_refuses_a_place_it_lacks() -> None:
    runner = CliRunner()
    listed = runner.invoke(app, ["docs"])
    assert listed.exit_code == 0 and listed.stdout.split()[0] == "tuning"
    cited = runner.invoke(app, ["docs", "tuning", "§2.5,", "row", "6"])  # a finding's citation, as written
    assert cited.exit_code == 0, cited.output
    lines = cited.stdout.splitlines()
    assert lines[0] == "### 2.5 Pauses against marks" and "## 7. Decision table" in lines
    assert [line.split(" |")[0] for line in lines if re.match(r"^\| \d+ \|", line)] == ["| 6"]
    assert "### 2.6" not in cited.stdout  # the section ends at the next heading of its level
    whole = runner.invoke(app, ["docs", "tuning"])
    assert whole.exit_code == 0 and whole.stdout == DOC.read_text()
    assert runner.invoke(app, ["docs", "tuning", "--path"]).stdout.strip() == str(DOC)
    for args, says in ((["docs", "tuning", "§11"], "no §11"), (["docs", "tuning", "row", "23"], "no row 23"),
                       (["docs", "tuning", "cabling"], "names no section"), (["docs", "manual"], "no document")):
        refused = runner.invoke(app, args)
        assert refused.exit_code == 2 and says in refused.output and "Traceback" not in refused.output, args


def test_the_tuning_reference_is_package_data_and_docs_tuning_md_is_it() -> None:
    import fnmatch

    assert (REPO / "docs" / "tuning.md").resolve() == DOC.resolve()
    assert DOC.resolve().parent == (REPO / "rdmatool" / "docs_data").resolve()
    section = (REPO / "pyproject.toml").read_text().split("[tool.setuptools.package-data]", 1)[1].split("\n[", 1)[0]
    shipped = re.findall(r'"([^"]+)"', re.search(r"^rdmatool = \[(.*?)\]", section, re.M).group(1))
    assert any(fnmatch.fnmatch("docs_data/tuning.md", pattern) for pattern in shipped), shipped
