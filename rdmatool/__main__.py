"""`python -m rdmatool`: the entry point sits above every layer, the command line included."""

from rdmatool import cli

cli.main()
