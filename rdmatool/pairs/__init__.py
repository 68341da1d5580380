"""A perftest matrix's values and its bad-node / bad-link attribution, below both `rdmatool perf` (which runs the
pairs) and the diagnosis (which reads them from a bundle), so that the two and the gate judge pairs alike.

    model           PairResult, Attribution, the test names and the error prefixes the attribution recognises
    attribution     attribute(): which nodes and which links are bad, with the evidence; facts() states it
    bundle_results  a bundle's per-peer perftest outputs → pair results → their attribution, as facts
    localise        bad nodes, bad rail NICs and bad inter-leaf links from each rail's attribution and the cabling
    paths           slow pairs grouped by the leaves of their ends: a slow inter-leaf path as one finding's facts
"""
