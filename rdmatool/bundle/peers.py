"""Which peer a perftest output of a bundle was run against, however its writer named it.

A per-peer output says `<test>@<peer>` in its qualifier (the side data's `qualifier`, or the file name of a writer
that kept it: `@` is not a file-name character, so `perftest.ib_write_bw_gpu02.txt` without side data). Other
writers name the peer differently, and their outputs are per-peer all the same:

    qualifier `<peer>`                      `perftest.gpu02.txt`: the test is the command's, else the output's title
    qualifier `<test>.<peer>`, `<test>_<peer>`  `perftest.ib_write_bw.gpu02.txt`, `perftest.ib_write_bw_gpu02.txt`
    a command naming a target              `ib_write_bw -d mlx5_0 10.0.0.2`: its server address (or name) is the
                                           address (or name) of another target of the manifest

`per_peer_qualifier` gives such an output the qualifier `<test>@<peer>` that the samples and the pair attribution
(rdmatool.pairs.bundle_results) read; any other output keeps its own. The peer is a target of the manifest other than
the output's own, never a guess.
"""

from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path

from rdmatool.bundle.manifest import read_manifest
from rdmatool.errors import BundleError, ParseError

PERFTEST = "perftest"
PEER_MARK = "@"  # as rdmatool.table.sample_columns.PEER_MARK, which this layer does not import
# A perftest program (`ib_write_bw`, `ib_send_lat`, `ib_atomic_bw`); a qualifier may start with one.
_TEST = re.compile(r"ib_(?:write|read|send|atomic)_(?:bw|lat)")
_TEST_THEN_PEER = re.compile(rf"(?P<test>{_TEST.pattern})[._@](?P<peer>.+)")


@dataclass(frozen=True)
class Peers:
    """The targets an output may have been run against: by name, and by address."""

    names: frozenset[str]
    by_address: dict[str, str]

    def named(self, word: str, own: str) -> str | None:
        """The target `word` is the name or the address of, when it is another than `own`."""
        peer = word if word in self.names else self.by_address.get(word)
        return peer if peer is not None and peer != own else None


def peers_of(manifest: dict) -> Peers:
    """The manifest's host targets, by name and by address."""
    names, by_address = set(), {}
    for target in manifest.get("targets") or []:
        if not isinstance(target, dict) or target.get("kind", "host") != "host":
            continue
        name = target.get("name")
        if isinstance(name, str) and name:
            names.add(name)
            address = target.get("address")
            if isinstance(address, str) and address:
                by_address.setdefault(address, name)
    return Peers(frozenset(names), by_address)


def per_peer_qualifier(own: str, qualifier: str | None, command: str, stdout: str, peers: Peers) -> str | None:
    """`<test>@<peer>` for a perftest output run against another target of the bundle (see the module's
    docstring), else the qualifier as it was."""
    if qualifier and PEER_MARK in qualifier:
        return qualifier
    words = command.split()
    test = next((w.rpartition("/")[2] for w in words if _TEST.fullmatch(w.rpartition("/")[2])), None)
    peer = None
    if qualifier:
        split = _TEST_THEN_PEER.fullmatch(qualifier)
        if split is not None and peers.named(split["peer"], own):
            test, peer = split["test"], split["peer"]
        else:
            peer = peers.named(qualifier, own)
    if peer is None and test is not None:
        after = words[[w.rpartition("/")[2] for w in words].index(test) + 1:]
        peer = next((p for w in after if not w.startswith("-") and (p := peers.named(w, own))), None)
    if peer is None:
        return qualifier
    test = test or _title_test(stdout)
    return f"{test}{PEER_MARK}{peer}" if test else qualifier


def _title_test(stdout: str) -> str | None:
    """The test an output's title names (`RDMA_Write BW Test` → `ib_write_bw`), as the perftest parser reads it."""
    from rdmatool.parsers import perftest  # the parser only for the outputs that name no test otherwise

    try:
        samples = perftest.parse(stdout)
    except ParseError:
        return None
    return next((s.entity for s in samples if isinstance(s.entity, str) and _TEST.fullmatch(s.entity)), None)


# The peers of the bundles read lately, by root, with the manifest's signature: every output of a bundle asks.
_PEERS: dict[str, tuple[tuple[int, int], Peers]] = {}
_PEERS_LOCK = threading.Lock()


def bundle_peers(raw: Path) -> Peers:
    """The peers of the bundle an output file is in (`<root>/snapshots/<i>/<target>[.outputs]/<stem>.txt`); none
    when its manifest cannot be read (the reader of the bundle says why)."""
    root = raw.parents[3] if len(raw.parents) > 3 else raw.parent
    key = str(root)
    try:
        st = os.stat(root / "manifest.json", follow_symlinks=False)
        signature = (st.st_size, st.st_mtime_ns)
    except OSError:
        return Peers(frozenset(), {})
    with _PEERS_LOCK:
        known = _PEERS.get(key)
    if known is not None and known[0] == signature:
        return known[1]
    try:
        found = peers_of(read_manifest(root))
    except BundleError:
        found = Peers(frozenset(), {})
    with _PEERS_LOCK:
        if len(_PEERS) >= 16:
            _PEERS.clear()
        _PEERS[key] = (signature, found)
    return found
