"""A gate bundle's recorded incast groups are read in one place (perf.incast.saved_groups) by the gate's replay and
by a trial, each naming the file when it cannot be used."""

from __future__ import annotations

import pytest

from rdmatool.errors import BundleError
from rdmatool.perf.incast import saved_groups


def test_a_missing_file_is_no_incast_and_good_groups_are_read(tmp_path) -> None:
    path = tmp_path / "results.json"
    assert saved_groups(path) is None
    path.write_text('{"groups": [{"name": "leaf01", "fan_in": 4}]}')
    assert saved_groups(path) == [{"name": "leaf01", "fan_in": 4}]


@pytest.mark.parametrize(("text", "required", "message"), [
    ("{not json", frozenset({"name"}), "unreadable incast results (JSONDecodeError)"),
    ('{"groups": [{"fan_in": 4}]}', frozenset({"name"}), "`groups` must be a list of incast groups, each with its name"),
    ('{"groups": [{"name": "x"}]}', frozenset({"name", "receiver"}),
     "`groups` must be a list of incast groups with name, receiver"),
    ("[1]", frozenset({"name"}), "unreadable incast results (AttributeError)"),
])
def test_a_file_that_cannot_be_used_is_named(tmp_path, text, required, message) -> None:
    path = tmp_path / "results.json"
    path.write_text(text)
    with pytest.raises(BundleError) as raised:
        saved_groups(path, required)
    assert str(raised.value) == f"{path}: {message}"
