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
"""

from __future__ import annotations

import json
import os
import re
import shutil
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import yaml

from rdmatool import __version__
from rdmatool.errors import BundleError
from rdmatool.model import CommandResult, Target

FORMAT = "rdmatool-bundle/1"
_UNSAFE = re.compile(r"[^A-Za-z0-9._:+-]")


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
        folder = self.tmp / "snapshots" / str(snapshot) / result.target
        folder.mkdir(parents=True, exist_ok=True)
        stem = file_stem(result.parser, result.qualifier)
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
    manifest: dict
    entries: list[BundleEntry] = field(default_factory=list)

    @property
    def targets(self) -> list[dict]:
        return self.manifest.get("targets", [])

    @property
    def failures(self) -> list[dict]:
        return self.manifest.get("failures", [])


def read(path: str | Path) -> Bundle:
    """Load a bundle (manifest + every raw output); BundleError with the path on anything foreign or corrupt."""
    root = Path(path)
    bundle = Bundle(root, read_manifest(root))
    for index, target, raw in list_outputs(root):
        bundle.entries.append(BundleEntry(index, target, read_result(target, raw)))
    return bundle


def read_manifest(root: Path) -> dict:
    """The manifest of a bundle directory, checked to be ours; BundleError naming the file otherwise."""
    manifest_path = root / "manifest.json"
    if not root.is_dir():
        raise BundleError(f"{root}: no such bundle directory")
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BundleError(f"{manifest_path}: missing; not an rdmatool bundle") from None
    except (OSError, ValueError) as exc:
        raise BundleError(f"{manifest_path}: unreadable manifest ({exc})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        found = manifest.get("format") if isinstance(manifest, dict) else type(manifest).__name__
        raise BundleError(f"{manifest_path}: format {found!r} is not {FORMAT!r}")
    return manifest


def list_outputs(root: Path) -> list[tuple[int, str, Path]]:
    """(snapshot, target, raw file) of every raw output, in the bundle's canonical order (snapshot, target, file)."""
    return [(index, target, Path(raw)) for index, target, raw, _, _ in scan_outputs(root)]


def scan_outputs(root: Path) -> list[tuple[int, str, str, list[int], list[int] | None]]:
    """(snapshot, target, raw path, raw (size, mtime_ns), side (size, mtime_ns) or None) of every raw output, in the
    canonical order — one directory read per target (scandir), because a 1,000-host bundle has 50,000 files."""
    snapshots_dir = root / "snapshots"
    if not snapshots_dir.is_dir():
        raise BundleError(f"{snapshots_dir}: missing")
    found = []
    for snap_dir in sorted((p for p in snapshots_dir.iterdir() if p.is_dir()), key=_snapshot_index):
        index = _snapshot_index(snap_dir)
        with os.scandir(snap_dir) as targets:
            target_dirs = sorted((t.name, t.path) for t in targets if t.is_dir())
        for target, target_path in target_dirs:
            raws, sides = [], {}
            with os.scandir(target_path) as files:
                for f in files:
                    if f.name.endswith(".txt"):
                        raws.append(f)
                    elif f.name.endswith(".json"):
                        sides[f.name[:-5]] = f
            for raw in sorted(raws, key=lambda f: f.name):
                side = sides.get(raw.name[:-4])
                found.append((index, target, raw.path, signature(raw.stat()),
                              None if side is None else signature(side.stat())))
    return found


def signature(st: os.stat_result) -> list[int]:
    """What tells a changed file from the one read before without reading it: size and modification time (ns)."""
    return [st.st_size, st.st_mtime_ns]


def _snapshot_index(path: Path) -> int:
    try:
        return int(path.name)
    except ValueError:
        raise BundleError(f"{path}: snapshot folders must be named 0, 1, ...") from None


def read_result(target: str, raw: Path) -> CommandResult:
    parser, _, qualifier = raw.stem.partition(".")
    side_path = raw.with_suffix(".json")
    side: dict = {}
    if side_path.exists():
        try:
            side = json.loads(side_path.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise BundleError(f"{side_path}: unreadable side file ({exc})") from None
        if not isinstance(side, dict):
            raise BundleError(f"{side_path}: side file must be a JSON object")
    return CommandResult(
        target=target,
        parser=parser,
        command=side.get("command") or "",
        stdout=raw.read_text(encoding="utf-8", errors="replace"),
        exit_code=side.get("exit_code", 0),
        stderr=side.get("stderr") or "",
        qualifier=side.get("qualifier") or (qualifier or None),
        started=side.get("started"),
        duration_s=side.get("duration_s"),
        error=side.get("error"),
    )
