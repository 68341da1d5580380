"""The output-encoding layer (rdmatool.report.shown): what a device said reaches a person as characters to read."""

from __future__ import annotations

import re
from dataclasses import dataclass

from rdmatool.model import Finding, Severity
from rdmatool.report import shown

HOSTILE = "sw\x1b]52;c;cm0gLXJmIH4=\x07\x15\x7f\x9b31m\ud800<img src=x onerror=alert(1)>[x](javascript:alert(1))$x$"
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


def test_terminal_shows_every_control_and_replaces_lone_surrogates() -> None:
    text = shown.terminal(HOSTILE)
    assert not RAW.search(text)
    assert "\\e]52;c;cm0gLXJmIH4=\\a" in text  # OSC 52 (clipboard write) written out, not sent
    assert "\\x15\\x7f\\x9b31m" in text  # Ctrl-U, DEL and the 8-bit CSI visible
    assert "\ufffd" in text
    text.encode("utf-8")  # a lone surrogate would raise here, as in a terminal's encoder


def test_terminal_keeps_line_breaks_only_when_asked_and_shows_text_reordering() -> None:
    assert shown.terminal("a\nb\tc") == "a\\nb\\tc"
    assert shown.terminal("a\nb\tc", newlines=True) == "a\nb\tc"
    assert shown.terminal("a\rb") == "a\\rb"  # a carriage return would overwrite what the line said
    assert shown.terminal("abc\u202edcb") == "abc\\u202edcb"  # right-to-left override
    assert shown.terminal("gpu01 mlx5_0/1 → 100 Gb/s") == "gpu01 mlx5_0/1 → 100 Gb/s"  # plain text unchanged


def test_comment_is_one_printable_line() -> None:
    text = shown.comment("pcp\x15>owned;#\nrm -rf ~")
    assert text.isprintable() and "\\x15" in text and "\\n" in text


def test_markdown_leaves_no_tag_no_link_no_emphasis() -> None:
    text = shown.markdown(HOSTILE)
    assert "<" not in text and ">" not in text and "&lt;img" in text
    assert "\\[x\\](javascript:alert(1))" in text
    assert not RAW.search(text)
    assert shown.markdown("a_b *c* _d_ `e`|f") == "a_b \\*c\\* \\_d\\_ \\`e\\`\\|f"
    assert shown.markdown("- item") == "\\- item" and shown.markdown("1. item") == "1\\. item"
    assert shown.markdown("# head") == "\\# head" and shown.markdown("AT&T") == "AT&amp;T"


def test_code_span_and_fence_cannot_be_closed_from_inside() -> None:
    assert shown.code_span("a`b") == "``a`b``"
    assert shown.code_span("`x") == "`` `x ``"
    block = shown.fence(["echo ```", "ls\x1b[2J"])
    assert block[0] == block[-1] == "````" and block[2] == "ls\\e[2J"


def test_plot_text_is_never_mathtext() -> None:
    assert shown.plot_text("$x$ \x07") == r"\$x\$ \a"


@dataclass(frozen=True)
class _Holder:
    name: str
    items: list
    table: dict


def test_cleaned_copies_every_string_and_keeps_kinds() -> None:
    finding = Finding(rule="r", severity=Severity.ERROR, target="gpu\x1b[31m01", entity="\ud800", symptom="s\x07",
                      cause="c", check="k", fix="f", evidence={"neighbour\x15": ("sw\x1b", 3)})
    held = shown.cleaned(_Holder("a\x00", [finding], {"k": None}))
    clean = held.items[0]
    assert held.name == "a\\0" and clean.target == "gpu\\e[31m01" and clean.entity == "\ufffd"
    assert clean.severity is Severity.ERROR and clean.symptom == "s\\a"
    assert clean.evidence == {"neighbour\\x15": ("sw\\e", 3)}
    assert finding.target == "gpu\x1b[31m01"  # the original is untouched (the JSON keeps the exact bytes)
