"""Outputs packs (format /3) as read: a pack's header checked as untrusted data (the format's, lengths that add up
to the file, at most `limits.target_outputs` entries, each entry's side data type-checked) and the packs read
lately kept, so that a pack's outputs, read one after the other, do not read and check the same file again."""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass

from rdmatool import files, limits
from rdmatool.bundle.manifest import one_line, shown_value
from rdmatool.bundle.names import PACK_FORMAT
from rdmatool.bundle.side_data import side_problem as _side_problem
from rdmatool.bundle.skipped import OutputSkipped, shown


@dataclass(frozen=True)
class _Pack:
    """An outputs pack as read: its signature then, its bytes, and each output's (start, end, side data) in them —
    or, for an output whose side data is of the wrong shape, the line that says so instead of the side data."""

    signature: list[int]
    data: bytes
    entries: dict[str, tuple[int, int, dict | str]]


# The packs read lately, by path, with the signature each was read at: a pack's outputs are read one after the
# other, and each would otherwise read and check the same file again. A few only (a pack may be megabytes).
_PACKS: dict[str, _Pack | tuple[list[int], str]] = {}  # or (signature, why it is unusable)
_PACKS_LOCK = threading.Lock()
_PACKS_KEPT = 4  # outputs are read pack after pack; a hostile bundle's 64 MiB packs keep 256 MiB at most


def _pack(path: str, where: str) -> _Pack:
    """The pack at `path` (named `where` in messages), read or as read lately at its current signature;
    OutputSkipped with the reason when it is not a regular file within the cap or not a pack."""
    try:
        signature = files.signature(os.stat(path, follow_symlinks=False))
    except FileNotFoundError:
        raise OutputSkipped(f"{shown(where)}: disappeared while reading; skipped") from None
    except OSError as exc:
        raise OutputSkipped(f"{shown(where)}: unreadable ({exc.strerror or exc}); skipped") from None
    with _PACKS_LOCK:
        known = _PACKS.get(path)
    if isinstance(known, _Pack) and known.signature == signature:
        return known
    if isinstance(known, tuple) and known[0] == signature:
        raise OutputSkipped(known[1])
    try:
        data, signature = files.read_regular_signed(path)  # the signature of what was read
        known = _Pack(signature, data, _pack_entries(data, where))
    except FileNotFoundError:
        raise OutputSkipped(f"{shown(where)}: disappeared while reading; skipped") from None
    except files.UnsafeFileError as exc:
        known = (signature, f"{shown(where)}: {exc.reason}; skipped")
    except OutputSkipped as exc:
        known = (signature, exc.reason)
    with _PACKS_LOCK:
        if len(_PACKS) >= _PACKS_KEPT:
            _PACKS.clear()
        _PACKS[path] = known
    if isinstance(known, tuple):
        raise OutputSkipped(known[1])
    return known


def _pack_entries(data: bytes, where: str) -> dict[str, tuple[int, int, dict | str]]:
    """Each output of a pack: (start, end, side data or what is wrong with it). OutputSkipped, naming the pack and
    the key, when the header is not the format's, or the lengths it declares are not the file's."""
    named = shown(where)
    end = data.find(b"\n")
    if end < 0:
        raise OutputSkipped(f"{named}: no header line; skipped")
    most = limits.value("target_outputs")
    if data.count(b'"name"', 0, end) > most:  # counted before parsing: a million entries cost minutes downstream
        raise OutputSkipped(f"{named}: the header lists more than {most} outputs (limits.target_outputs); skipped")
    try:
        header = json.loads(data[:end].decode("utf-8"))
    except (ValueError, RecursionError) as exc:
        raise OutputSkipped(f"{named}: unreadable header ({one_line(exc)}); skipped") from None
    if not isinstance(header, dict) or header.get("format") != PACK_FORMAT:
        found = header.get("format") if isinstance(header, dict) else header
        raise OutputSkipped(f"{named}: header format {shown_value(found)} is not {PACK_FORMAT!r}; skipped")
    outputs = header.get("outputs")
    if not isinstance(outputs, list):
        raise OutputSkipped(f"{named}: header key 'outputs': expected a list, got {shown_value(outputs)}; skipped")
    if len(outputs) > most:  # the count above misses names written with escapes (a parse of the capped header)
        raise OutputSkipped(f"{named}: the header lists more than {most} outputs (limits.target_outputs); skipped")
    entries: dict[str, tuple[int, int, dict | str]] = {}
    position = end + 1
    for k, entry in enumerate(outputs):
        if not isinstance(entry, dict):
            raise OutputSkipped(f"{named}: header outputs[{k}]: expected an object; skipped")
        length, name = entry.get("bytes"), entry.get("name")
        if isinstance(length, float) and length.is_integer():  # JSON Schema's integer: 7.0 is 7 (another writer's)
            length = int(length)
        if isinstance(length, bool) or not isinstance(length, int) or length < 0:
            raise OutputSkipped(f"{named}: header outputs[{k}] key 'bytes': expected a length, got "
                                f"{shown_value(length)}; skipped")
        if not isinstance(name, str):
            raise OutputSkipped(f"{named}: header outputs[{k}] key 'name': expected a string, got "
                                f"{shown_value(name)}; skipped")
        if name in entries:
            raise OutputSkipped(f"{named}: header outputs[{k}]: {shown_value(name)} named twice; skipped")
        side = {key: value for key, value in entry.items() if key not in _PACK_KEYS}
        problem = _side_problem(side)
        entries[name] = (position, position + length, side if problem is None else
                         f"{named}: output {shown_value(name)}: {problem}; skipped")
        position += length
    if position != len(data):
        raise OutputSkipped(f"{named}: the header accounts for {position} bytes, the file has {len(data)}; skipped")
    return entries


_PACK_KEYS = ("name", "bytes")
