"""NCCL_DEBUG=INFO log (NCCL or RCCL): the network, devices, GID index, env and GPU Direct RDMA each process used.

Command: any job run with `NCCL_DEBUG=INFO` (nccl-tests, torchrun, mpirun, srun); its whole output is read.
Emits per process, entity `host:pid` (the record's `host:pid:tid [cudaDev] NCCL INFO` prefix):
    `nccl_net` (`Using network IB`: IB, Socket, IBext_v8, a plugin's name), `nccl_net_device` per device of a
    `NET/<transport> : Using [0]mlx5_0:1/RoCE [1]... ; OOB eth0:10.0.0.1<0>` line (text = the device token,
    `mlx5_0:1/RoCE` or a socket's `eth0`; value = NCCL's device index, both devices of a merged
    `[0]={[0] mlx5_2:1/RoCE, [1] mlx5_3:1/RoCE}` carry 0; raw_key = the transport, `NET/IB`), `nccl_oob_interface`,
    `nccl_bootstrap_interface`, `nccl_no_device` (`NET/IB : No device found.`: text = the transport), `nccl_env`
    (`NCCL_IB_GID_INDEX set by environment to 3.`, `NCCL_IB_HCA set to mlx5_0`: raw_key = the name, text = the
    value), `nccl_gid_index` (`NET/IB: NCCL Dev 0 IbDev 0 Port 1 qpn 123 mtu 5 GID 3 (...)`: raw_key = `IbDev N
    Port P`), `nccl_gdr` (1/0 from `GPU Direct RDMA Enabled|Disabled for ... HCA N`; raw_key `HCA N`),
    `nccl_net_plugin`, `nccl_rank` / `nccl_nranks` (from `comm ... rank R nranks N cudaDev D ... Init COMPLETE`),
    `nccl_connected` (`rings` / `trees`), `nccl_warning` (an `NCCL WARN` line's text), and, once per process at its
    end, `nccl_connections` per transport path of the channel lines (`via NET/IB/0/GDRDMA`: raw_key = the path).
    `nccl_version` on entity `log` (the `NCCL version 2.18.3+cuda12.2` / `RCCL version ...` banner, with or without
    the record prefix).
Example:
    gpu01:2104:2104 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_3:1/RoCE [RO]; OOB ens1f0np0:10.1.0.1<0>
    gpu01:2104:2104 [0] NCCL INFO Using network IB
    gpu01:2104:2160 [0] NCCL INFO Channel 00/0 : 7[7] -> 8[0] [receive] via NET/IB/0/GDRDMA
Caveats: the record's prefix is found anywhere in the line, so mpirun's `--tag-output` `[1,0]<stdout>:`, torchrun's
    `[rank0]:` / `[default0]:` and srun's `0: ` labels are read through, and pod hostnames (`worker-0.svc`) are
    hosts like any other. Two records glued onto one line (terminal padding) are split at the second prefix. Lines
    that are no NCCL record (the job's own output, UCX, Open MPI) and NCCL INFO records of other kinds are skipped,
    counted as `parse_skipped_lines` on entity `other`. A `NET/<transport> : Using` line none of whose devices can be
    read is a ParseError at its line. An output without a single NCCL record is a ParseError at line 1 (the job ran
    without NCCL_DEBUG=INFO): an empty answer would read as "nothing wrong".
    An empty output (nothing, or white space only) is a ParseError, `empty output: NCCL printed nothing`, on which
    `rdmatool parse` exits 2.
"""

from __future__ import annotations

import re
from collections import Counter

from rdmatool.errors import ParseError
from rdmatool.model import Sample
from rdmatool.parsers._common import refuse_empty

NAME = "nccl_debug"

# host:pid:tid [cudaDev] NCCL INFO|WARN|TRACE
_PREFIX = re.compile(r"(?P<host>[A-Za-z0-9][\w.-]*):(?P<pid>\d+):(?P<tid>\d+) \[(?P<dev>\d+)\] "
                     r"NCCL (?P<level>INFO|WARN|TRACE)\b ?")
_VERSION = re.compile(r"\b(?P<lib>NCCL|RCCL) version\s*:?\s*(?P<version>\S+)")
_USING = re.compile(r"^NET/(?P<net>[^:]+?)\s*:\s*Using\s+(?P<list>.*?)(?:\s*;\s*OOB\s+(?P<oob>\S+))?\s*$")
_MERGED = re.compile(r"\[(?P<index>\d+)\]\s*=\s*\{(?P<inner>[^}]*)\}")
_SINGLE = re.compile(r"\[(?P<index>\d+)\]\s*(?P<device>[^\s\[{,]+)")
_INNER = re.compile(r"\[\d+\]\s*(?P<device>[^\s,}]+)")
_NO_DEVICE = re.compile(r"^NET/(?P<net>[^:]+?)\s*:\s*No device found\.?\s*$")
_NETWORK = re.compile(r"^Using network (?P<net>.+?)\s*$")
_BOOTSTRAP = re.compile(r"^Bootstrap\s*:\s*Using\s+(?:\[\d+\])?(?P<ifname>[^:\s]+)")
_ENV = re.compile(r"^(?P<name>NCCL_[A-Z0-9_]+|RCCL_[A-Z0-9_]+) set (?:by environment )?to (?P<value>.*?)\.?\s*$")
_GID = re.compile(r"^NET/\S+?\s*:?\s*(?:NCCL (?:Merged)?Dev \d+ )?IbDev (?P<ibdev>\d+) Port (?P<port>\d+) .*?"
                  r"\bGID (?P<gid>\d+)\b")
_GDR_HCA = re.compile(r"GPU Direct RDMA (?P<state>Enabled|Disabled) for (?:GPU \S+ / )?HCA (?P<hca>\d+)"
                      r"(?: '(?P<name>[^']+)')?(?P<rest>.*)$")
_CHANNEL = re.compile(r"^(?:Channel|Ring) \d+(?:/\d+)? : .*? via (?P<path>\S+)")
_COMM = re.compile(r"\brank (?P<rank>\d+) nranks (?P<nranks>\d+) cudaDev (?P<dev>\d+)\b.*Init COMPLETE")
_CONNECTED = re.compile(r"^Connected all (?P<what>rings|trees)\b")
_PLUGIN = re.compile(r"^(?:NET/Plugin\s*:?\s*|Successfully loaded external plugin\s*)(?P<what>.+?)\s*$")


def _records(line: str) -> list[tuple[re.Match[str], str]]:
    """The records of one line: each prefix match with its message (the text up to the next prefix)."""
    found = list(_PREFIX.finditer(line))
    return [(m, line[m.end():found[i + 1].start() if i + 1 < len(found) else len(line)].strip())
            for i, m in enumerate(found)]


def _devices(net: str, listed: str, line_no: int, line: str) -> list[Sample]:
    out = []
    merged_spans = []
    for merged in _MERGED.finditer(listed):
        merged_spans.append(merged.span())
        for inner in _INNER.finditer(merged["inner"]):
            out.append((merged.start(), int(merged["index"]), inner["device"]))
    for single in _SINGLE.finditer(listed):
        if any(a <= single.start() < b for a, b in merged_spans):
            continue
        device = single["device"].split("<", 1)[0]  # a socket's `eth0:10.0.0.1<0>`
        if net.lower().startswith("socket"):
            device = device.split(":", 1)[0]
        out.append((single.start(), int(single["index"]), device))
    if not out:
        raise ParseError(NAME, line_no, line, f"NET/{net} : Using names no device")
    return [Sample("", "nccl_net_device", index, text=device, raw_key=f"NET/{net}")
            for _, index, device in sorted(out)]


def _message(message: str, line_no: int, line: str) -> list[Sample] | None:
    """The samples of one INFO record's message (entity filled in by the caller), None for a kind not read."""
    if match := _USING.match(message):
        out = _devices(match["net"].strip(), match["list"], line_no, line)
        if match["oob"]:
            out.append(Sample("", "nccl_oob_interface", text=match["oob"].split("<", 1)[0], raw_key="OOB"))
        return out
    if match := _NO_DEVICE.match(message):
        return [Sample("", "nccl_no_device", text=f"NET/{match['net'].strip()}", raw_key="No device found")]
    if match := _NETWORK.match(message):
        return [Sample("", "nccl_net", text=match["net"], raw_key="Using network")]
    if match := _BOOTSTRAP.match(message):
        return [Sample("", "nccl_bootstrap_interface", text=match["ifname"], raw_key="Bootstrap")]
    if match := _ENV.match(message):
        return [Sample("", "nccl_env", text=match["value"], raw_key=match["name"])]
    if match := _GID.match(message):
        return [Sample("", "nccl_gid_index", int(match["gid"]), raw_key=f"IbDev {match['ibdev']} Port {match['port']}")]
    if match := _GDR_HCA.search(message):
        name = f" {match['name']}" if match["name"] else ""
        return [Sample("", "nccl_gdr", 1 if match["state"] == "Enabled" else 0,
                       text=f"{match['state']}{match['rest'].rstrip()}".strip(), raw_key=f"HCA {match['hca']}{name}")]
    if match := _COMM.search(message):
        return [Sample("", "nccl_rank", int(match["rank"]), raw_key=f"cudaDev {match['dev']}"),
                Sample("", "nccl_nranks", int(match["nranks"]), raw_key="nranks")]
    if match := _CONNECTED.match(message):
        return [Sample("", "nccl_connected", text=match["what"], raw_key=f"Connected all {match['what']}")]
    if match := _PLUGIN.match(message):
        return [Sample("", "nccl_net_plugin", text=match["what"][:200], raw_key="NET/Plugin")]
    return None


def parse(text: str) -> list[Sample]:
    refuse_empty(NAME, "NCCL", text)
    samples: list[Sample] = []
    channels: dict[str, Counter] = {}
    skipped = 0
    records = 0
    for line_no, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip()
        found = _records(line)
        if not found:
            version = _VERSION.search(line)
            if version and not line.lstrip().startswith("#"):
                samples.append(Sample("log", "nccl_version", text=f"{version['lib']} {version['version']}",
                                      raw_key=f"{version['lib']} version"))
            elif line.strip():
                skipped += 1
            continue
        for match, message in found:
            records += 1
            entity = f"{match['host']}:{match['pid']}"
            if match["level"] == "WARN":
                samples.append(Sample(entity, "nccl_warning", text=message[:300], raw_key="NCCL WARN"))
                continue
            if version := _VERSION.match(message):
                samples.append(Sample("log", "nccl_version", text=f"{version['lib']} {version['version']}",
                                      raw_key=f"{version['lib']} version"))
                continue
            if channel := _CHANNEL.match(message):
                channels.setdefault(entity, Counter())[channel["path"]] += 1
                continue
            read = _message(message, line_no, line)
            if read is None:
                skipped += 1
                continue
            samples += [Sample(entity, s.metric, s.value, s.text, s.priority, s.size_bytes, s.raw_key) for s in read]
    if not records:
        raise ParseError(NAME, 1, text.splitlines()[0] if text.splitlines() else "",
                         "no NCCL record (host:pid:tid [dev] NCCL INFO ...): was the job run with NCCL_DEBUG=INFO?")
    for entity, counted in channels.items():
        samples += [Sample(entity, "nccl_connections", n, raw_key=path) for path, n in counted.items()]
    if skipped:
        samples.append(Sample("other", "parse_skipped_lines", skipped, raw_key="other"))
    return samples
