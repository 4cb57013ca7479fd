"""The rule index (dm_cc.permissions.index): decisions it used to miss, the cost of a
decision as policies grow (counted in matcher calls, never timed: the times are
benchmarks/bench_engine.py's), and the plain-list cache. Its agreement with trying
every rule is test_index_properties.py's."""

from __future__ import annotations

import pytest
from support.requests import Request

from dm_cc.permissions import PathContext, Rule, Ruleset, decide, evaluate
from dm_cc.permissions.index import TRIED_BEFORE_COMPILING
from dm_cc.permissions.patterns import ArgumentsPattern, PathGlob, SegmentGlob, Wildcard
from dm_cc.permissions.shell.flags import FlagRule
from dm_cc.permissions.shell.tables.flag_aliases import COMMAND_ALIASES

CTX = PathContext(root="/proj", home="/home/u")


# --------------------------------------------------------------------------- fixed misses


@pytest.mark.parametrize(("permission", "rule", "request_"), [
    ("network", "Api.Evil.com", "api.evil.com"),
    ("webfetch", "https://example.com/Private/report", "https://example.com/private/report"),
    ("webfetch", "HTTPS://EXAMPLE.COM/a b", "https://example.com/a b"),
])
def test_a_deny_url_rule_in_another_case_denies_without_a_wildcard(permission, rule, request_):
    # The first-word index looked the request up as written and never tried the rule,
    # though deny and ask URL rules match ignoring case.
    rules = [Rule(permission, "*", "allow"), Rule(permission, rule, "deny")]
    assert decide([Request(permission, request_)], rules).action == "deny"
    assert decide([Request(permission, request_)], rules[:1] + [
        Rule(permission, rule, "allow")]).action == "allow"  # but an allow needs the case


def test_a_deny_flag_rule_holds_when_the_text_has_a_tab_after_the_program():
    # The text's first word was "rm\t-rf", the words' "rm": the rule was never tried.
    rules = [Rule("bash", "*", "allow"), Rule("bash", "rm -rf *", "deny")]
    assert evaluate("bash", "rm\t-rf /", rules, language="shell").action == "deny"
    assert evaluate("bash", "rm\t-r -f /", rules, language="shell").action == "deny"


def test_command_aliases_keep_the_program():
    # The index keys a flag rule by its program and looks up a command's first word:
    # exact only while respelling a command (npm i -> npm install) keeps its program.
    assert all(spelled[0] == canonical[0] for spelled, canonical in COMMAND_ALIASES.items())


# --------------------------------------------------------------------------- cost as policies grow


class Calls:
    """Counts the calls of every per-rule matcher the index may fall back on."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        targets = [(Wildcard, "match"), (FlagRule, "matches"), (PathGlob, "match"),
                   (SegmentGlob, "match"), (ArgumentsPattern, "match")]
        for owner, name in targets:
            monkeypatch.setattr(owner, name, self._counting(getattr(owner, name)))

    def _counting(self, method):
        def counted(*args, **kwargs):
            self.count += 1
            return method(*args, **kwargs)
        return counted


def big_policy(n: int) -> list[Rule]:
    """``n`` rules of each kind a store or a generated policy piles up for one permission."""
    rules = [Rule("*", "*", "ask")]
    for i in range(n):
        rules += [
            Rule("bash", f"npm run task{i} *", "allow"),             # saved approvals
            Rule("bash", f"npm run task{i} --force *", "deny"),      # a flag rule too
            Rule("bash", f"./scripts/job{i}.sh", "allow"),
            Rule("read", f"src/mod{i}/**", "allow"),
            Rule("read", f"secrets{i}.json", "deny"),
            Rule("read", f"/srv/data{i}/**", "ask"),
            Rule("webfetch", f"https://site{i}.example.com/*", "allow"),
            Rule("network", f"host{i}.Example.com", "deny"),
            Rule("mcp__db__query", f'{{"table": "t{i}"}}', "allow"),
        ]
    return rules


REQUESTS = [
    ("bash", "npm run task7 --watch", "allow"), ("bash", "npm run task7 x --force", "deny"),
    ("bash", "npm run task7 --force", "deny"), ("bash", "npm run other", "ask"),
    ("bash", "./scripts/job7.sh", "allow"), ("bash", "./scripts/job7.sh x", "ask"),
    ("read", "src/mod7/a/b.py", "allow"), ("read", "src/mod7/secrets7.json", "deny"),
    ("read", "/srv/data7/x", "ask"), ("read", "lib/x.py", "ask"),
    ("webfetch", "https://site7.example.com/page", "allow"),
    ("network", "host7.example.com", "deny"), ("network", "other.com", "ask"),
    ("mcp__db__query", '{"table": "t7"}', "allow"), ("mcp__db__query", '{"table": "x"}', "ask"),
]


@pytest.mark.parametrize("size", [100, 2000])
def test_a_decision_tries_a_handful_of_rules_however_many_there_are(size, monkeypatch):
    ruleset = Ruleset(big_policy(size), CTX)
    for permission, text, expected in REQUESTS:  # build each index first
        assert decide([Request(permission, text)], ruleset).action == expected, (text, size)
    calls = Calls(monkeypatch)
    for permission, text, expected in REQUESTS:
        assert decide([Request(permission, text)], ruleset).action == expected, (text, size)
    # trying the rules one by one would call ~size matchers per request
    assert calls.count <= 3 * len(REQUESTS), calls.count


def test_patterns_built_to_backtrack_are_matched_in_linear_time():
    # A backtracking regex for `*a*a*a*b` takes the fourth power of the text's length
    # to fail; the index's regexes find each piece once (atomic groups).
    rules = [Rule("bash", "*", "allow")] + [
        Rule("bash", f"x{'*a' * 6}*{end}", "deny") for end in "bcdef"]
    text = "x" + "a" * 3000
    for _ in range(TRIED_BEFORE_COMPILING + 1):  # one by one, then as one regex
        assert evaluate("bash", text, rules, language="shell").action == "allow"
        assert evaluate("bash", text + "c", rules, language="shell").action == "deny"


# --------------------------------------------------------------------------- plain lists


def test_a_plain_list_changed_in_place_is_compiled_anew():
    rules = [Rule("bash", "*", "allow")]
    assert evaluate("bash", "ls", rules).action == "allow"
    rules.append(Rule("bash", "ls", "deny"))
    assert evaluate("bash", "ls", rules).action == "deny"
    rules[1] = Rule("bash", "ls", "ask")
    assert evaluate("bash", "ls", rules).action == "ask"
    assert evaluate("bash", "ls", rules) is rules[1]
    del rules[1:]
    assert evaluate("bash", "ls", rules) is rules[0]


def test_equal_lists_each_get_their_own_rules_back():
    first = [Rule("bash", "*", "allow", source="a")]
    second = [Rule("bash", "*", "allow", source="a")]
    assert evaluate("bash", "ls", first) is first[0]
    assert evaluate("bash", "ls", second) is second[0]
    assert evaluate("bash", "ls", first) is first[0]
