"""Fake switch CLI for Onyx, Arista EOS and Cisco NX-OS targets: `python -S fakecli.py <state> <address> [command]`.

Interactive (netmiko's invoke_shell, on a pty): raw mode, prints a banner and a prompt, echoes every received line
exactly, answers a bare newline with a fresh prompt, and answers the session-preparation commands netmiko's real
drivers send (`terminal width 511`, `terminal length 0`, `no cli session paging enable`, `enable`), `show version`,
the show commands of tests/fabric/shims/cli_platforms.py, `configure terminal`, `end`, `exit`. An unknown command
answers `% Invalid command` (Onyx/EOS) or `% Invalid command at '^' marker.` (NX-OS), never a hang. Lines end \\r\\n.

With a command argument (an SSH exec request): prints that command's answer and exits (1 for an unknown one).
"""

from __future__ import annotations

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from tests.fabric.shims._base import load_ctx  # noqa: E402
from tests.fabric.shims.cli_platforms import PLATFORMS  # noqa: E402

# Onyx's login banner as sites set them: a box of `#` and a `>` before the prompt, so a driver that stops its
# first read at a prompt character must still find the real prompt (rdmatool.transport.switch_drivers).
BANNERS = {
    "onyx": "\r\nNVIDIA Onyx Switch Management\r\n\r\n##########################\r\n# Authorised use only. #\r\n"
            "##########################\r\nLast login: from 10.0.0.1 -> mgmt0\r\n\r\n",
    "eos": "",
    "nxos": "\r\nCisco NX-OS Software\r\n",
}


class Session:
    def __init__(self, ctx) -> None:  # noqa: ANN001 - a shims._base.Ctx
        self.ctx = ctx
        self.platform = ctx.spec["platform"]
        self.name = ctx.spec["name"]
        self.enabled = self.platform == "nxos"
        self.config = False

    def prompt(self) -> str:
        n = self.name
        if self.platform == "onyx":
            mode = " (config)" if self.config else ""
            return f"{n} [standalone: master]{mode} {'#' if self.enabled else '>'} "
        if self.platform == "eos":
            return f"{n}(config)#" if self.config else f"{n}{'#' if self.enabled else '>'}"
        return f"{n}(config)# " if self.config else f"{n}# "

    def invalid(self) -> str:
        if self.platform == "nxos":
            return "                    ^\n% Invalid command at '^' marker.\n"
        return "% Invalid command\n"

    def answer(self, line: str) -> tuple[str, bool]:
        """(output, known command) for one command line; output uses \\n, the caller converts."""
        cmd = " ".join(line.split())
        if cmd == "":
            return "", True
        if cmd in ("terminal length 0", "terminal length 999"):
            return ("Pagination disabled.\n" if self.platform == "eos" else ""), True
        if cmd.startswith("terminal width"):
            return (f"Width set to {cmd.split()[-1]} columns.\n" if self.platform == "eos" else ""), True
        if cmd in ("no cli session paging enable", "terminal no monitor", "no terminal monitor"):
            return "", True
        if cmd in ("enable", "en"):
            self.enabled = True
            return "", True
        if cmd == "disable" and self.platform != "nxos":
            self.enabled = False
            return "", True
        if cmd in ("configure terminal", "config terminal", "conf t", "configure"):
            if not self.enabled:
                return self.invalid(), False
            self.config = True
            return "", True
        if cmd == "end":
            self.config = False
            return "", True
        out = PLATFORMS[self.platform](self.ctx, cmd) if cmd.startswith("show ") else None
        if out is None:
            return self.invalid(), False
        return out, True


def interactive(session: Session) -> int:
    fd_in, fd_out = sys.stdin.fileno(), sys.stdout.fileno()
    saved = None
    if os.isatty(fd_in):
        import termios
        import tty

        saved = termios.tcgetattr(fd_in)
        tty.setraw(fd_in)

    def write(text: str) -> None:
        data = text.replace("\r\n", "\n").replace("\n", "\r\n").encode()
        while data:
            data = data[os.write(fd_out, data):]

    try:
        pause = float(session.ctx.spec.get("slow_banner") or 0.0)
        if pause:  # fault slow_banner: each banner line in two pieces, the first ending inside it (at a `#`)
            for line in BANNERS[session.platform].removesuffix("\r\n").split("\r\n"):
                half = len(line) // 2
                write(line[:half])
                time.sleep(pause)
                write(line[half:] + "\n")
            write(session.prompt())
        else:
            write(BANNERS[session.platform] + session.prompt())
        buf, last_cr = "", False
        while True:
            chunk = os.read(fd_in, 4096)
            if not chunk:
                return 0
            for ch in chunk.decode(errors="replace"):
                if ch == "\n" and last_cr:
                    last_cr = False
                    continue
                last_cr = ch == "\r"
                if ch in "\r\n":
                    line, buf = buf, ""
                    write(line + "\n")
                    if " ".join(line.split()) in ("exit", "quit", "logout"):
                        if session.config:
                            session.config = False
                        else:
                            return 0
                    else:
                        session.ctx.now = __import__("time").time()
                        out, _ = session.answer(line)
                        write(out)
                    write(session.prompt())
                elif ch in "\x7f\b":
                    buf = buf[:-1]
                elif ch == "\x03":  # ^C
                    buf = ""
                    write("\n" + session.prompt())
                elif ch == "\x04" and not buf:  # ^D
                    return 0
                else:
                    buf += ch
    finally:
        if saved is not None:
            import termios

            termios.tcsetattr(fd_in, termios.TCSADRAIN, saved)


def main(argv: list[str]) -> int:
    state, address = argv[1], argv[2]
    session = Session(load_ctx("cli", state, address))
    if len(argv) > 3:  # exec request: one command, no prompt
        session.enabled = True
        out, known = session.answer(argv[3])
        sys.stdout.write(out)
        return 0 if known else 1
    return interactive(session)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
