"""Side data put into a bundle by hand, the way the format says: into the folder's `outputs.json` where the folder
has one (format /2), else as the output's own side file (format /1); and a writer's outputs packs (format /3) read,
written, or turned back into the folders a /2 writer made."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd

from rdmatool.bundle import OUTPUTS_FILE, PACK_SUFFIX
from rdmatool.bundle.writer import pack_bytes
from rdmatool.model import CommandResult
from rdmatool.table.column_codes import as_texts


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
    unpack(bundle)
    for folder in (bundle / "snapshots").glob("*/*"):
        if folder.is_dir():
            folder_as_format_1(folder)
    manifest = json.loads((bundle / "manifest.json").read_text(encoding="utf-8"))
    manifest["format"] = "rdmatool-bundle/1"
    (bundle / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return bundle


def read_pack(pack: Path) -> dict[str, tuple[dict, str]]:
    """A pack's outputs as written: stem -> (its header entry without name and length, its raw text)."""
    data = pack.read_bytes()
    end = data.index(b"\n")
    header = json.loads(data[:end])
    assert header["format"] == "rdmatool-outputs/1"
    out, position = {}, end + 1
    for entry in header["outputs"]:
        raw = data[position:position + entry["bytes"]]
        position += entry["bytes"]
        out[entry["name"]] = ({k: v for k, v in entry.items() if k not in ("name", "bytes")}, raw.decode("utf-8"))
    assert position == len(data)
    return out


def write_pack(pack: Path, outputs: dict[str, tuple[dict, str]]) -> Path:
    """A pack of stem -> (side data, raw text), as the writer writes one (in the order given)."""
    results = [(stem, CommandResult(target="", parser=stem.partition(".")[0], command=side.get("command") or "",
                                    stdout=text, exit_code=side.get("exit_code"), stderr=side.get("stderr") or "",
                                    qualifier=side.get("qualifier"), started=side.get("started"),
                                    duration_s=side.get("duration_s"), error=side.get("error")))
               for stem, (side, text) in outputs.items()]
    pack.write_bytes(pack_bytes(results))
    return pack


def outputs_of(bundle: Path, snapshot: int, target: str) -> dict[str, tuple[dict | None, str]]:
    """A target's outputs of a snapshot, stem -> (side data, raw text), from its pack or its folder."""
    pack = bundle / "snapshots" / str(snapshot) / f"{target}{PACK_SUFFIX}"
    out: dict[str, tuple[dict | None, str]] = {}
    folder = pack.parent / target
    if folder.is_dir():
        for raw in sorted(folder.glob("*.txt")):
            out[raw.stem] = (side_of(folder, raw.stem), raw.read_text(encoding="utf-8"))
    if pack.is_file():
        out.update(read_pack(pack))
    return out


def unpack(bundle: Path) -> Path:
    """The bundle as a /2 writer would have made it of the same outputs: each pack turned into its target's folder
    (a raw file per output, the side data in the folder's outputs.json), the manifest's format /2 (its samples
    store, if any, left as it is: now stale for every output)."""
    for pack in sorted((bundle / "snapshots").glob(f"*/*{PACK_SUFFIX}")):
        if not pack.is_file():
            continue
        folder = pack.with_name(pack.name[:-len(PACK_SUFFIX)])
        folder.mkdir(exist_ok=True)
        sides = {}
        for stem, (side, text) in read_pack(pack).items():
            (folder / f"{stem}.txt").write_bytes(text.encode("utf-8"))
            sides[stem] = side
        (folder / OUTPUTS_FILE).write_text(json.dumps(sides, indent=1) + "\n", encoding="utf-8")
        pack.unlink()
    manifest = json.loads((bundle / "manifest.json").read_text(encoding="utf-8"))
    manifest["format"] = "rdmatool-bundle/2"
    (bundle / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return bundle


def put_output(bundle: Path, snapshot: int, target: str, stem: str, text: str, side: dict | None = None) -> Path:
    """Add or replace one output of a target, where its writer keeps it: in its pack (format /3) when it has one,
    else in its folder (made if need be) with its side data in the folder's outputs.json (or its own side file in a
    /1 folder). `side`: None keeps the output's side data, if any. The file written."""
    pack = bundle / "snapshots" / str(snapshot) / f"{target}{PACK_SUFFIX}"
    if pack.is_file():
        outputs = read_pack(pack)
        outputs[stem] = (side if side is not None else outputs.get(stem, ({}, ""))[0], text)
        return write_pack(pack, outputs)
    folder = pack.parent / target
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{stem}.txt").write_text(text, encoding="utf-8")
    if side is not None:
        put_side(folder, stem, side)
    return folder / f"{stem}.txt"


def remove_target(bundle: Path, snapshot: int, target: str) -> None:
    """A target's outputs of one snapshot gone: its pack and its folder (whichever it has)."""
    (bundle / "snapshots" / str(snapshot) / f"{target}{PACK_SUFFIX}").unlink(missing_ok=True)
    folder = bundle / "snapshots" / str(snapshot) / target
    if folder.is_dir():
        shutil.rmtree(folder)


def assert_read_alike(path: Path, other: Path, min_rows: int) -> None:
    """Two bundles of the same outputs in other layouts read alike: the same entries, the same table (at least
    `min_rows` rows), the same parse failures and notes, nothing skipped."""
    from rdmatool import bundle as bundle_io
    from rdmatool.table import frame

    def entries(bundle: Path) -> dict:
        return {(e.snapshot, e.target, e.result.parser, e.result.qualifier): e.result
                for e in bundle_io.read(bundle).entries}

    assert entries(path) == entries(other)
    a, b = frame.load(path, write_store=False), frame.load(other, write_store=False)
    assert len(a.frame) >= min_rows
    pd.testing.assert_frame_equal(as_texts(a.frame), as_texts(b.frame))  # (each over its own string pool)
    assert [(f.target, f.parser, f.message) for f in a.parse_failures] == \
        [(f.target, f.parser, f.message) for f in b.parse_failures]
    assert a.notes == b.notes and a.skipped == b.skipped == []
