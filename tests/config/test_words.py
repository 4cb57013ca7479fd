"""Counts and near misses in messages: one spelling of a plural for every part."""

from __future__ import annotations

from dm_cc.config import counted, did_you_mean


def test_a_count_agrees_with_its_noun():
    assert [counted(n, "line") for n in (0, 1, 2)] == ["0 lines", "1 line", "2 lines"]
    assert counted(1, "more specific rule") == "1 more specific rule"
    assert counted(3, "match", "matches") == "3 matches" and counted(1, "match", "matches") == "1 match"


def test_a_near_miss_names_the_known_names_it_is_close_to():
    assert did_you_mean("modle", ["model", "sandbox"]) == " (did you mean model?)"
    assert did_you_mean("Rules", ["rules"]) == " (did you mean rules?)"       # case first
    assert did_you_mean("colour", ["model", "sandbox"]) == ""
