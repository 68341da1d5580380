"""A matplotlib figure as PNG bytes, with every text in it shown as the characters it is.

Titles and tick labels carry host, port and test names that a bundle or a device gave: each is made visible
(rdmatool.present.visible) and never parsed as mathtext or TeX, where a `$x` would raise while the figure is drawn and a
`$\\foo$` would render as something else. Every figure of rdmatool is saved through here.
"""

from __future__ import annotations

import io

from rdmatool.present.visible import terminal


def png(figure) -> bytes:
    import matplotlib
    from matplotlib.text import Text
    from matplotlib.ticker import FixedFormatter, FuncFormatter

    for text in figure.findobj(Text):
        text.set_parse_math(False)
        text.set_usetex(False)
        text.set_text(terminal(text.get_text()))
    for axes in figure.axes:  # tick labels given as strings are made again from their formatter while drawing
        for axis in (axes.xaxis, axes.yaxis):
            for formatter in (axis.get_major_formatter(), axis.get_minor_formatter()):
                if isinstance(formatter, FixedFormatter):
                    formatter.seq = [terminal(label) for label in formatter.seq]
                elif isinstance(formatter, FuncFormatter):  # what `set_xticks(labels=...)` makes
                    formatter.func = _visible_labels(formatter.func)
    buffer = io.BytesIO()
    with matplotlib.rc_context({"text.parse_math": False, "text.usetex": False}):  # ticks made while drawing
        figure.savefig(buffer, format="png")
    return buffer.getvalue()


def _visible_labels(func):
    def label(value, position=None):
        return terminal(func(value, position))
    return label
