"""`rdmatool bundle merge A B ... -o ALL`: the bundles of one collection split in shards (`collect --shard K/N` on N
machines, or `collect --local` on every node) made one bundle, which `diagnose ALL` reads as if one collector had
collected it all.

What is checked before anything is written, each refusal one line naming the bundle and why (BundleError):
- every input is a bundle of ours (the manifest's format and keys, as every reader checks them) and no input is
  given twice or is the output;
- the snapshots are aligned: every input has the same snapshot indexes, and each snapshot's time in the manifests
  (`started`, else `finished`) is within `max_skew_s` of the others' — shards of one run, not two nights;
- a target is in one input only, unless `prefer` says which input's data wins for it: `first` (the earliest listed
  input that has it), `last` (the latest listed), `newest` (the input that read it last). The loser's outputs,
  captures, failures and manifest entry for that target are left out, and the merged manifest's `merged_from` says
  which targets each input lost.

Rates: each target keeps its own read times (the side data's `started`, copied unchanged, and the samples store's
`time` column), so a shard that started a minute after another still has its rates over its own window. The merged
manifest's snapshot times are the earliest start and the latest finish over the inputs, as a collector records the
first and last read over its fleet. An output without a read time takes its rate window from the manifest: an
input with such outputs is refused when the merged manifest's window would differ from its own by more than 1 %.

The samples are not parsed again: each input's `samples.npz` is concatenated into the merged store as it is, its
string codes mapped into one pool and its outputs put in the bundle's canonical order. It is not checked against the
input's files here (that would stat every file of every shard): the merged bundle's reader checks every file
against it, as it checks any bundle, and parses again, alone, an output changed since it was stored or one the
store does not know of. An input without a usable store is parsed here. The files are hard-linked into the merged
bundle when it is on the inputs' filesystem (a bundle's files are never modified in place: every writer replaces a
file by renaming, so a link is as good as a copy and costs a directory entry; `copy=True` copies anyway), else
copied with their modification times. A link keeps the signature (size, mtime) the store recorded; a copy records
the copy's own signature, taken after its mtime was set, when the source was still the file the store describes —
so a filesystem with coarser timestamps does not make `diagnose ALL` parse everything again, and a source changed
since it was stored is parsed again rather than trusted. Only regular files are carried over (never a symlink, a
FIFO); each other entry is named in the notes.

The merged bundle is built in a hidden sibling directory and renamed into place (`BundleWriter.publish`): a merge
that fails for any reason leaves nothing under the final name, and an existing bundle there stays whole until the
new one is complete.
"""

from __future__ import annotations

import json
import math
import os
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import yaml

from rdmatool import __version__
from rdmatool.bundle import FORMAT, OUTPUTS_FILE, PACK_SUFFIX, TARGET_NAME, BundleWriter, collector_paused
from rdmatool.bundle.manifest import one_line, read_manifest, subnet_sweeps
from rdmatool.bundle.names import STEM
from rdmatool.bundle_ops.merge.columns import RunColumn as RunColumn
from rdmatool.bundle_ops.merge.columns import _merged_columns
from rdmatool.bundle_ops.merge.columns import (
    _row_runs as _row_runs,  # the tests check the row copies through here
)
from rdmatool.bundle_ops.merge.placing import _copy_files, _folders, _Linking, _Placer
from rdmatool.errors import BundleError
from rdmatool.present import hostlist
from rdmatool.table import samples_store
from rdmatool.table.sample_columns import epoch

PREFER = ("first", "last", "newest")
DEFAULT_MAX_SKEW_S = 300.0
# How far an untimed output's rate window may move when it takes the merged manifest's snapshot times instead of
# its own bundle's (a share of its own window).
WINDOW_TOLERANCE = 0.01
# A capture `rdmatool capture` put beside a target's outputs (`capture.<device>.pcap` and its side file): not an
# output of the store, carried over with its target.
_OUTPUT_FILE = re.compile(STEM.pattern + r"\.(txt|json)")
_CAPTURE = re.compile(r"capture\.[A-Za-z0-9][A-Za-z0-9_.:+-]*\.(pcap|pcapng|json)")


@dataclass(frozen=True)
class MergeOptions:
    prefer: str | None = None  # None: a target in two inputs is refused
    max_skew_s: float = DEFAULT_MAX_SKEW_S
    check_times: bool = True  # False: the same snapshot indexes are still required, their times are not compared
    copy: bool = False  # never hard-link


@dataclass
class MergeResult:
    path: Path
    inputs: int
    targets: int
    outputs: int
    linked: int = 0
    copied: int = 0
    dropped: dict[str, list[str]] = field(default_factory=dict)  # input -> targets another input's data replaced
    notes: list[str] = field(default_factory=list)  # one line each: what was left out or assumed


@dataclass
class _Input:
    path: Path
    manifest: dict  # as bundle.read_manifest normalised it
    outputs: dict[str, np.ndarray]  # the store's output columns
    strings: list[str]
    arrays: dict[str, np.ndarray]  # the store's row columns
    names: set[str]  # every target the input speaks of: manifest, outputs, failures
    snapshot_dirs: set[int] = field(default_factory=set)  # the snapshot folders on disk
    # (snapshot, target, [(file name, path, regular file?)], packed?) of every target folder — or, packed, of every
    # outputs pack, its one file in the snapshot folder: one directory read each, no stat
    folders: list[tuple[int, str, list[tuple[str, str, bool]], bool]] = field(default_factory=list)
    keep: set[str] = field(default_factory=set)  # the targets whose data comes from this input
    notes: list[str] = field(default_factory=list)

    def kept(self) -> np.ndarray:
        """Which of the stored outputs are of a kept target (one test per distinct target, not per output)."""
        targets = self.outputs["target"].tolist()
        wanted = {name: name in self.keep for name in dict.fromkeys(targets)}
        return np.fromiter(map(wanted.__getitem__, targets), dtype=bool, count=len(targets))


def merge(inputs: list[str | Path], out: str | Path, options: MergeOptions | None = None) -> MergeResult:
    """Merge `inputs` into the bundle `out` (see the module's docstring); BundleError, one line naming the bundle
    and why, when refused — nothing is written then."""
    options = options or MergeOptions()
    if options.prefer is not None and options.prefer not in PREFER:
        raise BundleError(f"--prefer {options.prefer!r}: expected one of {', '.join(PREFER)}")
    if not (isinstance(options.max_skew_s, int | float) and math.isfinite(options.max_skew_s)
            and options.max_skew_s >= 0):
        raise BundleError(f"--max-skew {options.max_skew_s!r}: expected a non-negative number of seconds")
    paths = _distinct(inputs, Path(out))
    # A merge makes millions of small lists and tuples (500,000 files to list and place), none of them in a cycle:
    # the garbage collector would walk them all again and again for nothing (see bundle.collector_paused).
    with collector_paused():
        return _merge(paths, out, options)


def _merge(paths: list[Path], out: str | Path, options: MergeOptions) -> MergeResult:
    if len(paths) > 1 and all((p / samples_store.STORE_NAME).is_file() for p in paths):
        # Reading a store (inflating it) and listing a shard's 20,000 folders wait on zlib and the kernel: two
        # inputs at a time. (An input without a store is parsed, on every core: then one at a time.)
        with ThreadPoolExecutor(2, thread_name_prefix="merge-load") as pool:
            loaded = list(pool.map(_load, paths))
    else:
        loaded = [_load(p) for p in paths]
    notes = [line for i in loaded for line in i.notes]
    indexes = _aligned_indexes(loaded)
    snapshots = _merged_snapshots(loaded, indexes, options, notes)
    dropped = _assign_targets(loaded, options.prefer)
    _check_untimed_windows(loaded, snapshots, notes)
    try:
        writer = BundleWriter(out)
    except OSError as exc:
        raise BundleError(f"{out}: cannot write the merged bundle here ({one_line(exc)})") from None
    try:
        result = _write(writer, loaded, snapshots, dropped, options)
        result.notes = notes + result.notes
        writer.publish(sync_each=False)
    except OSError as exc:
        writer.abort()
        raise BundleError(f"{writer.final}: cannot write the merged bundle ({one_line(exc)}); nothing written") \
            from None
    except BaseException:
        writer.abort()  # never a half merge under any name
        raise
    return result


# ------------------------------------------------------------------------------------------------ what is merged


def _distinct(inputs: list[str | Path], out: Path) -> list[Path]:
    if not inputs:
        raise BundleError("no bundle to merge")
    seen: dict[Path, Path] = {}
    final = out.resolve()
    for given in map(Path, inputs):
        real = given.resolve()
        if real in seen:
            raise BundleError(f"{given}: given twice (as {seen[real]} too)")
        if real == final or final.is_relative_to(real):
            raise BundleError(f"{given}: is the merged bundle -o {out} (or holds it); merge into a new path")
        seen[real] = given
    return list(seen.values())


def _load(path: Path) -> _Input:
    """An input's manifest (checked) and its stored samples as they are: not checked against its files here (that
    would stat every file of every shard), because the merged bundle's reader checks every file it links or copies
    against them — an output changed since it was stored is parsed again then, alone. An input without a usable
    store is parsed now."""
    manifest = read_manifest(path)
    snapshots_dir = path / "snapshots"
    if not snapshots_dir.is_dir() or snapshots_dir.is_symlink():
        raise BundleError(f"{snapshots_dir}: missing or not a directory; not a bundle to merge")
    notes = []
    stored = samples_store.load(path)
    if stored is not None:
        outputs, strings, arrays = stored.outputs, stored.strings, stored.arrays
    else:
        parsed = samples_store.load_or_parse(path, write_store=False)
        outputs, strings, arrays = parsed.outputs, parsed.strings, parsed.arrays
        notes.append(f"{path}: no current stored samples: its {len(outputs['rows'])} outputs were parsed")
    names = {t["name"] for t in manifest["targets"]}
    names.update(dict.fromkeys(outputs["target"].tolist()))
    names.update(f.get("target") for f in manifest["failures"] if isinstance(f.get("target"), str))
    snapshot_dirs, folders = _listing(snapshots_dir)
    return _Input(path, manifest, outputs, strings, arrays, names, snapshot_dirs=snapshot_dirs, folders=folders,
                  notes=notes)


def _listing(snapshots_dir: Path) -> tuple[set[int], list[tuple[int, str, list[tuple[str, str, bool]], bool]]]:
    """An input's snapshot folders, and the files of each target folder and the outputs packs that are carried
    over."""
    snapshot_dirs, folders = set(), []
    # Every target has the same few file names: whether a name is carried over is decided once per name.
    carried: dict[str, bool] = {}
    for snap in _dirs(snapshots_dir):
        if not _is_index(snap.name):
            continue  # not a snapshot folder: the input's reader names it
        snapshot_dirs.add(int(snap.name))
        for found in _entries(snap.path):
            if not found.is_dir(follow_symlinks=False):
                target = found.name[:-len(PACK_SUFFIX)]
                if found.name.endswith(PACK_SUFFIX) and TARGET_NAME.fullmatch(target):
                    folders.append((int(snap.name), target, [(found.name, found.path,
                                                              found.is_file(follow_symlinks=False))], True))
                continue  # anything else there the input's reader names
            entries = []
            for e in _entries(found.path):
                keep = carried.get(e.name)
                if keep is None:
                    keep = carried[e.name] = bool(_OUTPUT_FILE.fullmatch(e.name) or _CAPTURE.fullmatch(e.name))
                if keep:
                    entries.append((e.name, e.path, e.is_file(follow_symlinks=False)))
            folders.append((int(snap.name), found.name, entries, False))
    return snapshot_dirs, folders


def _without_side_file(i: _Input) -> int:
    """How many raw outputs of the kept targets have no side file on disk (so no read time), whatever the store
    says (it may be older than the files). A folder with an outputs.json (format /2) is taken to time its outputs:
    its entries are only known by reading it, and the store, checked by the merged bundle's reader, says the rest;
    so is a pack (format /3), whose header holds its outputs' side data."""
    count = 0
    for _, target, entries, packed in i.folders:
        if target in i.keep and not packed:
            names = {name for name, _, _ in entries}
            if OUTPUTS_FILE in names:
                continue
            count += sum(1 for name in names if name.endswith(".txt") and not name.startswith("capture.")
                         and name[:-4] + ".json" not in names)
    return count


def _is_index(name: str) -> bool:
    """A snapshot folder's name, as the reader takes it: `0`, `1`, ... (no sign, no leading zero)."""
    return name.isascii() and name.isdigit() and len(name) <= 9 and name == str(int(name))


def _aligned_indexes(loaded: list[_Input]) -> list[int]:
    """The snapshot indexes every input has (the manifest's, and its snapshot folders); refused when they differ:
    the inputs are not shards of one collection."""
    def indexes(i: _Input) -> list[int]:
        found = {s.get("index") for s in i.manifest["snapshots"]} | i.snapshot_dirs
        return sorted(x for x in found if isinstance(x, int) and not isinstance(x, bool))

    first = indexes(loaded[0])
    for other in loaded[1:]:
        theirs = indexes(other)
        if theirs != first:
            raise BundleError(f"{other.path}: snapshots {_shown_list(theirs)}, but {loaded[0].path} has "
                              f"{_shown_list(first)}: not shards of one collection")
    return first


def _snapshot_time(entry: dict | None, key: str | None = None) -> float:
    if not entry:
        return math.nan
    keys = (key,) if key else ("started", "finished")
    for k in keys:
        value = entry.get(k)
        if isinstance(value, str) and not math.isnan(epoch(value)):
            return epoch(value)
    return math.nan


def _merged_snapshots(loaded: list[_Input], indexes: list[int], options: MergeOptions, notes: list[str]
                      ) -> list[dict]:
    """Each snapshot of the merged manifest: the earliest start and the latest finish over the inputs; refused when
    one input's time is missing or further than `max_skew_s` from another's (unless times are not checked)."""
    merged = []
    for index in indexes:
        entries = [(i, next((s for s in i.manifest["snapshots"] if s.get("index") == index), None)) for i in loaded]
        times = [(i, _snapshot_time(entry)) for i, entry in entries]
        untimed = [i for i, t in times if math.isnan(t)]
        timed = [(i, t) for i, t in times if not math.isnan(t)]
        if options.check_times:
            if untimed:
                raise BundleError(f"{untimed[0].path}: snapshot {index} has no time in its manifest: the alignment "
                                  "cannot be checked (--ignore-times merges anyway)")
            early, late = min(timed, key=lambda x: x[1]), max(timed, key=lambda x: x[1])
            if late[1] - early[1] > options.max_skew_s:
                raise BundleError(f"{late[0].path}: snapshot {index} started {late[1] - early[1]:.0f} s after "
                                  f"{early[0].path}'s, more than --max-skew {options.max_skew_s:g} s: not one "
                                  "collection")
        elif timed and len({round(t, 3) for _, t in timed}) > 1:
            spread = max(t for _, t in timed) - min(t for _, t in timed)
            notes.append(f"snapshot {index}: the inputs' times are {spread:.0f} s apart (not checked: "
                         "--ignore-times)")
        starts = [(epoch(e["started"]), e["started"]) for _, e in entries
                  if e and isinstance(e.get("started"), str) and not math.isnan(epoch(e["started"]))]
        ends = [(epoch(e["finished"]), e["finished"]) for _, e in entries
                if e and isinstance(e.get("finished"), str) and not math.isnan(epoch(e["finished"]))]
        merged.append({"index": index, "started": min(starts)[1] if starts else None,
                       "finished": max(ends)[1] if ends else None})
    return merged


def _assign_targets(loaded: list[_Input], prefer: str | None) -> dict[str, list[str]]:
    """Which input's data each target comes from (`keep` of each input); the targets each input loses, by input.
    Refused when a target is in two inputs and `prefer` is None."""
    owners: dict[str, list[int]] = {}
    for k, i in enumerate(loaded):
        for name in i.names:
            owners.setdefault(name, []).append(k)
    shared = {name: ks for name, ks in owners.items() if len(ks) > 1}
    if shared and prefer is None:
        by_pair: dict[tuple[int, int], list[str]] = {}
        for name, ks in shared.items():
            by_pair.setdefault((ks[0], ks[1]), []).append(name)
        (a, b), names = min(by_pair.items())
        more = f" (and {len(shared) - len(names)} more in other inputs)" if len(shared) > len(names) else ""
        raise BundleError(f"{loaded[b].path}: target(s) {_folded(names)} also in {loaded[a].path}{more}: "
                          "--prefer first|last|newest says whose data wins")
    if prefer == "newest":
        # Who read a target last is decided on the inputs' files as they are now, not on stored samples that may
        # be older than a hand-edited output: the inputs concerned are checked against their files (and what
        # changed is parsed), which the merge otherwise leaves to the merged bundle's reader.
        for k in sorted({k for ks in shared.values() for k in ks}):
            _current(loaded[k])
    latest = _latest_reads(loaded, set(shared)) if prefer == "newest" else {}
    dropped: dict[str, list[str]] = {}
    for name, ks in owners.items():
        if len(ks) == 1 or prefer == "first":
            winner = ks[0]
        elif prefer == "last":
            winner = ks[-1]
        else:  # newest; a tie goes to the earlier listed input
            winner = max(ks, key=lambda k: (latest.get((k, name), -math.inf), -k))
        loaded[winner].keep.add(name)
        for k in ks:
            if k != winner:
                dropped.setdefault(str(loaded[k].path), []).append(name)
    return {path: sorted(names) for path, names in dropped.items()}


def _current(i: _Input) -> None:
    """The input's samples made current with its files (`samples_store.load_or_parse`, nothing written)."""
    parsed = samples_store.load_or_parse(i.path, write_store=False)
    i.outputs, i.strings, i.arrays = parsed.outputs, parsed.strings, parsed.arrays
    i.names |= set(parsed.outputs["target"].tolist())


def _latest_reads(loaded: list[_Input], names: set[str]) -> dict[tuple[int, str], float]:
    """(input, target) -> when that input last read the target: its outputs' latest read time, else the input's
    last snapshot time (a target without outputs, unreachable, was tried then)."""
    latest: dict[tuple[int, str], float] = {}
    for k, i in enumerate(loaded):
        last_snapshot = max((_snapshot_time(s) for s in i.manifest["snapshots"]), default=math.nan,
                            key=lambda t: -math.inf if math.isnan(t) else t)
        targets, times = i.outputs["target"], i.outputs["time"]
        for name in names & i.names:
            mine = times[targets == name]
            mine = mine[~np.isnan(mine)]
            t = float(mine.max()) if len(mine) else last_snapshot
            latest[(k, name)] = -math.inf if math.isnan(t) else t
    return latest


def _check_untimed_windows(loaded: list[_Input], snapshots: list[dict], notes: list[str]) -> None:
    """An output without a read time takes its rate window from the manifest's snapshot times: refused when the
    merged manifest's window would differ from its own bundle's by more than WINDOW_TOLERANCE."""
    if len(snapshots) < 2:
        return
    merged = _snapshot_time(snapshots[-1]) - _snapshot_time(snapshots[0])
    for i in loaded:
        untimed = max(int((np.isnan(i.outputs["time"]) & i.kept()).sum()), _without_side_file(i))
        if not untimed:
            continue
        own_first = _snapshot_time(next((s for s in i.manifest["snapshots"] if s.get("index") == snapshots[0]["index"]),
                                        None))
        own_last = _snapshot_time(next((s for s in i.manifest["snapshots"] if s.get("index") == snapshots[-1]["index"]),
                                       None))
        own = own_last - own_first
        if math.isnan(own) or math.isnan(merged):
            continue  # no window either way: the frame says so in its notes
        if abs(merged - own) > WINDOW_TOLERANCE * abs(own):
            raise BundleError(f"{i.path}: {untimed} output(s) carry no read time, so their rates would take the merged "
                              f"snapshot window ({merged:g} s) instead of their own ({own:g} s); refused")
        notes.append(f"{i.path}: {untimed} output(s) carry no read time: their rates use the merged snapshot times")


# ------------------------------------------------------------------------------------------------ the writing


def _write(writer: BundleWriter, loaded: list[_Input], snapshots: list[dict], dropped: dict[str, list[str]],
           options: MergeOptions) -> MergeResult:
    tmp = writer.tmp
    folders, notes = _folders(loaded)
    placer = _Placer(copy=options.copy)
    saved = False
    # The hard links (500,000 of them at 10,000 hosts) are system calls: a few threads make them while this one
    # joins the stores and writes the manifest, the inventory and the store — a link changes no signature the store
    # records. Whatever could not be linked is copied afterwards, and the store written again with the copies' own
    # signatures.
    with _Linking(placer, tmp, folders) as linking:
        outputs, strings, arrays = _merged_columns(loaded)
        notes += _write_documents(tmp, loaded, snapshots, dropped)
        if placer.link:
            saved = samples_store.save(tmp, outputs, strings, arrays)
    if linking.left:
        _copy_files(tmp, outputs, linking.left, placer)
        saved = False
    if not saved and not samples_store.save(tmp, outputs, strings, arrays):
        raise BundleError(f"{writer.final}: cannot write the merged samples store; nothing written")
    return MergeResult(writer.final, len(loaded), sum(len(i.keep) for i in loaded), len(outputs["rows"]),
                       linked=placer.linked, copied=placer.copied, dropped=dropped, notes=notes)


def _write_documents(tmp: Path, loaded: list[_Input], snapshots: list[dict], dropped: dict[str, list[str]]
                     ) -> list[str]:
    """The merged manifest and inventory; the notes on what they record."""
    notes = []
    targets, failures = [], []
    for i in loaded:
        targets += [t for t in i.manifest["targets"] if t["name"] in i.keep]
        failures += [f for f in i.manifest["failures"] if f.get("target") in i.keep]
    intervals = {i.manifest.get("interval_s") for i in loaded}
    if len(intervals) > 1:
        notes.append(f"the inputs' interval_s differ ({', '.join(map(str, sorted(intervals, key=str)))}): "
                            "the merged manifest records none (each target's rates use its own read times)")
    manifest = {
        "format": FORMAT,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "rdmatool_version": __version__,
        "interval_s": intervals.pop() if len(intervals) == 1 else None,
        "snapshots": snapshots,
        "targets": targets,
        "failures": failures,
        "merged_from": [{"bundle": i.path.name, "created": i.manifest.get("created"), "targets": len(i.keep),
                         "dropped": dropped.get(str(i.path), [])} for i in loaded],
    }
    sweeps = _merged_sweeps(loaded)
    if sweeps:
        manifest["subnet_sweeps"] = sweeps
    (tmp / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    (tmp / "inventory.yaml").write_text(inventory_text(targets), encoding="utf-8")
    return notes


def _merged_sweeps(loaded: list[_Input]) -> list[dict]:
    """Each input's `subnet_sweeps` entries whose sweeping host is a target it keeps (or that no host swept), in the
    collector's order (subnet, snapshot): the manifest must still say whose outputs are a snapshot's view of the
    subnet. Two shards that swept one subnet keep an entry each; the reader takes the first host by name."""
    entries = [e for i in loaded for e in subnet_sweeps(i.manifest, str(i.path / "manifest.json"))
               if e.get("host") is None or e["host"] in i.keep]
    return sorted(entries, key=lambda e: (e["sm_lid"], e["snapshot"], e.get("host") or ""))


def _plain(value) -> bool:
    """A value JSON writes as YAML reads it back: printable ASCII text, a whole number, a boolean, none, or a list of
    those (a float's `1e+20` would come back as text; a non-printable or non-ASCII character is YAML's to escape)."""
    if value is None or isinstance(value, (bool, int)):
        return True
    if isinstance(value, str):
        return value.isascii() and value.isprintable()
    return isinstance(value, list) and all(_plain(v) for v in value)


def inventory_text(targets: list[dict]) -> str:
    """The merged inventory as YAML: one flow mapping per target, written as JSON (YAML's flow style is a superset of
    it) when every value is plain — PyYAML's representer took 2.7 s for 10,000 targets, this 0.1 s — and by PyYAML
    otherwise. Either reads back as the same list of targets."""
    if all(isinstance(k, str) and _plain(k) and _plain(v) for t in targets for k, v in t.items()):
        lines = [f"- {json.dumps(t, ensure_ascii=True)}\n" for t in targets]
        return "targets:\n" + "".join(lines) if lines else "targets: []\n"
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return yaml.dump({"targets": targets}, Dumper=dumper, sort_keys=False)


def _dirs(path: str | Path) -> list[os.DirEntry]:
    try:
        with os.scandir(path) as it:
            return [e for e in it if e.is_dir(follow_symlinks=False)]
    except OSError:
        return []  # the reader has named what it could not list


def _entries(path: str) -> list[os.DirEntry]:
    try:
        with os.scandir(path) as it:
            return list(it)
    except OSError:
        return []  # the merged bundle's reader names what it cannot list


def _shown_list(values: list[int]) -> str:
    return ", ".join(map(str, values)) if values else "none"


def _folded(names: list[str]) -> str:
    try:
        return hostlist.fold(names)
    except ValueError:
        return ", ".join(sorted(names))

