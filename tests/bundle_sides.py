"""Side data put into a bundle by hand, the way the format says: into the folder's `outputs.json` where the folder
has one (format /2, what the writer makes), else as the output's own side file (format /1)."""

from __future__ import annotations

import json
from pathlib import Path

from rdmatool.bundle import OUTPUTS_FILE


def put_side(folder: Path, stem: str, side: dict | None) -> Path:
    """Set (or, with None, remove) the side data of output `stem` in `folder`; the file written."""
    shared = folder / OUTPUTS_FILE
    if shared.is_file():
        doc = json.loads(shared.read_text(encoding="utf-8"))
        if side is None:
            doc.pop(stem, None)
        else:
            doc[stem] = side
        shared.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
        return shared
    own = folder / f"{stem}.json"
    if side is None:
        own.unlink(missing_ok=True)
    else:
        own.write_text(json.dumps(side, indent=1) + "\n", encoding="utf-8")
    return own


def side_of(folder: Path, stem: str) -> dict | None:
    """The side data of output `stem` in `folder` as stored (None when it has none)."""
    shared = folder / OUTPUTS_FILE
    if shared.is_file():
        return json.loads(shared.read_text(encoding="utf-8")).get(stem)
    own = folder / f"{stem}.json"
    return json.loads(own.read_text(encoding="utf-8")) if own.is_file() else None


def json_or_none(path: Path) -> object:
    """A file's JSON value, None when it is absent or not JSON (a fuzzed file may be either)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def folder_as_format_1(folder: Path) -> None:
    """A folder's outputs.json split into one side file per output (what a /1 writer made), when it is an object;
    removed in any case."""
    shared = folder / OUTPUTS_FILE
    doc = json_or_none(shared)
    if isinstance(doc, dict):
        for stem, side in doc.items():
            (folder / f"{stem}.json").write_text(json.dumps(side, indent=1) + "\n", encoding="utf-8")
    shared.unlink(missing_ok=True)


def bundle_as_format_1(bundle: Path) -> Path:
    """A bundle a /1 writer would have made of the same outputs: every folder's side data as side files of their
    own, the manifest's format /1 (its samples store, if any, left as it is: now stale for every output)."""
    for folder in (bundle / "snapshots").glob("*/*"):
        if folder.is_dir():
            folder_as_format_1(folder)
    manifest = json.loads((bundle / "manifest.json").read_text(encoding="utf-8"))
    manifest["format"] = "rdmatool-bundle/1"
    (bundle / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return bundle
