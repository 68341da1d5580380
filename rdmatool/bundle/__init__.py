"""The on-disk bundle: the replayable record of what the fabric said (a public format others may write too).

```
BUNDLE/manifest.json     {"format": "rdmatool-bundle/3", "created", "rdmatool_version", "interval_s",
                          "snapshots": [{"index", "started", "finished"}], "targets": [...], "failures": [...]}
BUNDLE/inventory.yaml    resolved targets, no secrets
BUNDLE/snapshots/<i>/<target>.outputs   format /3: a target's outputs of a snapshot in one file — a JSON header line
                          {"format": "rdmatool-outputs/1", "outputs": [{"name": "<parser>[.<qualifier>]", "bytes",
                          side keys...}, ...]}, then the raw outputs one after the other
BUNDLE/snapshots/<i>/<target>/<parser>[.<qualifier>].txt    formats /1, /2 (still read): raw output of one command
BUNDLE/snapshots/<i>/<target>/outputs.json   format /2: {"<parser>[.<qualifier>]": {"command", "exit_code", "stderr",
                                               "started", "duration_s", "error"[, "qualifier"]}, ...}
BUNDLE/snapshots/<i>/<target>/<parser>[.<qualifier>].json   format /1 (still read): one such side file per output
BUNDLE/samples.npz       optional: the parsed samples, a cache checked against the raw files (rdmatool.table.samples_store)
```
The side data is optional when reading (absent = exit 0); a folder with `outputs.json` takes its side data from it
alone. A target folder still holds what is not an output (a packet capture). A bundle is built in a hidden sibling
directory and renamed into place, so an interrupted run never leaves a half bundle under the final name, and an
existing bundle of the same name is replaced only once the new one is complete.

A bundle may come from elsewhere, so reading one trusts nothing in it:
- only regular files are read, never through a symlink (a symlinked `/etc/shadow` must not leak into a message), and
  directories are listed without following symlinks; FIFOs, devices and sockets are skipped;
- each file is read up to a cap: 64 MiB, or the environment variable `RDMATOOL_MAX_OUTPUT_BYTES` (bytes); a larger
  raw output, side file or manifest is not read (see rdmatool.files);
- every manifest key is type-checked (`targets`: a list of names or of objects with a string `name`; `failures`,
  `snapshots`: lists of objects; `interval_s`: a number) and normalised (`Bundle.targets` are always objects with a
  name); a bad manifest is a BundleError naming the file and the key;
- an output whose raw or side file is unusable (not a regular file, too large, a side file of the wrong shape or
  types, an unsafe name) is skipped with a one-line reason in `Bundle.skipped` (and the analysis' `skipped`), and
  the other outputs are read as usual: one broken output never hides the rest of the fabric.
The writer refuses what would put a file outside the bundle: an unregistered parser, an unsafe target name or
qualifier (BundleError naming the target, parser and qualifier).

The package, one job a module: `names` (what may become a file name), `manifest` (the manifest read and checked),
`reader` (the outputs, read as untrusted data), `writer` (a bundle built aside and renamed into place), `replay`
(a saved bundle read back as the collection it records: its targets and its perftest results).
"""

from rdmatool.bundle.manifest import check_manifest, read_manifest
from rdmatool.bundle.names import (
    FORMAT,
    FORMATS,
    OUTPUTS_FILE,
    PACK_FORMAT,
    PACK_SUFFIX,
    QUALIFIER,
    TARGET_NAME,
    file_stem,
)
from rdmatool.bundle.reader import (
    Bundle,
    BundleEntry,
    OutputSkipped,
    Scan,
    collector_paused,
    expanded,
    list_outputs,
    packed_in,
    raw_signature,
    read,
    read_result,
    scan,
    scan_outputs,
    side_signature,
)
from rdmatool.bundle.writer import BundleWriter

__all__ = [
    "FORMAT", "FORMATS", "OUTPUTS_FILE", "PACK_FORMAT", "PACK_SUFFIX", "QUALIFIER", "TARGET_NAME", "Bundle",
    "BundleEntry", "BundleWriter", "OutputSkipped", "Scan", "check_manifest", "collector_paused", "expanded",
    "file_stem", "list_outputs", "packed_in", "raw_signature", "read", "read_manifest", "read_result", "scan",
    "scan_outputs", "side_signature",
]
