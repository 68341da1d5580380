"""The bad-node / bad-link attribution of a perftest matrix, under the perf package's name.

It lives one layer down, in rdmatool.pairs.attribution, so that the diagnosis of a bundle with per-peer perftest
results (rdmatool.pairs.bundle_results) and the gate judge pairs with the very same code `rdmatool perf` uses.
"""

from rdmatool.pairs.attribution import (  # noqa: F401  (the perf package's names for it)
    ERROR,
    LAT_FACTOR,
    LOW,
    OK,
    PairVerdict,
    attribute,
    attribute_rails,
    bad_nodes_and_nics,
    classify,
    expected_of,
    facts,
    missing_node,
    with_down_nics,
)
