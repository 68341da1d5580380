"""Every text of the HTML report reads: each text colour the page declares keeps WCAG AA contrast (4.5:1) with the
background it is drawn on, the on-call pane's terminal colours (dim included) with the pane's."""

from __future__ import annotations

import re

import pytest
from rich.color import blend_rgb

from rdmatool.report import html, plots
from tests.report.contrast import AA, ratio, rgb


def test_the_ratio_is_the_wcag_one() -> None:
    assert ratio("#000000", "#ffffff") == pytest.approx(21.0)
    assert ratio("#777777", "#777777") == pytest.approx(1.0)
    assert ratio("#767676", "#ffffff") == pytest.approx(4.54, abs=0.01)  # the lightest grey that passes on white
    assert ratio("rgb(255, 255, 255)", "#000") == pytest.approx(21.0)
    assert ratio("#800000", "#0d1117") < AA  # the on-call pane's former red on its black: the complaint


@pytest.mark.parametrize(("what", "text", "background"), html.TEXT_PAIRS, ids=[p[0] for p in html.TEXT_PAIRS])
def test_each_declared_pair_meets_aa(what, text, background) -> None:
    assert ratio(text, background) >= AA, f"{what}: {text} on {background} is {ratio(text, background):.2f}:1"


def test_the_style_sheet_declares_no_colour_outside_the_checked_pairs() -> None:
    texts = set(re.findall(r"(?<![-\w])color:\s*(#[0-9a-fA-F]{3,6})", html._STYLE))
    backgrounds = set(re.findall(r"background:\s*(#[0-9a-fA-F]{3,6})", html._STYLE))
    assert texts and backgrounds
    assert texts <= {fg for _, fg, _ in html.TEXT_PAIRS}, texts - {fg for _, fg, _ in html.TEXT_PAIRS}
    assert backgrounds <= {bg for _, _, bg in html.TEXT_PAIRS}, backgrounds - {bg for _, _, bg in html.TEXT_PAIRS}


def test_every_terminal_colour_of_the_on_call_pane_meets_aa_on_it() -> None:
    theme = html.oncall_theme()
    assert theme.background_color.hex == html.ONCALL_BG and theme.foreground_color.hex == html.ONCALL_FG
    colours = [*html.ONCALL_NORMAL, *html.ONCALL_BRIGHT, html.ONCALL_FG]
    dim = blend_rgb(theme.foreground_color, theme.background_color, 0.5)  # how rich draws `dim` text
    colours.append(f"#{dim.red:02x}{dim.green:02x}{dim.blue:02x}")
    for colour in colours:
        assert ratio(colour, html.ONCALL_BG) >= AA, f"{colour} on {html.ONCALL_BG}: {ratio(colour, html.ONCALL_BG):.2f}"


def test_the_drawn_on_call_pane_and_map_use_only_readable_colours(demo_page) -> None:
    shown = demo_page
    pane = html._oncall(shown)
    inline = set(re.findall(r"(?<![-\w])color: (#[0-9a-f]{6})", pane))
    assert len(inline) >= 4  # red, yellow, green, dim ... the view's own styles, recorded
    assert "background-color" not in pane  # no text on a background of its own: all of it on the pane's
    for colour in inline:
        assert ratio(colour, html.ONCALL_BG) >= AA, f"on-call {colour}: {ratio(colour, html.ONCALL_BG):.2f}:1"
    fills = set(re.findall(r'<text [^>]*fill="(#[0-9a-f]{6})"', plots.topology_svg(shown)))
    assert fills == {html.INK} and ratio(html.INK, html.PAPER) >= AA
    assert rgb(html.PAPER) == (255, 255, 255)
