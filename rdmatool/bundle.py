"""The on-disk bundle: the replayable record of what the fabric said (a public format others may write too).

```
BUNDLE/manifest.json     {"format": "rdmatool-bundle/1", "created", "rdmatool_version", "interval_s",
                          "snapshots": [{"index", "started", "finished"}], "targets": [...], "failures": [...]}
BUNDLE/inventory.yaml    resolved targets, no secrets
BUNDLE/snapshots/<i>/<target>/<parser>[.<qualifier>].txt    raw output of one logical command
BUNDLE/snapshots/<i>/<target>/<parser>[.<qualifier>].json   {"command", "exit_code", "stderr", "started",
                                                              "duration_s", "error"[, "qualifier"]}
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

    def add(self, snapshot: int, result: CommandResult) -> None:
        folder = self.tmp / "snapshots" / str(snapshot) / result.target
        folder.mkdir(parents=True, exist_ok=True)
        stem = file_stem(result.parser, result.qualifier)
        (folder / f"{stem}.txt").write_text(result.stdout, encoding="utf-8")
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
    bundle = Bundle(root, manifest)
    snapshots_dir = root / "snapshots"
    if not snapshots_dir.is_dir():
        raise BundleError(f"{snapshots_dir}: missing")
    for snap_dir in sorted((p for p in snapshots_dir.iterdir() if p.is_dir()), key=_snapshot_index):
        index = _snapshot_index(snap_dir)
        for target_dir in sorted(p for p in snap_dir.iterdir() if p.is_dir()):
            for raw in sorted(target_dir.glob("*.txt")):
                bundle.entries.append(BundleEntry(index, target_dir.name, _read_result(target_dir.name, raw)))
    return bundle


def _snapshot_index(path: Path) -> int:
    try:
        return int(path.name)
    except ValueError:
        raise BundleError(f"{path}: snapshot folders must be named 0, 1, ...") from None


def _read_result(target: str, raw: Path) -> CommandResult:
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
