"""Collect then diagnose: a live fabric read into a bundle (kept with `save`, else in a temporary folder removed
afterwards) and the bundle diagnosed, as `rdmatool diagnose -i` does."""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Callable
from pathlib import Path

from rdmatool.collect import CollectOptions, TargetOutcome, nothing_collected
from rdmatool.collect import collect_to_bundle as collect_service
from rdmatool.diagnose.pipeline import diagnose_bundle
from rdmatool.errors import NoData
from rdmatool.model import Target
from rdmatool.outcome.result import DiagnoseResult

# What collects: (targets, options, folder) -> (the outcome of each target, the bundle's path). The command line
# passes one that draws a progress bar.
Collector = Callable[[list[Target], CollectOptions, str], tuple[list[TargetOutcome], str]]


def collect_and_diagnose(targets: list[Target], options: CollectOptions, save: str | None = None, *,
                         source: str = "", collect: Collector = collect_service,
                         on_collected: Callable[[list[TargetOutcome]], None] | None = None,
                         **diagnose_kwargs) -> DiagnoseResult:
    """The targets collected into `save` (or a temporary folder) and the bundle diagnosed (rdmatool.diagnose.pipeline
    .diagnose_bundle takes `diagnose_kwargs`). `on_collected` sees the outcomes before the diagnosis starts.
    NoData (`<source>: <why>`) when no target answered: there is nothing to diagnose."""
    kept = contextlib.nullcontext(None) if save else tempfile.TemporaryDirectory(prefix="rdmatool-")
    with kept as workdir:
        outcomes, path = collect(targets, options, save or str(Path(workdir) / "bundle"))
        nothing = nothing_collected(outcomes)
        if nothing:
            raise NoData(f"{source}: {nothing}")
        if on_collected is not None:
            on_collected(outcomes)
        return diagnose_bundle(path, **diagnose_kwargs)
