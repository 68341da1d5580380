"""`sminfo [SM_LID]`: which subnet manager a subnet has, its priority and its state (master, standby ...).

Command: `sminfo` (asks the master the local port knows) or `sminfo <lid>` (one call per SM to look at); the lines of
several calls may be concatenated. Emits per SM (entity `lid<LID>`, the LID of the SM's port, e.g. `lid1`; a LID is
unique only within its subnet, so the caller keeps which subnet it asked): `sm_guid` (text, `0x...`),
`sm_activity_count` (counter: a live master's keeps growing between two reads), `sm_priority` (0-15) and `sm_state`
(`master`, `standby`, `discovering`, `not_active`; raw_key sminfo's own word, `SMINFO_MASTER`). Two masters, or
none, is for the rules to say: the parser reports what each SM says of itself.
Example:
    sminfo: sm lid 1 sm guid 0xb83fd203001a2b3c, activity count 5421987 priority 15 state 3 SMINFO_MASTER
    -> Sample("lid1", "sm_state", text="master", raw_key="SMINFO_MASTER"), ...
Caveats: an SM answering twice (the master asked as `sminfo`, then again by its LID) keeps its first answer; the
others are counted, `parse_skipped_lines` entity `repeated_sm`. The state is read from its number (0-3, IBTA SMInfo) where the word is missing or unknown; a number
outside 0-3 keeps the printed word. `iberror:` lines (`iberror: failed: query`) and the shared tool failures
become `tool_error` (entity `host`); `ibwarn:` lines, `#` comments and the command line are skipped. Any other
line is a ParseError. An empty output is a ParseError (`rdmatool parse` exits 2): sminfo prints its line whenever
it gets an answer. The fixtures follow sminfo.c of infiniband-diags and its manual page.
"""

from __future__ import annotations

import re

from rdmatool.errors import ParseError
from rdmatool.model import Sample
from rdmatool.parsers._common import Noise, refuse_empty
from rdmatool.parsers._ibinfo import Collector, content_lines
from rdmatool.parsers._samples import HOST, tool_error

NAME = "sminfo"

_LINE = re.compile(
    r"^\s*sminfo:\s+sm\s+lid\s+(?P<lid>\d+)\s+sm\s+guid\s+(?P<guid>0x[0-9a-fA-F]+),?\s+"
    r"activity\s+count\s+(?P<act>\d+)\s+priority\s+(?P<prio>\d+)\s+state\s+(?P<state>\d+)(?:\s+(?P<word>\S+))?\s*$"
)
_ERROR = re.compile(r"\biberror:", re.IGNORECASE)
# SMInfo.SMState (IBTA): the number is what the SM answered; the word is sminfo's spelling of it.
_STATES = {0: "not_active", 1: "discovering", 2: "standby", 3: "master"}
_WORDS = {"SMINFO_NOTACT": 0, "SMINFO_DISCOVER": 1, "SMINFO_STANDBY": 2, "SMINFO_MASTER": 3}


def parse(text: str) -> list[Sample]:
    refuse_empty(NAME, "sminfo", text)
    out = Collector(NAME)
    noise = Noise()
    seen: set[int] = set()
    for line_no, line in content_lines(text, NAME, out):
        if _ERROR.search(line):
            out.add(tool_error(HOST, line.strip()), line_no, line)
            continue
        match = _LINE.match(line)
        if match is None:
            raise ParseError(NAME, line_no, line)
        if int(match["lid"]) in seen:  # the master asked as `sminfo` and again by its LID: one SM, first answer kept
            noise.skip("repeated_sm")
            continue
        seen.add(int(match["lid"]))
        out.extend(_samples(match), line_no, line)
    return out.samples + noise.samples()


def _samples(match: re.Match[str]) -> list[Sample]:
    entity = f"lid{int(match['lid'])}"
    number, word = int(match["state"]), match["word"]
    if word is not None and _WORDS.get(word) not in (None, number):
        word = None  # the number is what the SM answered; a word that contradicts it is not trusted
    state = _STATES.get(number, word or str(number))
    return [
        Sample(entity, "sm_guid", text=match["guid"].lower(), raw_key="sm guid"),
        Sample(entity, "sm_activity_count", int(match["act"]), raw_key="activity count"),
        Sample(entity, "sm_priority", int(match["prio"]), raw_key="priority"),
        Sample(entity, "sm_state", text=state, raw_key=word or "state"),
    ]
