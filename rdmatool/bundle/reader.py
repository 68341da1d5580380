"""The outputs of a bundle, read as untrusted data: regular files only (never through a symlink), each within the size
cap, side data type-checked; an output that cannot be read is skipped with a one-line reason and the others go on.

A target's outputs of a snapshot are in its outputs pack `snapshots/<i>/<target>.outputs` (format /3: one file, a
JSON header line with each output's name, length and side data, then the raw outputs), in its target folder
`snapshots/<i>/<target>/` (formats /1 and /2), or both (a pack's output wins over a folder's file of the same name).
In a folder, an output's side data is the folder's `outputs.json` entry where the folder has that file (/2), else
its own side file `<stem>.json` (/1): decided per folder, so a merge of /1, /2 and /3 shards reads alike.

An output is named by a path either way: `<folder>/<stem>.txt`, or `<pack>/<stem>.txt` inside its pack (the pack is a
regular file, never a folder: `packed_in` tells which). The scan lists the packs without opening them (a reader that
trusts a pack's signature need not); `expanded` lists their outputs."""

from __future__ import annotations

import contextlib
import gc
import json
import os
import stat
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from rdmatool import files, limits
from rdmatool.bundle.manifest import one_line, read_manifest, shown_value
from rdmatool.bundle.names import OUTPUTS_FILE, PACK_SUFFIX, QUALIFIER, STEM, TARGET_NAME
from rdmatool.bundle.packs import _pack, _pack_entries  # noqa: F401 - _pack_entries: the tests check headers here
from rdmatool.bundle.peers import PERFTEST, bundle_peers, per_peer_qualifier
from rdmatool.bundle.side_data import side_problem as _side_problem
from rdmatool.bundle.skipped import OutputSkipped
from rdmatool.bundle.skipped import shown as _shown
from rdmatool.errors import BundleError
from rdmatool.model import CommandResult


@dataclass(frozen=True)
class BundleEntry:
    snapshot: int
    target: str
    result: CommandResult


@dataclass
class Bundle:
    path: Path
    manifest: dict  # as `read_manifest` normalised it
    entries: list[BundleEntry] = field(default_factory=list)
    # One line per file or folder that was not read, with the reason ("snapshots/0/gpu01/ibstat.txt: not a regular
    # file (symlink); skipped"), in the order met.
    skipped: list[str] = field(default_factory=list)

    @property
    def targets(self) -> list[dict]:
        return self.manifest.get("targets") or []

    @property
    def failures(self) -> list[dict]:
        return self.manifest.get("failures") or []


def read(path: str | Path) -> Bundle:
    """Load a bundle (manifest + every raw output); BundleError with the path when the bundle as a whole is foreign or
    corrupt, a line in `skipped` for each output that is not read."""
    root = Path(path)
    bundle = Bundle(root, read_manifest(root))
    for index, target, raw in list_outputs(root, bundle.skipped):
        try:
            bundle.entries.append(BundleEntry(index, target, read_result(target, raw)))
        except OutputSkipped as exc:
            bundle.skipped.append(exc.reason)
    return bundle


# ------------------------------------------------------------------------------------------------ the manifest


def list_outputs(root: Path, skipped: list[str] | None = None) -> list[tuple[int, str, Path]]:
    """(snapshot, target, raw file) of every raw output, in the bundle's canonical order (snapshot, target, file);
    what is not read is reported in `skipped` (see `scan_outputs`)."""
    return [(index, target, Path(raw)) for index, target, raw, _, _ in scan_outputs(root, skipped)]


def scan_outputs(root: Path, skipped: list[str] | None = None
                 ) -> list[tuple[int, str, str, list[int], list[int] | None]]:
    """(snapshot, target, raw path, raw (size, mtime_ns), side (size, mtime_ns) or None) of every raw output, in the
    canonical order — one directory read per target (scandir), because a 1,000-host bundle has 50,000 files.

    Nothing is followed through a symlink, and only regular files within the size cap are listed; every other
    snapshot folder, target folder or output is left out with a one-line reason appended to `skipped` (when given).
    A pack's outputs are listed from its header (read here); the rest of the contents are not read: a side file
    of the wrong shape is found by `read_result`."""
    notes = skipped if skipped is not None else []
    return expanded(scan(root, notes), notes)[0]


@dataclass
class Scan:
    """What one read of a bundle's folders found: the outputs (`scan_outputs`), and the other regular files of the
    target folders (a packet capture `capture.<device>.pcap`), so that whoever looks for those need not read the
    folders again."""

    outputs: list[tuple[int, str, str, list[int], list[int] | None]]  # the target folders' outputs
    stems: list[str] = field(default_factory=list)  # each output's file name without `.txt`, in the same order
    # (snapshot, target, path, signature) of every outputs pack (format /3), in the canonical order; not opened
    packs: list[tuple[int, str, str, list[int]]] = field(default_factory=list)
    # (snapshot, target, file name, path) of every regular file of a target folder named neither *.txt nor *.json,
    # in the canonical order of the folders; None when a folder that is no snapshot of ours was left unread although
    # its name is all digits (`01`): a reader that would look into such a folder must list the bundle itself.
    others: list[tuple[int, str, str, str]] | None = None


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused for a while. Listing a fleet's bundle makes a million small lists and
    tuples, none of them part of a cycle, and every collection their allocations trigger walks all the objects
    alive: at 10,000 hosts that is a third of the scan's time."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def scan(root: Path, skipped: list[str] | None = None) -> Scan:
    """The bundle's target folders and outputs packs listed (`Scan`): one directory read per folder, one stat per
    output file and per pack, no file opened."""
    with collector_paused():
        return _scan(root, skipped)


def _scan(root: Path, skipped: list[str] | None) -> Scan:
    notes = skipped if skipped is not None else []
    snapshots_dir = root / "snapshots"
    try:
        mode = os.lstat(snapshots_dir).st_mode
    except FileNotFoundError:
        raise BundleError(f"{snapshots_dir}: missing") from None
    except OSError as exc:
        raise BundleError(f"{snapshots_dir}: unreadable ({one_line(exc)})") from None
    if not stat.S_ISDIR(mode):
        kind = "regular file" if stat.S_ISREG(mode) else files.kind_of(mode)
        raise BundleError(f"{snapshots_dir}: not a directory ({kind})")
    cap = files.max_output_bytes()
    found, found_stems = [], []
    others: list[tuple[int, str, str, str]] | None = []
    snap_dirs = []
    for entry in _entries(snapshots_dir, "snapshots", notes):
        index = _snapshot_index(entry.name)
        if not entry.is_dir(follow_symlinks=False):
            if index is not None:
                notes.append(f"{_shown('snapshots/' + entry.name)}: not a folder ({_kind(entry)}); skipped")
            continue  # a stray file beside the snapshot folders (a README) is none of ours
        if index is None:
            notes.append(f"{_shown('snapshots/' + entry.name)}: not a snapshot folder (named 0, 1, ...); skipped")
            if entry.name.isascii() and entry.name.isdigit():
                others = None
            continue
        snap_dirs.append((index, entry))
    stems: dict[str, bool] = {}  # which file names may name an output (_output_name)
    packs = []
    for index, snap_dir in sorted(snap_dirs, key=lambda x: x[0]):
        where = f"snapshots/{snap_dir.name}"
        target_dirs, target_packs = [], []
        for t in _entries(snap_dir.path, where, notes):
            if not t.is_dir(follow_symlinks=False):
                target = t.name[:-len(PACK_SUFFIX)] if t.name.endswith(PACK_SUFFIX) else None
                if target is None or not TARGET_NAME.fullmatch(target):
                    notes.append(f"{_shown(f'{where}/{t.name}')}: not a folder ({_kind(t)}); skipped")
                    continue
                signature = _regular_signature(t, f"{where}/{t.name}", cap, notes)
                if signature is not None:
                    target_packs.append((index, target, t.path, signature))
            elif not TARGET_NAME.fullmatch(t.name):
                notes.append(f"{_shown(f'{where}/{t.name}')}: not a target name; skipped")
            else:
                target_dirs.append((t.name, t.path))
        packs += sorted(target_packs)
        most = limits.value("target_outputs")
        for target, target_path in sorted(target_dirs):
            _target_folder(index, target, target_path, where, cap, most, stems, notes, others, found, found_stems)
    return Scan(found, found_stems, packs=packs, others=others)


def _target_folder(index: int, target: str, target_path: str, where: str, cap: int, most: int,
                   stems: dict[str, bool], notes: list[str], others: list | None, found: list, found_stems: list,
                   ) -> None:
    """One target folder's outputs (format /1 or /2) into `found` and `found_stems`, its captures into `others`:
    one directory read, one stat per file; what is not read is named in `notes`."""
    regular = stat.S_ISREG
    raws, sides = {}, {}
    listed = _entries(target_path, f"{where}/{target}", notes, at_most=2 * most + 64)
    if listed is None:  # counted as listed: a folder of a million files costs minutes downstream
        notes.append(f"{_shown(f'{where}/{target}')}: more than {most} outputs (limits.target_outputs); skipped")
        return
    for f in listed:
        name = f.name
        if name.endswith(".txt"):
            raws[name] = f
        elif name.endswith(".json"):
            sides[name[:-5]] = f
        elif others is not None and f.is_file(follow_symlinks=False):
            others.append((index, target, name, f.path))
    folder_side = sides.get(_OUTPUTS_STEM)
    shared_sig = None
    if folder_side is not None:
        # Format /2: one side file for the folder, so one stat; an unusable one leaves the folder unread,
        # as an unusable side file leaves its output unread.
        shared_sig = _regular_signature(folder_side, f"{where}/{target}/{OUTPUTS_FILE}", cap, notes)
        if shared_sig is None:
            return
    for raw_name in sorted(raws):
        raw = raws[raw_name]
        stem = raw_name[:-4]
        if not _output_name(stem, stems):
            notes.append(f"{_shown(f'{where}/{target}/{raw_name}')}: not an output file name; skipped")
            continue
        try:  # the common case inline (a regular file within the cap); anything else is said below
            st = raw.stat(follow_symlinks=False)
            raw_sig = [st.st_size, st.st_mtime_ns] if regular(st.st_mode) and st.st_size <= cap else None
        except OSError:
            raw_sig = None
        if raw_sig is None:
            raw_sig = _regular_signature(raw, f"{where}/{target}/{raw_name}", cap, notes)
            if raw_sig is None:
                continue
        side = None if folder_side is not None else sides.get(stem)
        side_sig = shared_sig
        if side is not None:
            try:
                st = side.stat(follow_symlinks=False)
                side_sig = [st.st_size, st.st_mtime_ns] if regular(st.st_mode) and st.st_size <= cap else None
            except OSError:
                side_sig = None
            if side_sig is None:
                side_sig = _regular_signature(side, f"{where}/{target}/{side.name}", cap, notes)
                if side_sig is None:
                    continue  # an output whose side file is unusable is not read at all
        found.append((index, target, raw.path, raw_sig, side_sig))
        found_stems.append(stem)


_OUTPUTS_STEM = OUTPUTS_FILE[:-len(".json")]


def _output_name(stem: str, known: dict[str, bool]) -> bool:
    """Whether `stem` may name an output (STEM), decided once per name: every target of a fleet has the same few."""
    ok = known.get(stem)
    if ok is None:
        ok = known[stem] = STEM.fullmatch(stem) is not None
    return ok


def expanded(scanned: Scan, skipped: list[str]) -> tuple[list[tuple], list[str]]:
    """Every output of the bundle, in the canonical order (snapshot, target, file name `<stem>.txt`), as
    (snapshot, target, path, raw signature, side signature), and each one's stem: the folders' outputs of the scan
    with the outputs of its packs, each pack's header read. A packed output is named `<pack>/<stem>.txt` and signed
    by its pack, which is its raw and its side file alike. An unusable pack, or one of its outputs, is named in
    `skipped`; a folder's output that its target's pack also has is left out, named there too."""
    if not scanned.packs:
        return scanned.outputs, scanned.stems
    blocks: dict[tuple[int, str], dict[str, tuple]] = {}
    for entry, stem in zip(scanned.outputs, scanned.stems):
        blocks.setdefault((entry[0], entry[1]), {})[stem] = entry
    stems_ok: dict[str, bool] = {}
    for index, target, path, _ in scanned.packs:
        where = f"snapshots/{index}/{target}{PACK_SUFFIX}"
        try:
            pack = _pack(path, where)
        except OutputSkipped as exc:
            skipped.append(exc.reason)
            continue
        block = blocks.setdefault((index, target), {})
        for stem in pack.entries:
            if not _output_name(stem, stems_ok):
                skipped.append(f"{_shown(where)}: output {shown_value(stem)} is not an output file name; skipped")
                continue
            if stem in block:
                skipped.append(f"{_shown(f'snapshots/{index}/{target}/{stem}.txt')}: also in {where}, whose output "
                               "is read; skipped")
            block[stem] = (index, target, f"{path}/{stem}.txt", pack.signature, pack.signature)
    outputs, stems = [], []
    for key in sorted(blocks):
        block = blocks[key]
        for stem in sorted(block, key=lambda x: x + ".txt"):  # a folder's order: by file name
            outputs.append(block[stem])
            stems.append(stem)
    return outputs, stems


def packed_in(raw: Path) -> Path | None:
    """The outputs pack an output named `raw` is in (`<pack>/<stem>.txt`), None when it is a file of a folder."""
    parent = raw.parent
    if not parent.name.endswith(PACK_SUFFIX):
        return None
    try:
        return parent if stat.S_ISREG(os.lstat(parent).st_mode) else None
    except OSError:
        return None


def _entries(path: str | os.PathLike, where: str, notes: list[str], at_most: int | None = None,
             ) -> list[os.DirEntry] | None:
    """A folder's entries; None when there are more than `at_most` (listing stops there)."""
    try:
        with os.scandir(path) as it:
            if at_most is None:
                return list(it)
            listed = []
            for entry in it:
                if len(listed) == at_most:
                    return None
                listed.append(entry)
            return listed
    except OSError as exc:
        notes.append(f"{_shown(where)}: unreadable folder ({exc.strerror or exc}); skipped")
        return []


def _kind(entry: os.DirEntry) -> str:
    """What a directory entry is, as the entry itself (a symlink is a symlink, wherever it points)."""
    try:
        mode = entry.stat(follow_symlinks=False).st_mode
    except OSError as exc:
        return f"unreadable: {exc.strerror or exc}"
    return "regular file" if stat.S_ISREG(mode) else files.kind_of(mode)


def _regular_signature(entry: os.DirEntry, name: str, cap: int, notes: list[str]) -> list[int] | None:
    """The signature of a regular file within the cap (never through a symlink); None, with a note, otherwise."""
    try:
        st = entry.stat(follow_symlinks=False)
    except OSError as exc:
        notes.append(f"{_shown(name)}: unreadable ({exc.strerror or exc}); skipped")
        return None
    reason = files.not_regular(st.st_mode)
    if reason is None and st.st_size > cap:
        reason = f"larger than {cap} bytes (RDMATOOL_MAX_OUTPUT_BYTES)"
    if reason is not None:
        notes.append(f"{_shown(name)}: {reason}; skipped")
        return None
    return files.signature(st)


def _snapshot_index(name: str) -> int | None:
    """The index a snapshot folder is named after (`0`, `1`, ...), None for any other name (`01`, `+1`, `١`)."""
    if name.isascii() and name.isdigit() and len(name) <= 9 and (name == "0" or not name.startswith("0")):
        return int(name)
    return None


def _relative(raw: Path) -> str:
    """`snapshots/<i>/<target>/<file>` of a file of a bundle (what messages name)."""
    return _shown("/".join(raw.parts[-4:]))


def read_result(target: str, raw: Path) -> CommandResult:
    """One output from its raw file and its side data (optional: its folder's `outputs.json` entry, else its own side
    file); OutputSkipped (a BundleError) with the reason when a file is not a regular file, too large, or the side
    data is not an object of the documented types."""
    parser, _, qualifier = raw.stem.partition(".")
    pack = packed_in(raw)
    if pack is not None:
        side, side_path, stdout = _packed(target, raw, pack)
    else:
        side, side_path = _side_of(raw)
        try:
            stdout = files.read_regular_text(raw)
        except FileNotFoundError:
            raise OutputSkipped(f"{_relative(raw)}: disappeared while reading; skipped") from None
        except files.UnsafeFileError as exc:
            raise OutputSkipped(f"{_relative(raw)}: {exc.reason}; skipped") from None
    qualifier = side.get("qualifier") or (qualifier or None)
    if qualifier is not None and not QUALIFIER.fullmatch(qualifier):
        where = side_path if side.get("qualifier") else raw
        raise OutputSkipped(f"{_relative(where)}: qualifier {shown_value(qualifier)} is not a device or port name; "
                            "skipped")
    if parser == PERFTEST:  # another writer's per-peer output reads as ours (rdmatool.bundle.peers)
        qualifier = per_peer_qualifier(target, qualifier, side.get("command") or "", stdout, bundle_peers(raw))
    exit_code = side.get("exit_code", 0)
    return CommandResult(
        target=target,
        parser=parser,
        command=side.get("command") or "",
        stdout=stdout,
        exit_code=exit_code,
        stderr=side.get("stderr") or "",
        qualifier=qualifier,
        started=side.get("started"),
        duration_s=side.get("duration_s"),
        error=side.get("error"),
    )


def side_signature(raw: Path) -> list[int] | None:
    """The signature of the file an output's side data is read from (its pack; else its folder's `outputs.json`
    where there is one, else its own side file), None when there is none: what the samples store records beside
    the raw's."""
    pack = packed_in(raw)
    if pack is not None:
        return files.signature_of(pack)
    shared = files.signature_of(raw.parent / OUTPUTS_FILE)
    return shared if shared is not None else files.signature_of(raw.with_suffix(".json"))


def raw_signature(raw: Path) -> list[int] | None:
    """The signature of the file an output's raw text is read from: its pack, or its own file."""
    return files.signature_of(packed_in(raw) or raw)


def _packed(target: str, raw: Path, pack: Path) -> tuple[dict, Path, str]:
    """A packed output's side data, the pack, and its raw text (decoded as a raw file is)."""
    where = f"snapshots/{pack.parent.name}/{pack.name}"
    read = _pack(str(pack), where)
    entry = read.entries.get(raw.stem)
    if entry is None:
        raise OutputSkipped(f"{_shown(where)}: no output {shown_value(raw.stem)} (changed while reading); skipped")
    start, end, side = entry
    if isinstance(side, str):
        raise OutputSkipped(side)
    text = read.data[start:end].decode("utf-8", "replace")
    if "\r" in text:  # as a raw file's text is read (files.read_regular_text)
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return dict(side), pack, text


def _side_of(raw: Path) -> tuple[dict, Path]:
    """The side data of one output (empty when it has none) and the file it came from."""
    folder_file = raw.parent / OUTPUTS_FILE
    doc = _folder_sides(folder_file)
    if doc is not None:
        entry = doc.get(raw.stem)
        if entry is None:
            return {}, folder_file
        if not isinstance(entry, dict):
            raise OutputSkipped(f"{_relative(folder_file)}: entry {shown_value(raw.stem)} must be a JSON object; "
                                "skipped")
        side = dict(entry)  # the folder's document is shared by its outputs: checked (and normalised) as a copy
        problem = _side_problem(side)
        if problem:
            raise OutputSkipped(f"{_relative(folder_file)}: entry {shown_value(raw.stem)}: {problem}; skipped")
        return side, folder_file
    side_path = raw.with_suffix(".json")
    side = _json_object(side_path, "side file")
    if side is None:
        return {}, side_path
    problem = _side_problem(side)
    if problem:
        raise OutputSkipped(f"{_relative(side_path)}: {problem}; skipped")
    return side, side_path


def _json_object(path: Path, what: str) -> dict | None:
    """The JSON object a side data file holds, None when there is no such file; OutputSkipped with the reason when
    it is not a regular file within the cap, not UTF-8, not JSON or not an object."""
    try:
        text = files.read_regular_text(path, errors="strict")
    except FileNotFoundError:
        return None
    except files.UnsafeFileError as exc:
        raise OutputSkipped(f"{_relative(path)}: {exc.reason}; skipped") from None
    except ValueError:
        raise OutputSkipped(f"{_relative(path)}: not UTF-8; skipped") from None
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise OutputSkipped(f"{_relative(path)}: unreadable {what} ({one_line(exc)}); skipped") from None
    if not isinstance(doc, dict):
        raise OutputSkipped(f"{_relative(path)}: {what} must be a JSON object; skipped")
    return doc


# The `outputs.json` documents read lately, by path, with the signature each was read at: a folder's outputs are
# read one after the other, and each would otherwise parse the same document again.
_FOLDER_SIDES: dict[str, tuple[list[int], dict | None, str | None]] = {}
_FOLDER_SIDES_LOCK = threading.Lock()


def _folder_sides(path: Path) -> dict | None:
    """A folder's `outputs.json` as an object, None when the folder has none; OutputSkipped when it is unusable
    (then every output of the folder is skipped with the same reason)."""
    key = str(path)
    try:
        signature = files.signature(os.stat(key, follow_symlinks=False))
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise OutputSkipped(f"{_relative(path)}: unreadable ({exc.strerror or exc}); skipped") from None
    with _FOLDER_SIDES_LOCK:
        known = _FOLDER_SIDES.get(key)
    if known is None or known[0] != signature:
        try:
            known = (signature, _json_object(path, "outputs file"), None)
        except OutputSkipped as exc:
            known = (signature, None, exc.reason)
        with _FOLDER_SIDES_LOCK:
            if len(_FOLDER_SIDES) >= 64:
                _FOLDER_SIDES.clear()
            _FOLDER_SIDES[key] = known
    if known[2] is not None:
        raise OutputSkipped(known[2])
    return known[1]
