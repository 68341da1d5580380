"""The line loop the Onyx, EOS and NX-OS parsers share: which lines of a CLI transcript are furniture, which are
the CLI complaining. A vendor module (`_onyx`, `_eos`, `_nxos`) supplies `is_caret`, `cli_error`, `error_sample`."""

from __future__ import annotations

import re
from collections.abc import Iterator
from types import ModuleType

from rdmatool.model import Sample
from rdmatool.parsers._common import lines


def cli_lines(text: str, vendor: ModuleType, *furniture: re.Pattern[str]) -> Iterator[tuple[int, str, Sample | None]]:
    """(line number, line, the `tool_error` sample when the line is a CLI error, else None) for every line worth
    reading: blank lines, `#` comments, the vendor's caret markers and lines matching `furniture` (table rules,
    headers) are skipped."""
    for line_no, line in lines(text):
        stripped = line.strip()
        if not stripped or stripped.startswith("#") or vendor.is_caret(line) or any(p.match(line) for p in furniture):
            continue
        message = vendor.cli_error(line)
        yield line_no, line, vendor.error_sample(message) if message else None
