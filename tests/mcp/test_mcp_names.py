"""mcp__<server>__<tool>: sanitised, and two tools of one name refused."""

from __future__ import annotations

import pytest

from dm_cc.mcp.names import MAX_NAME, NameCollision, tool_name, tool_names
from dm_cc.permissions.rules import is_mcp_permission


@pytest.mark.parametrize(("tool", "name"), [
    ("get_current_time", "mcp__time__get_current_time"),
    ("get.time", "mcp__time__get_time"),
    ("say hi/now", "mcp__time__say_hi_now"),
    ("naïve", "mcp__time__na_ve"),
    ("", "mcp__time___"),
])
def test_names_are_sanitised(tool, name):
    assert tool_name("time", tool) == name
    assert is_mcp_permission(name)


def test_a_collision_names_both_tools():
    assert tool_names("s", ["a", "b"]) == ({"mcp__s__a": "a", "mcp__s__b": "b"}, [])
    with pytest.raises(NameCollision, match=r"'get\.time' and 'get_time' both become "
                                            r"mcp__s__get_time"):
        tool_names("s", ["get.time", "get_time"])


def test_a_name_too_long_for_the_model_is_left_out():
    longest = "t" * (MAX_NAME - len("mcp__s__"))
    assert tool_names("s", [longest, longest + "x"]) == ({f"mcp__s__{longest}": longest},
                                                        [longest + "x"])
