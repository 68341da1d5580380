"""The localisation of a perftest run (bad nodes, bad rail NICs, bad inter-leaf links), under the perf package's name.

It lives one layer down, in rdmatool.pairs.localise, so that the diagnosis of a bundle's per-peer perftest results
groups slow pairs by leaf with the very same code the gate and `rdmatool perf` use.
"""

from rdmatool.pairs.localise import Localisation, RailRun, localise  # noqa: F401  (the perf package's names for it)
