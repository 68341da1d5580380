"""Lay a generated fabric out as a bundle in the public format (docs/bundle-format.md): format /1 (a side file per
output), /2 (outputs.json per target folder) or /3 (one outputs pack per target and snapshot). Written from the
format's own text, not through rdmatool's writer, so a mistake of the writer is not repeated here."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import yaml

from tests.generated import host_text, switch_text
from tests.generated.model import Fabric

T0 = datetime(2026, 12, 1, 2, 0, 0, tzinfo=timezone.utc)
_UNSAFE = re.compile(r"[^A-Za-z0-9._:+-]")


def file_name(parser: str, qualifier: str) -> str:
    return _UNSAFE.sub("_", f"{parser}.{qualifier}" if qualifier else parser)


def _iso(t: datetime) -> str:
    return t.isoformat(timespec="milliseconds")


def write(fabric: Fabric, root: Path) -> Path:
    """The bundle, plus `site.yaml` beside it: the configuration file whose site profile is the fabric's."""
    root.mkdir(parents=True, exist_ok=True)
    snapshots = []
    for k in range(fabric.snapshots):
        start = T0 + timedelta(seconds=k * fabric.interval_s)
        finished = start
        for target_index, (name, outputs_at) in enumerate(_targets(fabric, last=k == fabric.snapshots - 1)):
            # one target's outputs are read within a second, by one script: one read time for all of them
            offset = 0.05 * target_index % 2.0
            read_at = start + timedelta(seconds=offset)
            rendered = [(parser, qualifier, command, text, read_at)
                        for parser, qualifier, command, text in outputs_at(k * fabric.interval_s + offset)]
            finished = max(finished, read_at + timedelta(seconds=0.5))
            _write_target(fabric.fmt, root / "snapshots" / str(k), name, rendered)
        snapshots.append({"index": k, "started": _iso(start), "finished": _iso(finished)})
    targets = [{"name": h.name, "kind": "host", "platform": "linux", "role": h.role, "address": h.address}
               for h in fabric.hosts]
    targets += [{"name": s.name, "kind": "switch", "platform": s.nos, "role": s.role, "address": s.address}
                for s in fabric.switches if s.nos != "ib"]
    manifest = {"format": f"rdmatool-bundle/{fabric.fmt}", "created": _iso(T0), "interval_s": fabric.interval_s,
                "snapshots": snapshots, "targets": targets, "failures": []}
    if fabric.link_layer == "InfiniBand" and fabric.sms and fabric.fmt >= 2:  # the record format /1 predates
        sweeper = fabric.hosts[0]
        manifest["subnet_sweeps"] = [
            {"sm_lid": host_text._sm_lid(fabric), "snapshot": k, "host": sweeper.name,
             "port": f"{sweeper.rails[0].device}.1", "complete": True,
             "tools": ["sminfo", "ibnetdiscover", "iblinkinfo", "ibqueryerrors"], "tried": []}
            for k in range(fabric.snapshots)]
    (root / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    (root.parent / f"{root.name}.site.yaml").write_text(yaml.safe_dump({"site": fabric.site.config()}))
    return root


def _targets(fabric: Fabric, last: bool = False):
    for host in fabric.hosts:
        perf = host_text.perftest_outputs(fabric, host) if last else []
        yield host.name, (lambda t, h=host, p=perf: host_text.outputs(fabric, h, t) + p)
    for switch in fabric.switches:
        if switch.nos != "ib":  # an InfiniBand switch is seen only through the subnet
            yield switch.name, (lambda t, s=switch: switch_text.outputs(fabric, s, t))


def _side(command: str, started: datetime, qualifier: str) -> dict:
    side = {"command": command, "exit_code": 0, "stderr": "", "started": _iso(started), "duration_s": 0.2,
            "error": None}
    if qualifier and _UNSAFE.search(qualifier):  # the real name, where the file name had to be made safe
        side["qualifier"] = qualifier
    return side


def _write_target(fmt: int, snapshot: Path, target: str, rendered: list) -> None:
    snapshot.mkdir(parents=True, exist_ok=True)
    if fmt == 3:
        entries, body = [], b""
        for parser, qualifier, command, text, started in sorted(rendered, key=lambda r: file_name(r[0], r[1])):
            raw = text.encode()
            entries.append({"name": file_name(parser, qualifier), "bytes": len(raw), **_side(command, started, qualifier)})
            body += raw
        header = json.dumps({"format": "rdmatool-outputs/1", "outputs": entries}).encode()
        (snapshot / f"{target}.outputs").write_bytes(header + b"\n" + body)
        return
    folder = snapshot / target
    folder.mkdir(exist_ok=True)
    sides = {}
    for parser, qualifier, command, text, started in rendered:
        name = file_name(parser, qualifier)
        (folder / f"{name}.txt").write_text(text)
        sides[name] = _side(command, started, qualifier)
        if fmt == 1:
            (folder / f"{name}.json").write_text(json.dumps(sides[name]))
    if fmt == 2:
        (folder / "outputs.json").write_text(json.dumps(sides, indent=1))
