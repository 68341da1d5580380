"""Transports return raw text only: every failure is a value (a CommandResult with `error`), never an exception."""
