"""The parsed samples of a bundle, kept beside its raw outputs in `BUNDLE/samples.npz`.

Parsing 20,000 command outputs of a 1,000-host fleet takes Python ten seconds or more; reading back numbers parsed
once takes a fraction of one. `rdmatool collect` writes the store with the bundle, and any reader that had to parse
something writes it back (best effort: a read-only bundle is simply parsed each time).

The store is a cache, never the record — the raw outputs stay the truth:
- every output's entry remembers the size and modification time of its raw and side files, so an output that was
  edited, added or removed since (a hand-written or hand-fixed bundle) is parsed again, alone;
- the store names a digest of the code that produced it (parsers, sample model, this module); other code ignores it;
- it is sealed with a keyed MAC whose key stays with this machine's user (`store_mac`): a store this user's rdmatool
  did not write (a copied bundle, a doctored `samples.npz` of valid structure and changed values) does not verify
  and the raw outputs are parsed instead;
- it is read with `allow_pickle=False`: a bundle from someone else is data and never runs code;
- a store is used only when every member has the documented dtype and shape, the row and output counts agree, every
  string code is inside the pool (which holds each string once), and the whole stays within a size budget
  proportional to the bundle's raw files; anything else — a damaged, truncated or doctored store, a symlink, a FIFO
  — is ignored and the raw outputs are parsed instead.

Members (NumPy arrays; JSON documents travel as UTF-8 bytes in uint8 arrays):
  meta      {"format", "digest", "skipped"}
  strings   the string pool (JSON list); the code columns index it, -1 is None
  out_*     one entry per raw output, in the bundle's order: snapshot, raw_size, raw_mtime, side_size, side_mtime,
            exit_code, rows (int64; MISSING_INT when absent), time (float64, epoch s of the read) and the codes of
            target, stem (file name without .txt), parser, qualifier, failure (a parse error's one line)
  entity, metric, raw_key, text      int32 codes per sample row
  priority, size_bytes               int64 per row; MISSING_INT when absent
  value                              float64 per row (NaN when absent)
  exact                              uint64 per row: the reading as an exact integer when `is_int`, else 0
  is_int                             bool per row: the reading was an integer in [0, 2**64) (what counters are)

Which rows read the same counter (their series, `sample_columns.series_of`) is not stored: a stored id could only be
trusted after computing it again from the codes, which is all that computing it costs. Members are deflated at
level 3 (COMPRESS_LEVEL): at 10,000 hosts, 460 MB of members write in under a second instead of two and a half at
zlib's default, and read back as fast; the file is 15 % larger.
"""

from __future__ import annotations

import hashlib
import io
import json
import threading
import zipfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import numpy as np

from rdmatool import bundle as bundle_io
from rdmatool import files, parsers
from rdmatool.table import store_mac
from rdmatool.table.sample_columns import (
    _ROW_COLUMNS,
    ARRAY_NAMES,
    MISSING_INT,
    OUT_INT,
    OUT_TEXT,
    Columns,
    Output,
    output_columns,
    output_list,
    parse_all,
    series_of,
)

STORE_NAME = "samples.npz"
FORMAT = "rdmatool-samples/3"
COMPRESS_LEVEL = 3


@cache
def code_digest() -> str:
    """What produced a store: the parser sources, the sample model, the parse errors' wording (failures are stored),
    the column model and this module. Any edit makes old stores stale."""
    root = Path(__file__).resolve().parent.parent  # rdmatool/
    files = sorted((root / "parsers").rglob("*.py")) + [root / "model.py", root / "errors.py",
                                                         root / "table" / "sample_columns.py", Path(__file__).resolve(),
                                                         root / "bundle" / "peers.py"]  # names per-peer outputs
    digest = hashlib.sha256(FORMAT.encode())
    for path in files:
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:32]


@dataclass
class Stored:
    outputs: dict[str, np.ndarray]  # output_columns
    strings: list[str]
    arrays: dict[str, np.ndarray]  # ARRAY_NAMES
    # What the reading that wrote the store skipped inside the packs (an entry with no output file name or side data
    # of the wrong type): a current store is trusted without opening its packs, and must still say so.
    skipped: list[str] = field(default_factory=list)


# What each member must be (dtype; every member is one-dimensional). The row codes and output codes are int32 string
# codes, the rest as `Columns.arrays` and `output_columns` make them.
ROW_DTYPES = {**{c: np.dtype(np.int32) for c in _ROW_COLUMNS}, "priority": np.dtype(np.int64),
              "size_bytes": np.dtype(np.int64), "value": np.dtype(np.float64), "exact": np.dtype(np.uint64),
              "is_int": np.dtype(bool)}
OUT_DTYPES = {**{c: np.dtype(np.int64) for c in OUT_INT}, "time": np.dtype(np.float64),
              **{c: np.dtype(np.int32) for c in OUT_TEXT}}
# A store's members together, uncompressed, without a bundle to size it by (see `budget_for`).
DEFAULT_BUDGET = 1 << 30
_INT32 = np.iinfo(np.int32)
_CHUNK = 1 << 20
# From this many bytes of row members on, a store is read two members at a time (a 1,000-host store has ~46 MB).
_THREADED_BYTES = 64 << 20


def budget_for(raw_bytes: int) -> int:
    """The most a store of a bundle with this many bytes of raw and side files may hold, uncompressed: its samples
    take about as many bytes as the text they were parsed from, so 16 times that (plus room for a tiny bundle) is
    generous for a real store and stops a doctored one (a zip bomb, a header claiming a billion rows) early."""
    return 16 * max(0, raw_bytes) + (16 << 20)


def load(bundle_dir: Path, budget: int | None = None) -> Stored | None:
    """The bundle's store when it exists, is ours, was written by this code and passes every consistency check;
    None otherwise (parse instead). `budget`: the most its members may hold uncompressed (`budget_for`)."""
    budget = DEFAULT_BUDGET if budget is None else budget
    try:
        data = files.read_regular_bytes(bundle_dir / STORE_NAME, max_bytes=budget)
    except (OSError, files.UnsafeFileError):  # absent, a symlink, a FIFO, a device, too large: parse instead
        return None
    # Read whole and checked once: the bytes verified are the bytes read (a few MB compressed for 1,000 hosts).
    if not store_mac.verifies(data):  # not written by this user's rdmatool: its values may not be the outputs'
        return None
    # The store is only a cache: whatever a damaged or doctored file makes the reader trip over (zip, zlib, numpy,
    # JSON or a check below), the raw outputs are still there to parse, so any failure here means "no store".
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            return _read_store(archive, budget)
    except Exception:
        return None


def _read_store(archive: zipfile.ZipFile, budget: int) -> Stored | None:
    members = ["meta", "strings", *ROW_DTYPES, *(f"out_{name}" for name in OUT_DTYPES)]
    infos = {name: archive.getinfo(f"{name}.npy") for name in members}
    if sum(info.file_size for info in infos.values()) > budget:
        return None

    def member(name: str, dtype: np.dtype) -> np.ndarray:
        with archive.open(infos[name]) as stream:  # reads at most the member's declared size
            array = np.lib.format.read_array(stream, allow_pickle=False)
        if not isinstance(array, np.ndarray) or array.dtype != dtype or array.ndim != 1:
            raise ValueError(f"{name}: not a one-dimensional {dtype} array")
        return array

    meta = json.loads(member("meta", np.dtype(np.uint8)).tobytes().decode("utf-8"))
    if not isinstance(meta, dict) or meta.get("format") != FORMAT or meta.get("digest") != code_digest():
        return None
    wanted = {"strings": np.dtype(np.uint8), **ROW_DTYPES, **{f"out_{name}": OUT_DTYPES[name] for name in OUT_DTYPES}}
    if sum(infos[name].file_size for name in ROW_DTYPES) < _THREADED_BYTES:
        read = {name: member(name, dtype) for name, dtype in wanted.items()}
    else:
        # Inflating (zlib lets go of the GIL) and first writing a fleet's 460 MB of members: two members at a time
        # (a ZipFile reads several members at once, each through its own position in the file).
        with ThreadPoolExecutor(2, thread_name_prefix="store-read") as pool:
            read = dict(zip(wanted, pool.map(member, wanted, wanted.values())))
    strings = json.loads(read["strings"].tobytes().decode("utf-8"))
    arrays = {name: read[name] for name in ROW_DTYPES}
    outputs = {name: read["out_" + name] for name in (*OUT_INT, "time")}
    text_codes = {name: read["out_" + name] for name in OUT_TEXT}
    if not _well_formed(strings, arrays, outputs, text_codes):
        return None
    pool = np.array([*strings, None], dtype=object)
    outputs.update({name: pool[codes] for name, codes in text_codes.items()})
    skipped = meta.get("skipped")
    skipped = [line for line in skipped if isinstance(line, str)] if isinstance(skipped, list) else []
    return Stored(outputs, strings, arrays, skipped)


def _well_formed(strings, arrays: dict[str, np.ndarray], outputs: dict[str, np.ndarray],
                 text_codes: dict[str, np.ndarray]) -> bool:
    """Everything a reader relies on, checked — a damaged or doctored file must not get further than here, neither as
    a traceback nor as findings no parse of the raw files would give. The members' dtypes and dimensions are
    checked as they are read."""
    # The codes name strings: a string twice in the pool would make one counter two series.
    if not (isinstance(strings, list) and all(isinstance(x, str) for x in strings)) or len(set(strings)) < len(strings):
        return False
    n, m = len(arrays["value"]), len(outputs["rows"])
    if any(len(a) != n for a in arrays.values()) or any(len(a) != m for a in (*outputs.values(),
                                                                               *text_codes.values())):
        return False
    size = len(strings)
    # Parsers always name the entity and metric, and every output has a target, a file and a parser: only the other
    # codes may be -1 (None).
    required = [arrays["entity"], arrays["metric"], text_codes["target"], text_codes["stem"], text_codes["parser"]]
    optional = [arrays["raw_key"], arrays["text"], text_codes["qualifier"], text_codes["failure"]]
    if any(len(c) and (c.min() < 0 or c.max() >= size) for c in required) \
            or any(len(c) and (c.min() < -1 or c.max() >= size) for c in optional):
        return False
    rows = outputs["rows"]
    if m and (rows.min() < 0 or rows.max() > n):  # bounded first, so the sum below cannot wrap around
        return False
    if int(rows.sum()) != n or (rows[text_codes["failure"] >= 0] != 0).any():  # a failed parse yields no rows
        return False
    if m and (outputs["snapshot"].min() < 0 or outputs["raw_size"].min() < 0):
        return False
    side_missing = outputs["side_size"] == MISSING_INT
    if (side_missing != (outputs["side_mtime"] == MISSING_INT)).any() \
            or (outputs["side_size"][~side_missing] < 0).any():
        return False
    exit_code = outputs["exit_code"]
    if ((exit_code != MISSING_INT) & ((exit_code < _INT32.min) | (exit_code > _INT32.max))).any():
        return False
    # An exact reading is the float reading's integer; a float reading has no exact one. Checked a million rows at a
    # time: the temporaries of the whole column (72 MB each at 10,000 hosts) would cost more to map than to compare.
    is_int, exact, value = arrays["is_int"], arrays["exact"], arrays["value"]
    for start in range(0, n, _CHUNK):
        part = slice(start, start + _CHUNK)
        ints = is_int[part]
        if (exact[part][~ints] != 0).any() or (value[part][ints] != exact[part][ints].astype(np.float64)).any():
            return False
    return _parsers_match_files(strings, text_codes["stem"], text_codes["parser"])


def _parsers_match_files(strings: list[str], stems: np.ndarray, parser_codes: np.ndarray) -> bool:
    """Each output's parser is the one its file is named after (`<parser>[.<qualifier>]`), checked once per distinct
    (file name, parser) pair — a few hundred in a 1,000-host bundle."""
    pairs = np.unique(stems.astype(np.int64) * (len(strings) + 1) + parser_codes)
    for pair in pairs.tolist():
        stem, parser = divmod(pair, len(strings) + 1)
        if strings[stem].partition(".")[0] != strings[parser]:
            return False
    return True


def save(bundle_dir: Path, outputs: dict[str, np.ndarray], strings: list[str], arrays: dict[str, np.ndarray],
         skipped: list[str] | None = None) -> bool:
    """Write the store atomically (temporary file, fsync, rename); False when the bundle is not writable.
    `skipped`: what the reading skipped inside the packs (Stored.skipped)."""
    meta = {"format": FORMAT, "digest": code_digest(), "skipped": list(skipped or [])}
    pool = Columns().with_pool(strings)
    members = {f"out_{name}": outputs[name] for name in (*OUT_INT, "time")}
    members.update({f"out_{name}": pool.codes_of(outputs[name].tolist()) for name in OUT_TEXT})
    members.update({"meta": _json_bytes(meta), "strings": _json_bytes(pool.strings)})
    members.update({name: arrays[name] for name in ARRAY_NAMES})
    buffer = _npz(members)
    with buffer.getbuffer() as view:  # unsealed when there is no key: then never trusted, parsed each time
        store_mac.seal(view)
    try:
        # Replaces whatever is at the final name (a symlink too), never writes through it: the bundle may be
        # someone else's.
        files.write_atomic_with(bundle_dir / STORE_NAME, lambda handle: handle.write(buffer.getbuffer()))
    except OSError:
        return False
    return True


def _npz(members: dict[str, np.ndarray]) -> io.BytesIO:
    """The members as `np.savez_compressed` writes them, deflated at COMPRESS_LEVEL. A member that writes itself
    (`write_npy`: a merge's column, kept in its inputs' parts) writes the same bytes without being made whole first."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=COMPRESS_LEVEL) as archive:
        for name, array in members.items():
            with archive.open(f"{name}.npy", "w", force_zip64=True) as stream:
                if hasattr(array, "write_npy"):
                    array.write_npy(stream)
                else:
                    np.lib.format.write_array(stream, np.asanyarray(array), allow_pickle=False)
        archive.comment = store_mac.BLANK_SEAL  # the archive's last bytes, where `save` writes the MAC
    return buffer


def _json_bytes(doc) -> np.ndarray:
    return np.frombuffer(json.dumps(doc, separators=(",", ":")).encode("utf-8"), dtype=np.uint8)


def write_for(bundle_dir: Path, written: list[tuple[int, str, Path, object]]) -> bool:
    """Parse freshly written outputs — (snapshot, target, raw file, CommandResult) — and store them with the bundle."""
    columns = Columns()
    latest = {w[2]: w for w in written}  # an output written twice keeps its last text, as the file does
    jobs = [(Output.of_result(snapshot, target, raw.stem, bundle_io.raw_signature(raw), bundle_io.side_signature(raw),
                              result), result.stdout)
            for snapshot, target, raw, result in sorted(latest.values(), key=lambda w: (w[0], w[1], w[2].name))]
    outputs = parse_all(jobs, columns, set(parsers.names()))
    return save(bundle_dir, output_columns(outputs), columns.strings, columns.arrays())


class StoreBuilder:
    """The store of a bundle being written, parsed one target at a time while the others are still collected: at
    commit only the shares are joined and saved, instead of every output parsed then. The store is the one
    `write_for` writes from the same outputs (same order, same codes), which it falls back to when the outputs
    committed are not exactly the ones parsed here (an output written twice, a target written without `add`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._known = set(parsers.names())
        self._shares: dict[tuple[int, str], tuple[list[Output], list[str], dict[str, np.ndarray]]] = {}
        self._raws: set[Path] = set()
        self._twice = False

    def add(self, written: list[tuple[int, str, Path, object]],
            signatures: dict[Path, tuple[list[int], list[int] | None]] | None = None) -> None:
        """Parse one target's freshly written outputs — (snapshot, target, raw file, CommandResult) — into shares
        of their own (thread-safe; the parse runs in the caller's thread). `signatures`: the raw and side files'
        signatures as the writer made them (BundleWriter.signatures, after `sync_soon` wrote the side data); a file
        not in it, or without its side file's signature yet, is looked at."""
        known = signatures or {}

        def signed(raw: Path) -> tuple[list[int] | None, list[int] | None]:
            mine = known.get(raw)
            if mine is not None and mine[1] is not None:
                return mine
            return bundle_io.raw_signature(raw), bundle_io.side_signature(raw)

        groups: dict[tuple[int, str], list] = {}
        for entry in written:
            groups.setdefault((entry[0], entry[1]), []).append(entry)
        for key, entries in groups.items():
            columns = Columns()
            jobs = [(Output.of_result(snapshot, target, raw.stem, *signed(raw), result), result.stdout)
                    for snapshot, target, raw, result in sorted(entries, key=lambda w: w[2].name)]
            outputs = parse_all(jobs, columns, self._known)
            with self._lock:
                raws = {entry[2] for entry in entries}
                self._twice = self._twice or key in self._shares or bool(raws & self._raws) or len(raws) < len(entries)
                self._shares[key] = (outputs, columns.strings, columns.arrays())
                self._raws |= raws

    def write(self, bundle_dir: Path, written: list[tuple[int, str, Path, object]]) -> bool:
        """Save the store of `written` (a BundleWriter's `before_commit`)."""
        with self._lock:
            complete = not self._twice and self._raws == {w[2] for w in written} and len(written) == len(self._raws)
            shares = [self._shares[key] for key in sorted(self._shares)]
        if not complete:
            return write_for(bundle_dir, written)
        columns = Columns()
        outputs: list[Output] = []
        for share_outputs, strings, arrays in shares:  # the order of write_for: snapshot, target, file name
            outputs.extend(share_outputs)
            columns.extend(strings, arrays)
        return save(bundle_dir, output_columns(outputs), columns.strings, columns.arrays())

@dataclass
class Parsed:
    """A bundle directory's samples as columns, current with its files: what the frame is built from."""

    manifest: dict  # as bundle.read_manifest normalised it
    outputs: dict[str, np.ndarray]  # output_columns, in the bundle's order
    strings: list[str]
    arrays: dict[str, np.ndarray]  # ARRAY_NAMES and "series"
    skipped: list[str]  # one line per file that was not read, with the reason
    # The target folders' other files as the same scan found them (bundle.Scan.others): the packet captures.
    others: list[tuple[int, str, str, str]] | None = None


def load_or_parse(path: str | Path, write_store: bool = True) -> Parsed:
    """The samples of a bundle directory: from its store where it is still current, parsing only the outputs that are
    new or changed since (all of them for a bundle without a store). When something had to be parsed, the store is
    written back for the next reader (best effort). Files that cannot be read safely are left out and named in
    `skipped`; a store that fails any check is ignored."""
    root = Path(path)
    manifest = bundle_io.read_manifest(root)
    skipped: list[str] = []
    scanned = bundle_io.scan(root, skipped)
    stored = load(root, budget_for(_text_bytes(scanned)))
    with bundle_io.collector_paused():  # the comparison unpacks the listing's 250,000 tuples: see there
        current = stored is not None and _unchanged(stored.outputs, scanned)
    if current:
        arrays = {**stored.arrays, "series": series_of(stored.outputs, stored.arrays)}
        return Parsed(manifest, stored.outputs, stored.strings, arrays, skipped + stored.skipped, scanned.others)
    scanned_notes = len(skipped)
    listing, stems = bundle_io.expanded(scanned, skipped)
    previous = output_list(stored.outputs) if stored is not None else []
    firsts = np.cumsum([0] + [out.rows for out in previous])  # each stored output's first row
    index = {(out.snapshot, out.target, out.stem): (out, int(first)) for out, first in zip(previous, firsts)}
    n_stored = int(firsts[-1])
    fresh = Columns().with_pool(stored.strings if stored else [])
    outputs: list[Output | None] = []
    starts = np.full(len(listing), -1, dtype=np.int64)  # row of each output's first sample; -1: parsed below
    pending = []
    for i, ((snapshot, target, raw_path, raw_sig, side_sig), stem) in enumerate(zip(listing, stems)):
        hit = index.get((snapshot, target, stem))
        current = hit is not None and hit[0].raw_sig == raw_sig and hit[0].side_sig == side_sig
        if current:
            starts[i] = hit[1]
        else:
            pending.append((snapshot, target, stem, raw_path, raw_sig, side_sig))
        outputs.append(hit[0] if current else None)
    parsed = np.flatnonzero(starts < 0)  # fresh rows follow the stored ones, in the order of the listing
    fresh_outputs = parse_all(pending, fresh, set(parsers.names()), prepare=_read_output)
    for i, out in zip(parsed, fresh_outputs):
        outputs[i] = out
    rows = np.fromiter((out.rows for out in fresh_outputs), dtype=np.int64, count=len(fresh_outputs))
    starts[parsed] = n_stored + np.cumsum(rows) - rows
    if any(out.skipped is not None for out in fresh_outputs):
        # Unusable when read (a side file of the wrong shape, a file swapped since the scan): left out of the table
        # and of the store (so the next reader looks again), with the reason. They added no rows.
        skipped += [out.skipped for out in fresh_outputs if out.skipped is not None]
        keep = np.fromiter((out.skipped is None for out in outputs), dtype=bool, count=len(outputs))
        outputs, starts = [out for out in outputs if out.skipped is None], starts[keep]
    arrays = {k: stored.arrays[k] for k in ARRAY_NAMES} if stored is not None else fresh.arrays()
    if stored is not None and fresh.value:
        arrays = {k: np.concatenate([arrays[k], new]) for k, new in fresh.arrays().items()}
    counts = np.fromiter((o.rows for o in outputs), dtype=np.int64, count=len(outputs))
    begins = np.cumsum(counts) - counts
    if not ((starts == begins).all() and int(counts.sum()) == len(arrays["value"])):
        # Outputs changed, moved or went away (all of them, when every snapshot folder did): gather each one's rows
        # in the bundle's order.
        take = np.repeat(starts - begins, counts) + np.arange(int(counts.sum()))
        arrays = {k: v[take] for k, v in arrays.items()}
    columns = output_columns(outputs)
    arrays["series"] = series_of(columns, arrays)
    if write_store:  # with what was skipped past the scan (the packs' entries, outputs unusable when read)
        save(root, columns, fresh.strings, arrays, skipped[scanned_notes:])
    return Parsed(manifest, columns, fresh.strings, arrays, skipped, scanned.others)


def _text_bytes(scanned: bundle_io.Scan) -> int:
    """The bytes of a bundle's raw outputs and side data: a folder's outputs.json (format /2) is the side file of
    each of its outputs, so a side file is counted once per folder and signature, not once per output (which would
    count a fleet's side data some 17 times over, and the store's budget with it); a pack once."""
    listing = scanned.outputs
    sides = {(snapshot, target, *side) for snapshot, target, _, _, side in listing if side}
    return (sum(raw[0] for _, _, _, raw, _ in listing) + sum(side[2] for side in sides)
            + sum(signature[0] for _, _, _, signature in scanned.packs))


def _read_output(spec: tuple) -> tuple[Output, str]:
    """One raw output and its side file from disk, as the store records it (run where it is parsed); an unusable one
    comes back marked `skipped`, with no text."""
    snapshot, target, stem, raw_path, raw_sig, side_sig = spec
    try:
        result = bundle_io.read_result(target, Path(raw_path))
    except bundle_io.OutputSkipped as exc:
        return Output(snapshot, target, stem, raw_sig, side_sig, stem.partition(".")[0], None, float("nan"), None,
                      skipped=exc.reason), ""
    return Output.of_result(snapshot, target, stem, raw_sig, side_sig, result), result.stdout


def _unchanged(outputs: dict[str, np.ndarray], scanned: bundle_io.Scan) -> bool:
    """The stored outputs are exactly the bundle's: the folders' outputs in order, with the same sizes and
    modification times as their files, and the packed outputs (signed by their pack as raw and side file alike) in
    runs, one per pack, in order, each signed by its pack as it is now — a pack is trusted by its signature, as a
    file is, so the packs are not opened."""
    packed = (outputs["raw_size"] == outputs["side_size"]) & (outputs["raw_mtime"] == outputs["side_mtime"])
    if not scanned.packs:
        return not packed.any() and _folder_outputs_unchanged(outputs, scanned.outputs, scanned.stems)
    if scanned.outputs or not packed.all():  # folders beside the packs (a merge of old and new shards)
        mine = {name: outputs[name][~packed] for name in ("snapshot", "raw_size", "raw_mtime", "side_size",
                                                           "side_mtime", "target", "stem", "rows")}
        if not _folder_outputs_unchanged(mine, scanned.outputs, scanned.stems):
            return False
    snapshot, target = outputs["snapshot"][packed], outputs["target"][packed]
    n = len(snapshot)
    if not n:
        return False
    change = np.flatnonzero((snapshot[1:] != snapshot[:-1]) | (target[1:] != target[:-1])) + 1
    starts = np.concatenate([[0], change])
    if len(starts) != len(scanned.packs):
        return False
    pack_snapshot, pack_target, _, signature = zip(*scanned.packs)
    sizes = np.diff(np.append(starts, n))
    sig = np.array(signature, dtype=np.int64)
    return bool((snapshot[starts] == np.array(pack_snapshot, dtype=np.int64)).all()
                and (target[starts] == np.array(pack_target, dtype=object)).all()
                and (outputs["raw_size"][packed] == np.repeat(sig[:, 0], sizes)).all()
                and (outputs["raw_mtime"][packed] == np.repeat(sig[:, 1], sizes)).all())


def _folder_outputs_unchanged(outputs: dict[str, np.ndarray], listing: list[tuple], stems: list[str]) -> bool:
    """The stored outputs are exactly these folder outputs, in order, with the same sizes and modification times.
    `stems`: each listed output's file name without `.txt` (bundle.Scan.stems)."""
    if len(outputs["rows"]) != len(listing):
        return False
    if not listing:
        return True
    snapshot, target, _, raw_sig, side_sig = zip(*listing)
    missing = [MISSING_INT, MISSING_INT]
    raw = np.array(raw_sig, dtype=np.int64)
    side = np.array([s or missing for s in side_sig], dtype=np.int64)
    return bool((outputs["snapshot"] == np.array(snapshot, dtype=np.int64)).all()
                and (outputs["raw_size"] == raw[:, 0]).all() and (outputs["raw_mtime"] == raw[:, 1]).all()
                and (outputs["side_size"] == side[:, 0]).all() and (outputs["side_mtime"] == side[:, 1]).all()
                and (outputs["target"] == np.array(target, dtype=object)).all()
                and (outputs["stem"] == np.array(stems, dtype=object)).all())
