"""`manifest.json`: read as a regular file within the size cap, every key its readers use type-checked, and
normalised (`targets` always objects with a name). A bad manifest is a BundleError naming the file and the key."""

from __future__ import annotations

import json
import math
from pathlib import Path

from rdmatool import files
from rdmatool.bundle.names import FORMAT, TARGET_NAME
from rdmatool.errors import BundleError


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
        raise BundleError(f"{manifest_path}: unreadable manifest ({one_line(exc)})") from None
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
        raise BundleError(f"{where}: format {shown_value(found)} is not {FORMAT!r}")
    out = dict(manifest)
    for key in ("created", "rdmatool_version"):
        _check(where, key, manifest.get(key), _STR_OR_NONE)
    interval = manifest.get("interval_s")
    if interval is not None and not finite_number(interval):
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
        raise BundleError(f"{where}: key {key}.name: {shown_value(name)} is not a target name "
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


def finite_number(value: object) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return isinstance(value, int) or math.isfinite(value)


def _bad(where: str, key: str, expected: str, value: object) -> BundleError:
    return BundleError(f"{where}: key {key}: expected {expected}, got {shown_value(value)}")


def shown_value(value: object) -> str:
    """A value read from a file, shown in one short line (never a whole document)."""
    if isinstance(value, dict | list):
        return type(value).__name__
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**30:
        return "a very large integer"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 200 else text[:197] + "..."


# ------------------------------------------------------------------------------------------------ the outputs
