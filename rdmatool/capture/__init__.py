"""Packet-level evidence from pcap / pcapng captures: RoCEv2 flows, CNPs, ECN CE marks, PFC pause frames, PSN
gaps, other traffic on the RoCE class and periodic bursts.

- `reader`   the framing (scapy's RawPcapReader / RawPcapNgReader), file checks, errors with byte offsets;
- `scan`     one pass over the records, headers read from the raw bytes (no per-packet dissection);
- `periodic` the period of a class's bursts (autocorrelation) and whether bursts meet pause / CE peaks;
- `summary`  the public `summary` object; `facts` the capture's figures as facts for the rules engine (playbook
  `50-capture.yaml`), for `rdmatool pcap` and for `diagnose` on a bundle holding `capture.<device>.pcap` files;
- `remote`   `rdmatool capture`: one bounded tcpdump on a host over SSH, streamed into a bundle.

`analyse_file(path, options)` → (summary, tally). Heavy imports (scapy, numpy) happen on first use.
"""

from __future__ import annotations

import os

from rdmatool.capture.reader import CaptureError
from rdmatool.capture.scan import Options

__all__ = ["CaptureError", "Options", "analyse_file"]


def analyse_file(path: str | os.PathLike, options: Options, max_bytes: int | None = None):
    """(summary dict, Tally) of one capture file; CaptureError naming the file and the byte offset."""
    from rdmatool.capture.reader import open_capture
    from rdmatool.capture.scan import scan
    from rdmatool.capture.summary import summarise

    cap = open_capture(path, max_bytes)
    try:
        tally = scan(cap, options)
    finally:
        cap.close()
    return summarise(tally), tally
