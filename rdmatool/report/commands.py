"""`diagnose --format commands`: the suggested commands and nothing else, one block per target, ready to paste.

Each suggestion opens with a comment line naming its target, the change and the findings it answers; then its
commands verbatim, per platform (a suggestion for a host may carry the commands of the switch port it is cabled to:
a comment says so). A comment is written in the syntax of the shell it is pasted into: `#` on a host and on the
Linux-based switch systems, `!` on the IOS-like command lines, where `#` is no comment (each platform module's
COMMENT, rdmatool.platforms). Printed, never run."""

from __future__ import annotations

from rdmatool import platforms
from rdmatool.model import Severity
from rdmatool.outcome.result import DiagnoseResult
from rdmatool.report import view as views
from rdmatool.report.shown import cleaned, terminal
from rdmatool.report.shown import comment as comment_text


def comment(platform: str) -> str:
    return platforms.comment_mark(platform)


def render(result: DiagnoseResult, minimum: Severity = Severity.WARNING) -> str:
    """The blocks for the suggestions answering a finding at `minimum` or above; empty when there is none.

    A comment holds printable text only (a control character such as Ctrl-U in a device's value, pasted into a
    shell without bracketed paste, would erase the `#` and run the rest); every command line is shown the same way,
    so a value that reached one raw is inert text, never a keystroke (the commands quote or refuse every value)."""
    result = cleaned(result)
    shown = views.select(result, minimum)
    blocks: dict[str, list[str]] = {}
    hosts = set(result.hosts)
    for suggestion, findings in shown.suggestions:
        target = suggestion.target or findings[0].target
        lines = blocks.setdefault(target, [])
        platforms = list(suggestion.commands)
        if not platforms:
            continue
        mark = comment(platforms[0])
        lines.append(mark + " " + comment_text(
            f"{target}: {suggestion.setting}: {views.change_text(suggestion.current)} → "
            f"{views.change_text(suggestion.proposed)} — for {views.reason(findings, places=False)}"))
        for platform in platforms:
            if len(platforms) > 1:
                where = _device(platform, target, target in hosts, suggestion.devices.get(platform))
                lines.append(f"{comment(platform)} " + comment_text(f"{platform} commands, on {where}:"))
            lines.extend(terminal(command) for command in suggestion.commands[platform])
    return "\n\n".join("\n".join(lines) for lines in blocks.values() if lines) + ("\n" if blocks else "")


def _device(platform: str, target: str, is_host: bool, device: str | None = None) -> str:
    """Where one platform's commands of a suggestion run: its target, or the other end of the target's cable (named
    when the suggestion knows it)."""
    if platforms.is_host_key(platform) == is_host:
        return target
    if device:
        return f"{device} (cabled to {target})"
    return f"the switch cabled to {target}" if is_host else f"the host cabled to {target}"
