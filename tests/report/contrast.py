"""WCAG 2 contrast: the relative luminance of an sRGB colour and the contrast ratio of two colours
((lighter + 0.05) / (darker + 0.05), from 1 to 21). AA asks 4.5:1 for normal text."""

from __future__ import annotations

import re

AA = 4.5


def rgb(colour: str) -> tuple[int, int, int]:
    """`#1d2733`, `#fff` or a browser's computed `rgb(29, 39, 51)` / `rgba(29, 39, 51, 1)`."""
    colour = colour.strip()
    if colour.startswith("#"):
        digits = colour[1:]
        if len(digits) == 3:
            digits = "".join(d * 2 for d in digits)
        return int(digits[0:2], 16), int(digits[2:4], 16), int(digits[4:6], 16)
    found = re.fullmatch(r"rgba?\((\d+), (\d+), (\d+)(?:, [\d.]+)?\)", colour)
    if found is None:
        raise ValueError(f"not a colour: {colour!r}")
    return int(found[1]), int(found[2]), int(found[3])


def luminance(colour: str) -> float:
    def linear(channel: int) -> float:
        c = channel / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (linear(c) for c in rgb(colour))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def ratio(text: str, background: str) -> float:
    lighter, darker = sorted((luminance(text), luminance(background)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)
