"""Property: for any text, every parser returns samples in the glossary or raises ParseError, nothing else."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rdmatool import metrics, parsers
from rdmatool.errors import ParseError
from rdmatool.model import Sample
from tests.helpers import PARSER_FIXTURES

pytestmark = pytest.mark.slow  # property tests: hypothesis draws many inputs per parser

# Mutations of real-looking fixture lines find far more corner cases than uniform random text.
_FIXTURE_LINES = sorted(
    {
        line
        for path in PARSER_FIXTURES.glob("*/*.txt")
        for line in path.read_text(encoding="utf-8").splitlines()
    }
)

_texts = st.one_of(
    st.text(max_size=300),
    st.lists(st.sampled_from(_FIXTURE_LINES or [""]), max_size=25).map("\n".join),
    st.lists(
        st.one_of(st.sampled_from(_FIXTURE_LINES or [""]), st.text(alphabet=" \t:.,-0123456789abcxN/A", max_size=40)),
        max_size=25,
    ).map("\r\n".join),
)


@pytest.mark.parametrize("name", parsers.names())
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_texts)
def test_parser_returns_samples_or_raises_parse_error(name: str, text: str) -> None:
    parse = parsers.get(name).parse
    try:
        result = parse(text)
    except ParseError as exc:
        assert exc.parser == name
        return
    assert isinstance(result, list)
    for sample in result:
        assert isinstance(sample, Sample)
        assert metrics.is_known(sample.metric), f"{name} emitted {sample.metric!r}, not in the glossary"
