"""Tool shims: one module per tool, started by the launchers generated into the fabric state dir's bin/."""
