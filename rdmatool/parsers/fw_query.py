"""`flint -d <dev> q` / `mlxfwmanager --query`: adapter firmware version, PSID, part number and update status.

Command: `flint -d mlx5_0 q` (or `mstflint -d <pci> q`) and `mlxfwmanager --query` (MFT / mstflint).
Emits (entity = the `PCI Device Name` of an mlxfwmanager `Device #N:` block, else the placeholder `device`, which
the caller replaces with the device it queried; all state samples with `text`): `fw_version`, `fw_version_running`
(flint `FW Version(Running)` / mlxfwmanager `FW (Running)` row: a burnt image awaiting a reset),
`fw_version_available` (mlxfwmanager Available column of the FW row), `fw_release_date`, `product_version`,
`psid`, `part_number`, `device_type`, `device_description`, `base_guid`, `base_mac` (the first GUID / MAC; old
flint `GUIDs:` / `MACs:` lists too), `rom_version` (one per ROM: flint `Rom Info` type=X version=Y and the
mlxfwmanager PXE / UEFI / FCODE rows; raw_key names the ROM), `fw_update_status` (mlxfwmanager Status);
a `tool_error` sample for MFT `-E-` messages and the other known failure messages.
Example:
    Device #1:
    ----------
      Device Type:      ConnectX6
      PSID:             MT_0000000223
      PCI Device Name:  /dev/mst/mt4123_pciconf0
      Versions:         Current        Available
         FW             20.28.1002     N/A
      Status:           No matching image found
Caveats: `N/A` values are skipped; other `Key: value` rows (Image type, VSD, Security Attributes ...) are accepted
and not emitted; flint's `Description: UID GuidsNumber` pseudo-header is recognised. Several unnamed mlxfwmanager
blocks would share the entity `device`. No verbatim capture was available here: the fixtures follow the NVIDIA
MFT "flint" and "mlxfwmanager" documentation.
An empty output (nothing, or white space only) is a ParseError, `empty output: flint / mlxfwmanager printed nothing`,
on which `rdmatool parse` exits 2: flint and mlxfwmanager always print the image's or the device's versions when they
succeed, so an empty answer is missing data, not "nothing wrong".
"""

from __future__ import annotations

import dataclasses
import re

from rdmatool.errors import ParseError
from rdmatool.model import Sample
from rdmatool.parsers._common import lines, refuse_empty
from rdmatool.parsers._nic import DEVICE, NA_NIC, is_noise, nic_tool_error, strip_ansi
from rdmatool.parsers._samples import is_na, tool_error

NAME = "fw_query"

_DEVICE_BLOCK = re.compile(r"^\s*Device\s*#\s*(?P<n>\d+)\s*:?\s*$", re.IGNORECASE)
_ROW = re.compile(r"^\s*(?P<key>[A-Za-z][^:]*?)\s*:\s*(?P<value>.*?)\s*$")
_UNDERLINE = re.compile(r"^\s*[-=]{3,}\s*$")
_ROM_ITEM = re.compile(r"type=(?P<type>\S+)\s+version=(?P<version>\S+)")
_ROM_CONTINUATION = re.compile(r"^\s+type=\S+")
# A version row: a name of words (FW, UEFI Virtio net, FW (Running)), then versions, which start with a digit or are
# N/A; a long name may be followed by one space only, so words are told from versions by their first character.
_VERSION_ROW = re.compile(
    r"^\s*(?P<name>[A-Za-z][\w()]*(?:\s+[A-Za-z(][\w()]*)*)\s+(?P<current>\d\S*|N/A)"
    r"(?:\s+(?P<available>\d\S*|N/A))?\s*$",
    re.IGNORECASE,
)
_BANNER = re.compile(r"^\s*(?:Querying (?:Mellanox|NVIDIA) devices firmware|-[WI]-)", re.IGNORECASE)
_GUID_HEADER = re.compile(r"^(?:UID\s+GuidsNumber|Node\s+Port1\b.*)$", re.IGNORECASE)

_TEXT_FIELDS = {
    "fw version": "fw_version",
    "fw version(running)": "fw_version_running",
    "fw version (running)": "fw_version_running",
    "fw release date": "fw_release_date",
    "product version": "product_version",
    "psid": "psid",
    "part number": "part_number",
    "device type": "device_type",
    "description": "device_description",
    "status": "fw_update_status",
}
_FIRST_TOKEN_FIELDS = {
    "base guid": "base_guid",
    "base mac": "base_mac",
    "guids": "base_guid",
    "macs": "base_mac",
}


def _rom_samples(value: str) -> list[Sample]:
    return [
        Sample(DEVICE, "rom_version", text=m["version"], raw_key=m["type"]) for m in _ROM_ITEM.finditer(value)
    ]


def _field_samples(key: str, value: str) -> list[Sample]:
    norm = re.sub(r"\s+", " ", key.strip().lower())
    if is_na(value, NA_NIC):
        return []
    if norm in _TEXT_FIELDS:
        if norm == "description" and _GUID_HEADER.match(value):
            return []  # flint's column header for the GUID/MAC rows that follow
        return [Sample(DEVICE, _TEXT_FIELDS[norm], text=value, raw_key=key.strip())]
    if norm in _FIRST_TOKEN_FIELDS:
        return [Sample(DEVICE, _FIRST_TOKEN_FIELDS[norm], text=value.split()[0], raw_key=key.strip())]
    if norm == "rom info":
        return _rom_samples(value)
    return []


def _version_row_samples(match: re.Match[str]) -> list[Sample]:
    name = match["name"]
    current, available = match["current"], match["available"]
    norm = re.sub(r"\s+", "", name.lower())
    if norm == "fw":
        out = [] if is_na(current, NA_NIC) else [Sample(DEVICE, "fw_version", text=current, raw_key=name)]
        if available is not None and not is_na(available, NA_NIC):
            out.append(Sample(DEVICE, "fw_version_available", text=available, raw_key=name))
        return out
    if norm == "fw(running)":
        return [] if is_na(current, NA_NIC) else [Sample(DEVICE, "fw_version_running", text=current, raw_key=name)]
    return [] if is_na(current, NA_NIC) else [Sample(DEVICE, "rom_version", text=current, raw_key=name)]


class _Blocks:
    """Collects samples per mlxfwmanager device block; the block's entity is only known once its PCI name is read."""

    def __init__(self) -> None:
        self.done: list[Sample] = []
        self.pending: list[Sample] = []
        self.entity = DEVICE

    def add(self, samples: list[Sample]) -> None:
        self.pending.extend(samples)

    def close(self) -> None:
        if self.entity != DEVICE:
            self.pending = [
                s if s.metric == "tool_error" else dataclasses.replace(s, entity=self.entity)
                for s in self.pending
            ]
        self.done.extend(self.pending)
        self.pending, self.entity = [], DEVICE


def parse(text: str) -> list[Sample]:
    refuse_empty(NAME, "flint / mlxfwmanager", text)
    blocks = _Blocks()
    in_versions = False
    in_rom_info = False
    for line_no, raw_line in lines(text):
        line = strip_ansi(raw_line)
        if is_noise(line) or _UNDERLINE.match(line) or _BANNER.match(line):
            continue
        message = nic_tool_error(line)
        if message is not None:
            blocks.add([tool_error(DEVICE, message)])
            continue
        if _DEVICE_BLOCK.match(line):
            blocks.close()
            in_versions = in_rom_info = False
            continue
        if in_rom_info and _ROM_CONTINUATION.match(line):
            blocks.add(_rom_samples(line))
            continue
        if in_versions and ":" not in line and (match := _VERSION_ROW.match(line)):
            blocks.add(_version_row_samples(match))
            continue
        match = _ROW.match(line)
        if not match:
            raise ParseError(NAME, line_no, raw_line)
        key, value = match["key"], match["value"]
        norm = key.strip().lower()
        in_versions = norm == "versions"
        in_rom_info = norm == "rom info"
        if norm == "pci device name" and not is_na(value, NA_NIC):
            blocks.entity = value
        elif not in_versions:
            blocks.add(_field_samples(key, value))
    blocks.close()
    return blocks.done
