"""`manifest.json`: read as a regular file within the size cap, every key its readers use type-checked, and
normalised (`targets` always objects with a name). A bad manifest is a BundleError naming the file and the key."""

from __future__ import annotations

import functools
import json
import math
from pathlib import Path

from rdmatool import files
from rdmatool.bundle.names import FORMATS, QUALIFIER, TARGET_NAME
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
    """A manifest as parsed from JSON, validated against the shipped JSON Schema (`rdmatool/schemas/
    bundle-manifest.schema.json`, documented in docs/bundle-format.md) and put in the shape its readers expect:
    `targets` a list of objects with a string `name` (a bare name is `{"name": name}`), `failures` and `snapshots`
    lists (null or absent: empty). BundleError naming `where` and the key. Unknown keys are kept, and the values are
    kept as they were otherwise (what `bundle show --json` and a diagnosis print stays the same)."""
    if not isinstance(manifest, dict):
        raise BundleError(f"{where}: format {type(manifest).__name__!r} is not {_FORMATS_SHOWN}")
    if manifest.get("format") not in FORMATS or type(manifest.get("format")) is not str:
        found = manifest.get("format")
        raise BundleError(f"{where}: format {shown_value(found)} is not {_FORMATS_SHOWN}")
    error = _first_error(manifest)
    if error is not None:
        raise BundleError(f"{where}: {error}")
    interval = manifest.get("interval_s")
    if interval is not None and not finite_number(interval):  # JSON Schema's number admits NaN and infinity
        raise _bad(where, "interval_s", "a number or null", interval)
    out = dict(manifest)
    out["targets"] = [t if isinstance(t, dict) else {"name": t} for t in manifest.get("targets") or []]
    for i, target in enumerate(out["targets"]):
        # The schema's pattern is searched (JSON Schema's rule), and its `$` also passes a name ending in a newline;
        # a name becomes a folder of the bundle (`bundle merge` makes them), so it must match whole.
        if not TARGET_NAME.fullmatch(target["name"]):
            raise _bad(where, f"targets[{i}]" + (".name" if isinstance(manifest["targets"][i], dict) else ""),
                       "a target name (letters, digits, '_.-', starting with a letter or digit)", target["name"])
    out["failures"] = list(manifest.get("failures") or [])
    out["snapshots"] = list(manifest.get("snapshots") or [])
    subnet_sweeps(out, where)  # no schema entry: checked here, so that every reader refuses a malformed one
    return out


@functools.cache
def _validator():  # noqa: ANN202 - a jsonschema validator, built once (compiling the schema costs milliseconds)
    import jsonschema

    from rdmatool import schemas

    schema = schemas.load("bundle-manifest")
    return jsonschema.Draft202012Validator(schema, format_checker=None)


_TYPE_WORDS = {"string": "a string", "null": "null", "integer": "an integer", "number": "a number",
               "array": "a list", "object": "an object", "boolean": "a boolean"}


def _first_error(manifest: dict) -> str | None:
    """`key <path>: <what was expected>, got <value>` for the first schema violation (in document order), or None."""
    if _plainly_valid(manifest):
        return None
    errors = sorted(_validator().iter_errors(manifest),
                    key=lambda e: [(0, p, "") if isinstance(p, int) else (1, 0, p) for p in e.absolute_path])
    if not errors:
        return None
    error = errors[0]
    key = _key_path(error.absolute_path)
    value = error.instance
    if error.validator == "type":
        types = error.validator_value if isinstance(error.validator_value, list) else [error.validator_value]
        expected = " or ".join(_TYPE_WORDS.get(t, t) for t in types)
        return f"key {key}: expected {expected}, got {shown_value(value)}"
    if error.validator == "required":
        missing = next((k for k in error.validator_value if k not in value), "?")
        return f"key {_key_path([*error.absolute_path, missing])}: missing (required)"
    if error.validator == "pattern":
        return (f"key {key}: {shown_value(value)} is not a target name "
                "(letters, digits, '_.-', starting with a letter or digit)")
    if error.validator == "minimum":
        return f"key {key}: expected a non-negative integer or null, got {shown_value(value)}"
    return f"key {key}: {shown_value(value)} is not allowed here ({error.validator})"



def subnet_sweeps(manifest: dict, where: str = "manifest.json") -> list[dict]:
    """The manifest's `subnet_sweeps` (written by rdmatool.collect.sweep_record; absent without InfiniBand): one
    entry per subnet and snapshot, `{sm_lid, snapshot, host, port, complete, tools, tried, partial?}`. `host` is the
    target whose sweep outputs (parsers sminfo, ibnetdiscover, iblinkinfo, ibqueryerrors; qualifier `port`, e.g.
    `mlx5_0.1`) are that snapshot's view of the subnet, null when no host's sweep succeeded; `complete` false with
    `partial` (a line) when the sweep's budget cut it; `tried` the hosts whose sweep failed before, each with its
    error (their outputs stay under them, with their failures). BundleError naming the key when it is malformed."""
    entries = manifest.get("subnet_sweeps")
    if entries is None:
        return []
    if type(entries) is not list:
        raise _bad(where, "subnet_sweeps", "a list", entries)
    if len(entries) > MAX_SWEEP_ENTRIES:
        raise _bad(where, "subnet_sweeps", f"at most {MAX_SWEEP_ENTRIES:,} entries", f"{len(entries):,} entries")
    for i, entry in enumerate(entries):
        _check_sweep(where, f"subnet_sweeps[{i}]", entry)
    return entries


# Entries of `subnet_sweeps` (subnets x snapshots) and hosts tried for one: far above any real collection, low enough
# that a crafted manifest costs one pass, never a listing the size of the file.
MAX_SWEEP_ENTRIES = 100_000


def _check_sweep(where: str, key: str, entry: object) -> None:
    """One `subnet_sweeps` entry: its numbers whole, its host and the hosts tried target names (a host names a
    folder of the bundle), its port a qualifier, its texts strings."""
    if type(entry) is not dict:
        raise _bad(where, key, "an object", entry)
    for name in ("sm_lid", "snapshot"):
        if not (_integer(entry.get(name)) and entry[name] >= 0):
            raise _bad(where, f"{key}.{name}", "a whole number", entry.get(name))
    host, port = entry.get("host"), entry.get("port")
    if not (host is None or (type(host) is str and TARGET_NAME.fullmatch(host))):
        raise _bad(where, f"{key}.host", "a target name or null", host)
    if not (port is None or (type(port) is str and QUALIFIER.fullmatch(port))):
        raise _bad(where, f"{key}.port", "a port such as 'mlx5_0.1', or null", port)
    if type(entry.get("complete", False)) is not bool:
        raise _bad(where, f"{key}.complete", "a boolean", entry.get("complete"))
    if not _text_or_null(entry.get("partial")):
        raise _bad(where, f"{key}.partial", "a string or null", entry.get("partial"))
    tools = entry.get("tools", [])
    if type(tools) is not list or len(tools) > MAX_SWEEP_ENTRIES or not all(type(t) is str for t in tools):
        raise _bad(where, f"{key}.tools", "a list of tool names", tools)
    tried = entry.get("tried", [])
    if type(tried) is not list or len(tried) > MAX_SWEEP_ENTRIES:
        raise _bad(where, f"{key}.tried", f"a list of at most {MAX_SWEEP_ENTRIES:,} hosts", tried)
    for j, attempt in enumerate(tried):
        if type(attempt) is not dict:
            raise _bad(where, f"{key}.tried[{j}]", "an object", attempt)
        tried_host = attempt.get("host")
        if not (type(tried_host) is str and TARGET_NAME.fullmatch(tried_host)):
            raise _bad(where, f"{key}.tried[{j}].host", "a target name", tried_host)
        if not _text_or_null(attempt.get("error")):
            raise _bad(where, f"{key}.tried[{j}].error", "a string or null", attempt.get("error"))

# What the schema says of each key, for `_plainly_valid`: the JSON types allowed (jsonschema's meaning of each).
_FORMATS_SHOWN = " or ".join(repr(f) for f in FORMATS)
_TEXT = ("created", "rdmatool_version")
_TARGET_TEXT = ("address", "kind", "platform", "role", "user", "identity_file", "proxy_jump")
_TARGET_LISTS = ("groups", "ports")
_FAILURE_TEXT = ("parser", "qualifier", "error")
_SNAPSHOT_TEXT = ("started", "finished")


def _plainly_valid(manifest: dict) -> bool:
    """True only for a manifest the schema accepts, checked by hand in one pass: jsonschema takes about a second over
    the 1,000 targets of a shard (and ten over a merged fleet's). False means "let the schema say": a manifest with a
    violation, or with anything this check does not model, is validated by jsonschema, which words the error — so the
    messages are the schema's own. (tests/test_bundle_format.py holds the two to agreeing on every manifest this one
    accepts.)"""
    if type(manifest) is not dict or manifest.get("format") not in FORMATS or type(manifest["format"]) is not str:
        return False
    get = manifest.get
    if not all(_text_or_null(get(key)) for key in _TEXT):
        return False
    interval = get("interval_s")
    if not (interval is None or _number(interval)):
        return False
    snapshots, targets, failures = get("snapshots"), get("targets"), get("failures")
    if not all(v is None or type(v) is list for v in (snapshots, targets, failures)):
        return False
    for entry in snapshots or ():
        if type(entry) is not dict or not _count_or_null(entry.get("index")):
            return False
        if not all(_text_or_null(entry.get(key)) for key in _SNAPSHOT_TEXT):
            return False
    named = TARGET_NAME.fullmatch  # stricter than the schema's search; check_manifest asks the same of every name
    for entry in targets or ():
        if type(entry) is str:
            if not named(entry):
                return False
            continue
        if type(entry) is not dict:
            return False
        name = entry.get("name")
        if type(name) is not str or not named(name):
            return False
        if not all(_text_or_null(entry.get(key)) for key in _TARGET_TEXT):
            return False
        port = entry.get("port")
        if not (port is None or _integer(port)):
            return False
        for key in _TARGET_LISTS:
            value = entry.get(key)
            if not (value is None or (type(value) is list and all(type(v) is str for v in value))):
                return False
    for entry in failures or ():
        if type(entry) is not dict or type(entry.get("target")) is not str:
            return False
        if not all(_text_or_null(entry.get(key)) for key in _FAILURE_TEXT):
            return False
        if not _count_or_null(entry.get("snapshot")):
            return False
    return True


def _text_or_null(value: object) -> bool:
    return value is None or type(value) is str


def _integer(value: object) -> bool:
    """JSON Schema's integer (as jsonschema reads it): an int that is no bool, or a float with no fraction."""
    return type(value) is int or (type(value) is float and value.is_integer())


def _number(value: object) -> bool:
    return type(value) is int or type(value) is float


def _count_or_null(value: object) -> bool:
    """`{"type": ["integer", "null"], "minimum": 0}`."""
    return value is None or (_integer(value) and value >= 0)


def _key_path(path) -> str:  # noqa: ANN001 - a jsonschema path (a deque of keys and indexes)
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


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
