"""A saved bundle narrowed to some of its targets: `diagnose BUNDLE --limit gpu[01-08]` (and `report`, `export`,
`bundle show`) judges a nightly bundle as if only a job's nodes and their switches had been collected.

What is kept (`Selection`, chosen by the command line from ClusterShell patterns and the bundle's own cabling,
rdmatool.cli._targets): the targets the patterns name, and, when they name hosts only, the switches cabled to those
hosts. Such a switch is kept for its ports facing the chosen hosts: the findings on its ports cabled to a host left
out are another job's (a PFC storm of that host, seen at the switch end of its cable) and are dropped
(`Selection.keeps`); its switch-wide findings and the ports facing no host of the bundle stay.

How (`narrowed`): a bundle like any other, in a directory of its own: the manifest lists the kept targets and their
failures (and says what it was narrowed from, under `selection`), the kept targets' snapshot files are hard links to
the original's (copies where the two directories are on different filesystems), and the perftest results are
linked as they are (a pair with a host left out is judged, its findings on that host dropped). Every reader, the
samples store included, reads it as it reads the whole bundle; the original is never written to.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from rdmatool.bundle.manifest import read_manifest
from rdmatool.bundle.names import PACK_SUFFIX
from rdmatool.model import Finding
from rdmatool.platforms.port_names import port_key

ROOT_KEPT = ("perf",)  # what of a bundle's root beside the manifest and the snapshots a narrowed bundle keeps


@dataclass(frozen=True)
class Selection:
    """The targets of a bundle a command judges, and how they were chosen."""

    of: str  # the bundle, as given
    chosen: tuple[str, ...]  # the targets --limit / --exclude name, in the bundle's order
    limit: str | None = None
    exclude: str | None = None
    switches: tuple[str, ...] = ()  # the switches cabled to a chosen host, brought in for its ports
    # a brought-in switch → its ports cabled to a host of the bundle left out, as the cabling names them
    left_out_ports: Mapping[str, frozenset[str]] = field(default_factory=dict)
    total: int = 0  # the bundle's targets

    @property
    def targets(self) -> tuple[str, ...]:
        return self.chosen + tuple(s for s in self.switches if s not in self.chosen)

    def keeps(self, finding: Finding) -> bool:
        """Whether a finding is about the selection: on a kept target, and not on a brought-in switch's port that is
        cabled to a host left out (a finding naming no port of its own is dropped when every port it lists is)."""
        if finding.target not in self.targets:
            return False
        left_out = self._left_out_keys.get(finding.target)
        if not left_out:
            return True
        ports = _ports_named(finding)
        return not ports or any(port_key(p) not in left_out for p in ports)

    @cached_property
    def _left_out_keys(self) -> dict[str, frozenset[str]]:
        """The left-out ports as rdmatool.platforms.port_names compares them (`Eth1/1` is `Ethernet1/1`)."""
        return {s: frozenset(port_key(p) for p in ports) for s, ports in self.left_out_ports.items()}

    def as_json(self) -> dict:
        return {"bundle": self.of, "limit": self.limit, "exclude": self.exclude, "targets": list(self.chosen),
                "switches": {s: sorted(self.left_out_ports.get(s, ())) for s in self.switches}, "of": self.total}

    @property
    def asked(self) -> str:
        """The options as given: `--limit gpu[01-08] --exclude gpu05`."""
        return " ".join(part for part in (f"--limit {self.limit}" if self.limit is not None else "",
                                          f"--exclude {self.exclude}" if self.exclude is not None else "") if part)

    def note(self) -> str:
        """One line for the notes: what was judged of the bundle."""
        line = f"{self.asked}: {len(self.chosen)} of the bundle's {self.total} targets"
        if self.switches:
            dropped = sum(len(ports) for ports in self.left_out_ports.values())
            line += (f", and the switch{'es' if len(self.switches) > 1 else ''} cabled to them "
                     f"({', '.join(self.switches)})")
            if dropped:
                line += f" but for {dropped} port{'s' if dropped > 1 else ''} cabled to hosts left out"
        return line


def _ports_named(finding: Finding) -> list[str]:
    """The switch ports a finding is about: its entity, or the ports its evidence lists (a switch whose ECN fires
    after PFC on some of its ports)."""
    if finding.entity:
        return [finding.entity]
    details = finding.evidence.get("details") if isinstance(finding.evidence, dict) else None
    listed = details.get("ports") if isinstance(details, dict) else None
    return [str(p["entity"]) for p in listed or () if isinstance(p, dict) and p.get("entity")]


def narrowed(source: str | Path, selection: Selection, into: str | Path) -> Path:
    """Write the bundle `source` narrowed to `selection` at `into` (a directory that must not exist yet); BundleError
    when `source` is no bundle (rdmatool.bundle.manifest)."""
    source, into = Path(source), Path(into)
    manifest = read_manifest(source)
    keep = set(selection.targets)
    manifest = {**manifest,
                "targets": [t for t in manifest.get("targets") or [] if t.get("name") in keep],
                "failures": [f for f in manifest.get("failures") or [] if f.get("target") in keep],
                "selection": selection.as_json()}
    into.mkdir(parents=True)
    (into / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    snapshots = source / "snapshots"
    (into / "snapshots").mkdir()
    for snapshot in _entries(snapshots):
        if not snapshot.is_dir(follow_symlinks=False):
            continue  # not a snapshot folder: the reader would skip it in the original too
        (into / "snapshots" / snapshot.name).mkdir()
        for entry in _entries(Path(snapshot.path)):
            target = entry.name[:-len(PACK_SUFFIX)] if entry.name.endswith(PACK_SUFFIX) else entry.name
            if target in keep:
                _link(Path(entry.path), into / "snapshots" / snapshot.name / entry.name)
    for name in ROOT_KEPT:
        if os.path.lexists(source / name):
            _link(source / name, into / name)
    return into


def _entries(folder: Path) -> list[os.DirEntry]:
    try:
        with os.scandir(folder) as found:
            return sorted(found, key=lambda e: e.name)
    except OSError:
        return []  # what cannot be listed is not there: the reader of the narrowed bundle says what is missing


def _link(source: Path, target: Path) -> None:
    """A hard link to `source` (a folder: its contents, recursively), a copy across filesystems. A symlink is
    linked as the symlink it is, never followed: the reader skips it, in the narrowed bundle as in the original."""
    if source.is_dir() and not source.is_symlink():
        target.mkdir()
        for entry in _entries(source):
            _link(Path(entry.path), target / entry.name)
        return
    try:
        os.link(source, target, follow_symlinks=False)
    except OSError:
        if source.is_symlink() or not source.is_file():
            return  # a FIFO or a device on another filesystem: nothing the reader would read
        shutil.copy2(source, target, follow_symlinks=False)
