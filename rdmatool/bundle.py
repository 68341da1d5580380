"""The on-disk bundle: the replayable record of what the fabric said (a public format others may write too).

```
BUNDLE/manifest.json     {"format": "rdmatool-bundle/1", "created", "rdmatool_version", "interval_s",
                          "snapshots": [{"index", "started", "finished"}], "targets": [...], "failures": [...]}
BUNDLE/inventory.yaml    resolved targets, no secrets
BUNDLE/snapshots/<i>/<target>/<parser>[.<qualifier>].txt    raw output of one logical command
BUNDLE/snapshots/<i>/<target>/<parser>[.<qualifier>].json   {"command", "exit_code", "stderr", "started",
                                                              "duration_s", "error"[, "qualifier"]}
BUNDLE/samples.npz       optional: the parsed samples, a cache checked against the raw files (rdmatool.samples_store)
```
The side file is optional when reading (absent = exit 0). A bundle is built in a hidden sibling directory and
renamed into place, so an interrupted run never leaves a half bundle under the final name, and an existing bundle
of the same name is replaced only once the new one is complete.

A bundle may come from elsewhere, so reading one trusts nothing in it:
- only regular files are read, never through a symlink (a symlinked `/etc/shadow` must not leak into a message), and
  directories are listed without following symlinks; FIFOs, devices and sockets are skipped;
- each file is read up to a cap: 64 MiB, or the environment variable `RDMATOOL_MAX_OUTPUT_BYTES` (bytes); a larger
  raw output, side file or manifest is not read (see rdmatool.files);
- every manifest key is type-checked (`targets`: a list of names or of objects with a string `name`; `failures`,
  `snapshots`: lists of objects; `interval_s`: a number) and normalised (`Bundle.targets` are always objects with a
  name); a bad manifest is a BundleError naming the file and the key;
- an output whose raw or side file is unusable (not a regular file, too large, a side file of the wrong shape or
  types, an unsafe name) is skipped with a one-line reason in `Bundle.skipped` (and the analysis' `skipped`), and
  the other outputs are read as usual: one broken output never hides the rest of the fabric.
The writer refuses what would put a file outside the bundle: an unregistered parser, an unsafe target name or
qualifier (BundleError naming the target, parser and qualifier).
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import stat
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import yaml

from rdmatool import __version__, files
from rdmatool.errors import BundleError
from rdmatool.model import CommandResult, Target

FORMAT = "rdmatool-bundle/1"
_UNSAFE = re.compile(r"[^A-Za-z0-9._:+-]")
# A target is a directory of the bundle: no separator, no leading dot (so never `.` or `..`), nothing a shell or a
# terminal would read as more than a name. The inventory allows no other names.
TARGET_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")
# What a command may be qualified with: a device, netdev or switch port, optionally with a view (`mlx5_0.1`,
# `Ethernet1/1`, `Ethernet0.prio3`); `file_stem` maps it to a file name.
QUALIFIER = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:@+/-]{0,127}")
# The file names the writer makes (`file_stem` + .txt/.json); a reader takes no other name for an output.
_STEM = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:+-]{0,255}")


def file_stem(parser: str, qualifier: str | None) -> str:
    """`<parser>[.<qualifier>]` with the qualifier made safe for a file name (`Ethernet1/1` → `Ethernet1_1`)."""
    return parser if not qualifier else f"{parser}.{_UNSAFE.sub('_', qualifier)}"


class BundleWriter:
    """Collects results into a hidden temporary directory; `commit` renames it into place."""

    def __init__(self, final: str | Path) -> None:
        self.final = Path(final).resolve()
        if self.final.exists() and not (self.final / "manifest.json").is_file():
            raise BundleError(f"{self.final}: exists and is not a bundle; refusing to replace it")
        self.final.parent.mkdir(parents=True, exist_ok=True)
        self.tmp = self.final.parent / f".{self.final.name}.partial-{os.getpid()}"
        if self.tmp.exists():
            shutil.rmtree(self.tmp)
        (self.tmp / "snapshots").mkdir(parents=True)
        self.written: list[tuple[int, str, Path, CommandResult]] = []

    def add(self, snapshot: int, result: CommandResult) -> None:
        """Write one result's raw output and side file; BundleError (nothing written) when its names are unsafe."""
        folder, stem = self._place(snapshot, result)
        folder.mkdir(parents=True, exist_ok=True)
        raw = folder / f"{stem}.txt"
        raw.write_text(result.stdout, encoding="utf-8")
        side = {
            "command": result.command,
            "exit_code": result.exit_code,
            "stderr": result.stderr,
            "started": result.started,
            "duration_s": result.duration_s,
            "error": result.error,
        }
        if result.qualifier:
            side["qualifier"] = result.qualifier
        (folder / f"{stem}.json").write_text(json.dumps(side, indent=1) + "\n", encoding="utf-8")
        self.written.append((snapshot, result.target, raw, result))

    def _place(self, snapshot: int, result: CommandResult) -> tuple[Path, str]:
        """The folder and file stem of a result, checked to stay inside the temporary bundle: the target, parser and
        qualifier come from the inventory and the hosts' answers, and a name like `../../etc/cron.d/x` must not
        become a path."""
        from rdmatool import parsers  # the registry imports every parser: only a writer needs it

        def refuse(why: str) -> BundleError:
            return BundleError(f"refusing to write output target={result.target!r} parser={result.parser!r} "
                               f"qualifier={result.qualifier!r}: {why}")

        if isinstance(snapshot, bool) or not isinstance(snapshot, int) or snapshot < 0:
            raise refuse(f"snapshot {snapshot!r} is not a non-negative integer")
        if not isinstance(result.target, str) or not TARGET_NAME.fullmatch(result.target):
            raise refuse("not a safe target name (letters, digits, '_.-', starting with a letter or digit)")
        if not isinstance(result.parser, str) or result.parser not in parsers.registry():
            raise refuse("not a registered parser")
        if result.qualifier is not None and (not isinstance(result.qualifier, str)
                                             or not QUALIFIER.fullmatch(result.qualifier)):
            raise refuse("not a safe qualifier")
        stem = file_stem(result.parser, result.qualifier)
        folder = self.tmp / "snapshots" / str(snapshot) / result.target
        inside = (self.tmp / "snapshots").resolve()
        # Resolved, not assumed: a symlink or `..` anywhere on the way would show here.
        for path in (folder / f"{stem}.txt", folder / f"{stem}.json"):
            resolved = path.resolve()
            if not resolved.is_relative_to(inside) or resolved.parent != (inside / str(snapshot) / result.target):
                raise refuse(f"{path} resolves outside the bundle")
        return folder, stem

    def commit(self, targets: list[Target], snapshots: list[dict], failures: list[dict], interval_s: float) -> Path:
        manifest = {
            "format": FORMAT,
            "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "rdmatool_version": __version__,
            "interval_s": interval_s,
            "snapshots": snapshots,
            "targets": [t.public() for t in targets],
            "failures": failures,
        }
        (self.tmp / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
        (self.tmp / "inventory.yaml").write_text(
            yaml.safe_dump({"targets": [t.public() for t in targets]}, sort_keys=False), encoding="utf-8"
        )
        # The parsed samples go with the bundle (a cache its readers check against the raw files' size and time).
        # Paths are recorded under the temporary name; signatures (size, mtime) survive the rename below.
        from rdmatool import samples_store

        samples_store.write_for(self.tmp, self.written)
        _fsync_tree(self.tmp)
        if self.final.exists():
            # Swap: the old bundle stays whole until the new one is complete under its own name.
            old = self.final.parent / f".{self.final.name}.old-{os.getpid()}"
            os.rename(self.final, old)
            os.rename(self.tmp, self.final)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(self.tmp, self.final)
        return self.final

    def abort(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)


def _fsync_tree(root: Path) -> None:
    for path in root.rglob("*"):
        if path.is_file():
            with open(path, "rb") as handle:
                os.fsync(handle.fileno())


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


class OutputSkipped(BundleError):
    """One output that is not read; `reason` is the line for `Bundle.skipped` (the other outputs go on)."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


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


def read_manifest(root: Path) -> dict:
    """The manifest of a bundle directory, checked to be ours and normalised (see `check_manifest`); BundleError
    naming the file (and the key) otherwise."""
    manifest_path = root / "manifest.json"
    if not root.is_dir():
        raise BundleError(f"{root}: no such bundle directory")
    try:
        manifest = json.loads(files.read_regular_bytes(manifest_path).decode("utf-8"))
    except FileNotFoundError:
        raise BundleError(f"{manifest_path}: missing; not an rdmatool bundle") from None
    except files.UnsafeFileError as exc:
        raise BundleError(f"{manifest_path}: {exc.reason}; not read") from None
    except (OSError, ValueError, RecursionError) as exc:
        raise BundleError(f"{manifest_path}: unreadable manifest ({_one_line(exc)})") from None
    return check_manifest(manifest, str(manifest_path))


def check_manifest(manifest: object, where: str = "manifest.json") -> dict:
    """A manifest as parsed from JSON, every key its readers use type-checked, in the shape they expect:
    `targets` a list of objects with a string `name` (a bare name is `{"name": name}`), `failures` and `snapshots`
    lists of objects (null or absent: empty), `interval_s` a number or null. BundleError naming `where` and the key.
    The values are kept as they were otherwise (what `bundle show --json` and a diagnosis print stays the same)."""
    if not isinstance(manifest, dict):
        raise BundleError(f"{where}: format {type(manifest).__name__!r} is not {FORMAT!r}")
    if manifest.get("format") != FORMAT:
        found = manifest.get("format")
        raise BundleError(f"{where}: format {_shown_value(found)} is not {FORMAT!r}")
    out = dict(manifest)
    for key in ("created", "rdmatool_version"):
        _check(where, key, manifest.get(key), _STR_OR_NONE)
    interval = manifest.get("interval_s")
    if interval is not None and not _finite_number(interval):
        raise _bad(where, "interval_s", "a number or null", interval)
    out["targets"] = [_target(where, i, t) for i, t in enumerate(_list(where, "targets", manifest.get("targets")))]
    out["failures"] = [_failure(where, i, f) for i, f in enumerate(_list(where, "failures", manifest.get("failures")))]
    out["snapshots"] = [_snapshot(where, i, s)
                        for i, s in enumerate(_list(where, "snapshots", manifest.get("snapshots")))]
    return out


_STR_OR_NONE = "a string or null"
_TARGET_TEXT = ("address", "kind", "platform", "role", "user", "identity_file", "proxy_jump")


def _target(where: str, i: int, value: object) -> dict:
    key = f"targets[{i}]"
    if isinstance(value, str):
        value = {"name": value}
    elif not isinstance(value, dict):
        raise _bad(where, key, "a target name or an object with a string 'name'", value)
    name = value.get("name")
    if not isinstance(name, str):
        raise _bad(where, f"{key}.name", "a string", name)
    if not TARGET_NAME.fullmatch(name):
        raise BundleError(f"{where}: key {key}.name: {_shown_value(name)} is not a target name "
                          "(letters, digits, '_.-', starting with a letter or digit)")
    for field_name in _TARGET_TEXT:
        _check(where, f"{key}.{field_name}", value.get(field_name), _STR_OR_NONE)
    port = value.get("port")
    if port is not None and (isinstance(port, bool) or not isinstance(port, int)):
        raise _bad(where, f"{key}.port", "an integer or null", port)
    for field_name in ("groups", "ports"):
        items = value.get(field_name)
        if items is not None and not (isinstance(items, list) and all(isinstance(x, str) for x in items)):
            raise _bad(where, f"{key}.{field_name}", "a list of strings or null", items)
    return value


def _failure(where: str, i: int, value: object) -> dict:
    key = f"failures[{i}]"
    if not isinstance(value, dict):
        raise _bad(where, key, "an object", value)
    if not isinstance(value.get("target"), str):
        raise _bad(where, f"{key}.target", "a string", value.get("target"))
    for field_name in ("parser", "qualifier", "error"):
        _check(where, f"{key}.{field_name}", value.get(field_name), _STR_OR_NONE)
    return value


def _snapshot(where: str, i: int, value: object) -> dict:
    key = f"snapshots[{i}]"
    if not isinstance(value, dict):
        raise _bad(where, key, "an object", value)
    index = value.get("index")
    if index is not None and (isinstance(index, bool) or not isinstance(index, int) or index < 0):
        raise _bad(where, f"{key}.index", "a non-negative integer or null", index)
    for field_name in ("started", "finished"):
        _check(where, f"{key}.{field_name}", value.get(field_name), _STR_OR_NONE)
    return value


def _list(where: str, key: str, value: object) -> list:
    if value is None:
        return []
    if not isinstance(value, list):
        raise _bad(where, key, "a list or null", value)
    return value


def _check(where: str, key: str, value: object, expected: str) -> None:
    if value is not None and not isinstance(value, str):
        raise _bad(where, key, expected, value)


def _finite_number(value: object) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return isinstance(value, int) or math.isfinite(value)


def _bad(where: str, key: str, expected: str, value: object) -> BundleError:
    return BundleError(f"{where}: key {key}: expected {expected}, got {_shown_value(value)}")


def _shown_value(value: object) -> str:
    """A value read from a file, shown in one short line (never a whole document)."""
    if isinstance(value, dict | list):
        return type(value).__name__
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**30:
        return "a very large integer"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 200 else text[:197] + "..."


# ------------------------------------------------------------------------------------------------ the outputs


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
    The contents are not read here: a side file of the wrong shape is found by `read_result`."""
    notes = skipped if skipped is not None else []
    snapshots_dir = root / "snapshots"
    try:
        mode = os.lstat(snapshots_dir).st_mode
    except FileNotFoundError:
        raise BundleError(f"{snapshots_dir}: missing") from None
    except OSError as exc:
        raise BundleError(f"{snapshots_dir}: unreadable ({_one_line(exc)})") from None
    if not stat.S_ISDIR(mode):
        kind = "regular file" if stat.S_ISREG(mode) else files.kind_of(mode)
        raise BundleError(f"{snapshots_dir}: not a directory ({kind})")
    cap = files.max_output_bytes()
    found = []
    snap_dirs = []
    for entry in _entries(snapshots_dir, "snapshots", notes):
        index = _snapshot_index(entry.name)
        if not entry.is_dir(follow_symlinks=False):
            if index is not None:
                notes.append(f"{_shown('snapshots/' + entry.name)}: not a folder ({_kind(entry)}); skipped")
            continue  # a stray file beside the snapshot folders (a README) is none of ours
        if index is None:
            notes.append(f"{_shown('snapshots/' + entry.name)}: not a snapshot folder (named 0, 1, ...); skipped")
            continue
        snap_dirs.append((index, entry))
    for index, snap_dir in sorted(snap_dirs, key=lambda x: x[0]):
        where = f"snapshots/{snap_dir.name}"
        target_dirs = []
        for t in _entries(snap_dir.path, where, notes):
            if not t.is_dir(follow_symlinks=False):
                notes.append(f"{_shown(f'{where}/{t.name}')}: not a folder ({_kind(t)}); skipped")
            elif not TARGET_NAME.fullmatch(t.name):
                notes.append(f"{_shown(f'{where}/{t.name}')}: not a target name; skipped")
            else:
                target_dirs.append((t.name, t.path))
        for target, target_path in sorted(target_dirs):
            raws, sides = [], {}
            for f in _entries(target_path, f"{where}/{target}", notes):
                if f.name.endswith(".txt"):
                    raws.append(f)
                elif f.name.endswith(".json"):
                    sides[f.name[:-5]] = f
            for raw in sorted(raws, key=lambda f: f.name):
                name = f"{where}/{target}/{raw.name}"
                if not _STEM.fullmatch(raw.name[:-4]):
                    notes.append(f"{_shown(name)}: not an output file name; skipped")
                    continue
                raw_sig = _regular_signature(raw, name, cap, notes)
                if raw_sig is None:
                    continue
                side = sides.get(raw.name[:-4])
                side_sig = None
                if side is not None:
                    side_sig = _regular_signature(side, f"{where}/{target}/{side.name}", cap, notes)
                    if side_sig is None:
                        continue  # an output whose side file is unusable is not read at all
                found.append((index, target, raw.path, raw_sig, side_sig))
    return found


def _entries(path: str | os.PathLike, where: str, notes: list[str]) -> list[os.DirEntry]:
    try:
        with os.scandir(path) as it:
            return list(it)
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
    return signature(st)


def _shown(name: str) -> str:
    """A bundle-relative path for a message: as is when printable, quoted otherwise (a file name may hold a newline
    or a terminal escape sequence)."""
    return name if name.isprintable() else repr(name)


def signature(st: os.stat_result) -> list[int]:
    """What tells a changed file from the one read before without reading it: size and modification time (ns)."""
    return [st.st_size, st.st_mtime_ns]


def _snapshot_index(name: str) -> int | None:
    """The index a snapshot folder is named after (`0`, `1`, ...), None for any other name (`01`, `+1`, `١`)."""
    if name.isascii() and name.isdigit() and len(name) <= 9 and (name == "0" or not name.startswith("0")):
        return int(name)
    return None


def _relative(raw: Path) -> str:
    """`snapshots/<i>/<target>/<file>` of a file of a bundle (what messages name)."""
    return _shown("/".join(raw.parts[-4:]))


# Side-file keys and what each must be; absent keys take the CommandResult defaults.
_SIDE_TEXT = ("command", "stderr", "error", "qualifier", "started")
_EXIT_RANGE = range(-(2**31), 2**31)


def read_result(target: str, raw: Path) -> CommandResult:
    """One output from its raw file and (optional) side file; OutputSkipped (a BundleError) with the reason when
    either is not a regular file, too large, or the side file is not an object of the documented types."""
    parser, _, qualifier = raw.stem.partition(".")
    side_path = raw.with_suffix(".json")
    side: dict = {}
    try:
        side_text = files.read_regular_text(side_path, errors="strict")
    except FileNotFoundError:
        side_text = None
    except files.UnsafeFileError as exc:
        raise OutputSkipped(f"{_relative(side_path)}: {exc.reason}; skipped") from None
    except ValueError:
        raise OutputSkipped(f"{_relative(side_path)}: not UTF-8; skipped") from None
    if side_text is not None:
        try:
            side = json.loads(side_text)
        except (ValueError, RecursionError) as exc:
            raise OutputSkipped(f"{_relative(side_path)}: unreadable side file ({_one_line(exc)}); skipped") from None
        if not isinstance(side, dict):
            raise OutputSkipped(f"{_relative(side_path)}: side file must be a JSON object; skipped")
        problem = _side_problem(side)
        if problem:
            raise OutputSkipped(f"{_relative(side_path)}: {problem}; skipped")
    try:
        stdout = files.read_regular_text(raw)
    except FileNotFoundError:
        raise OutputSkipped(f"{_relative(raw)}: disappeared while reading; skipped") from None
    except files.UnsafeFileError as exc:
        raise OutputSkipped(f"{_relative(raw)}: {exc.reason}; skipped") from None
    qualifier = side.get("qualifier") or (qualifier or None)
    if qualifier is not None and not QUALIFIER.fullmatch(qualifier):
        where = side_path if side.get("qualifier") else raw
        raise OutputSkipped(f"{_relative(where)}: qualifier {_shown_value(qualifier)} is not a device or port name; "
                            "skipped")
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


def _side_problem(side: dict) -> str | None:
    """What is wrong with a side file's values (one line, naming the key), None when they are usable."""
    for key in _SIDE_TEXT:
        value = side.get(key)
        if value is not None and not isinstance(value, str):
            return f"key {key!r}: expected a string or null, got {_shown_value(value)}"
    code = side.get("exit_code")
    if code is not None and (isinstance(code, bool) or not isinstance(code, int) or code not in _EXIT_RANGE):
        return f"key 'exit_code': expected an integer exit status or null, got {_shown_value(code)}"
    duration = side.get("duration_s")
    if duration is not None and not _finite_number(duration):
        return f"key 'duration_s': expected a number or null, got {_shown_value(duration)}"
    return None
