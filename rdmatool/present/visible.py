"""Text a device said, made visible: written to a terminal, pasted into a shell or drawn in a figure, it is the
characters it is and nothing acts on it (rdmatool.report.shown builds every human view on it; the figures of the
lower layers use it directly)."""

from __future__ import annotations

import re

# C0 controls (but tab and newline, decided by the caller), DEL, C1 controls; the bidirectional overrides and
# isolates, the zero-width and line/paragraph separators and the BOM: text that would hide or reorder what follows.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_NAMED = {"\x1b": "\\e", "\r": "\\r", "\x07": "\\a", "\x08": "\\b", "\x0c": "\\f", "\x0b": "\\v", "\x00": "\\0"}


def _visible(match: re.Match) -> str:
    char = match.group(0)
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def terminal(text, newlines: bool = False) -> str:
    """`text` safe to write to a terminal or paste into a shell: no byte a terminal or a line editor acts on. With
    `newlines`, line breaks and tabs are kept (prose); without, they are shown as `\\n` and `\\t` (one-line fields)."""
    text = text if isinstance(text, str) else str(text)
    text = _SURROGATE.sub("\ufffd", text)
    text = _CONTROL.sub(_visible, text)
    if not newlines:
        text = text.replace("\n", "\\n").replace("\t", "\\t")
    return text
