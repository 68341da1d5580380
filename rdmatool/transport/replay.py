"""Moved: a replay is not a transport. The bundle's own reader of saved collections is rdmatool.bundle.replay; this
name stays only until its last caller follows."""

from rdmatool.bundle.replay import perf_records, targets  # noqa: F401
