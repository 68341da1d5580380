"""paramiko, imported without invoke until an ssh_config needs it. Every rdmatool module takes paramiko from here.

`paramiko.config` imports invoke when paramiko is imported, and invoke brings asyncio, unittest.mock and its own
YAML: 50-85 ms of CPU on a 2-core machine, a tenth of what `rdmatool collect` spends starting, paid on every node
of a fleet that runs it from a prolog or a health check. paramiko needs invoke for one feature alone: the `Match
exec` lines of an ssh_config, which run a local command to decide whether a block applies. rdmatool reads
~/.ssh/config through paramiko (rdmatool.inventory), so that feature still works: `allow_match_exec` imports invoke
and hands it to paramiko when a config has such a line.
"""

from __future__ import annotations

import logging
import re
import sys


def _without_invoke():  # noqa: ANN202 - the paramiko module
    if "paramiko" in sys.modules or "invoke" in sys.modules:  # too late, or someone wants invoke anyway
        import paramiko

        return paramiko
    sys.modules["invoke"] = None  # `import invoke` raises ImportError, which paramiko.config keeps for later
    try:
        import paramiko
    finally:
        if "invoke" in sys.modules and sys.modules["invoke"] is None:
            del sys.modules["invoke"]  # whoever imports invoke later gets it
    return paramiko


paramiko = _without_invoke()
# paramiko logs a failed handshake (a server that never sends its banner, a reset) as an error with its traceback,
# which Python prints on stderr when no handler is set: what a device does would put tracebacks in front of the
# operator. rdmatool says each failure itself, in one line naming the host.
logging.getLogger("paramiko").addHandler(logging.NullHandler())

# `Match ... exec "command"` (ssh_config(5)): the keyword is case-insensitive, as every ssh_config keyword.
_MATCH_EXEC = re.compile(r"^[ \t]*match\b.*\bexec\b", re.IGNORECASE | re.MULTILINE)


def allow_match_exec(config_text: str) -> None:
    """Make paramiko able to evaluate `Match exec` when this ssh_config text has one (nothing to do otherwise)."""
    config = paramiko.config
    if config.invoke is not None or not _MATCH_EXEC.search(config_text):
        return
    try:
        import invoke
    except ImportError as exc:  # not installed at all: paramiko says so itself when the line is evaluated
        config.invoke_import_error = exc
        return
    config.invoke = invoke
