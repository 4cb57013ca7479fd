"""opencode config → dm_cc: never looser than opencode's merged ruleset
(reference_opencode.py), for what a held-out corpus found dropped: V2's ordered
``permissions``, a disabled agent, default_agent and other keys said nothing of,
JSONC a trailing comma with a comment after it; and a property over generated
configs and calls."""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.requests import evaluate

from dm_cc.cli import main
from dm_cc.permissions import PathContext
from dm_cc.permissions.engine import Ruleset
from dm_cc.policy.importers import render_policy
from dm_cc.policy.importers.jsonfile import read_json
from dm_cc.policy.importers.opencode import import_opencode
from dm_cc.policy.loader import parse_policy

from . import reference_opencode as opencode

STRICT = {"allow": 0, "ask": 1, "deny": 2}
CONTEXT = PathContext(root="/proj", home="/home/u")


def imported(tmp_path, config: dict | str):
    source = tmp_path / "opencode.json"
    source.write_text(config if isinstance(config, str) else json.dumps(config))
    out = import_opencode(source)
    assert not out.refused, out.refused
    return out, parse_policy(render_policy(out), "imported.yaml")


def dm_cc_decides(policy, agent: str, permission: str, text: str) -> str:
    """The imported file's decision for ``agent``: its rules, then the agent's."""
    rules = list(policy.rules) + list(policy.agents.get(agent, ()))
    return evaluate(permission, text, Ruleset(rules, CONTEXT)).action


V2 = {"permissions": [
    {"action": "*", "resource": "*", "effect": "deny"},
    {"action": "read", "resource": "*", "effect": "allow"},
    {"action": "shell", "resource": "git *", "effect": "allow"},
    {"action": "shell", "resource": "git push *", "effect": "ask"},
    {"action": "read", "resource": "*.env", "effect": "deny"},
]}


@pytest.mark.parametrize(("permission", "text", "expect"), [
    ("bash", "git status", "allow"), ("bash", "git push origin", "ask"),
    ("bash", "make", "deny"), ("read", "src/a.py", "allow"), ("read", "config/.env", "deny"),
    ("edit", "src/a.py", "deny"),
])
def test_v2_ordered_permissions_keep_their_order(tmp_path, permission, text, expect):
    """V2's `permissions` is an ordered list, the last match wins: imported as such
    (it imported as `rules: []` before: the whole policy lost)."""
    _, policy = imported(tmp_path, V2)
    assert dm_cc_decides(policy, "build", permission, text) == expect
    assert opencode.decide(V2, "build", permission, text) == expect


def test_v2_rules_of_an_agent_and_the_draft_field_names(tmp_path):
    config = {"agents": {"review": {"permissions": [
        {"permission": "bash", "pattern": "*", "action": "deny"}]}}}
    _, policy = imported(tmp_path, config)
    assert dm_cc_decides(policy, "review", "bash", "ls") == "deny"
    assert dm_cc_decides(policy, "build", "bash", "ls") == "ask"


@pytest.mark.parametrize("bad", [{"permissions": {"bash": "allow"}},
                                 {"permissions": [{"action": "bash"}]},
                                 {"permissions": [{"action": "bash", "resource": "*",
                                                   "effect": "maybe"}]}])
def test_a_malformed_v2_rule_is_an_error(tmp_path, capsys, bad):
    (tmp_path / "opencode.json").write_text(json.dumps(bad))
    assert main(["policy", "import", "opencode", str(tmp_path / "opencode.json")]) == 2
    assert "permissions" in capsys.readouterr().err


@pytest.mark.parametrize("key", ["disable", "disabled"])
def test_a_disabled_agent_may_do_nothing_and_nothing_may_start_it(tmp_path, key):
    config = {"permission": {"*": "allow"}, "agent": {"review": {key: True}}}
    _, policy = imported(tmp_path, config)
    assert dm_cc_decides(policy, "review", "bash", "ls") == "deny"
    assert dm_cc_decides(policy, "review", "read", "a.txt") == "deny"
    assert dm_cc_decides(policy, "build", "task", "review") == "deny"
    assert dm_cc_decides(policy, "build", "task", "explore") == "allow"


def test_every_key_not_imported_is_said(tmp_path):
    config = {"$schema": "https://opencode.ai/config.json", "model": "anthropic/x",
              "provider": {}, "mcp": {}, "theme": "dark", "default_agent": "plan",
              "agent": {"review": {"model": "x", "prompt": "p", "permission": {"bash": "deny"}}}}
    out, _ = imported(tmp_path, config)
    said = "\n".join(out.dropped)
    for key in ("$schema", "model", "provider", "mcp", "theme", "agent.review.model",
                "agent.review.prompt"):
        assert f"{key}: not imported" in said, (key, said)
    assert "put `default_agent: plan` in .dm_cc/config.yaml" in said
    assert "agent.review.permission:" not in said


# --------------------------------------------------------------------------- JSONC

@pytest.mark.parametrize("text", [
    '{"permission": {"bash": {"*": "ask", "rm *": "deny", // no deletes\n}, }}',
    '{"permission": {"bash": {"*": "ask", "rm *": "deny", /* no deletes */ }}}',
    '{"permission": {"bash": {"*": "ask", "rm *": "deny",\n  // one\n  /* two */\n  }\n}}',
    '{"permissions": [{"action": "bash", "resource": "rm *", "effect": "deny"}, // last\n]}',
])
def test_a_comment_after_a_trailing_comma(tmp_path, text):
    """opencode reads a trailing comma with comments between it and the bracket."""
    _, policy = imported(tmp_path, text)
    assert dm_cc_decides(policy, "build", "bash", "rm -rf x") == "deny"


def test_nothing_inside_strings_changes(tmp_path):
    text = ('{"permission": {"bash": {"echo a, // b ]": "allow", "x /* y */ ,}": "deny",'
            ' "q\\" ,]": "ask",}}}')
    path = tmp_path / "c.jsonc"
    path.write_text(text)
    _, data = read_json(path, jsonc=True)
    assert list(data["permission"]["bash"]) == ["echo a, // b ]", "x /* y */ ,}", 'q" ,]']


def test_a_comma_before_a_value_stays(tmp_path):
    path = tmp_path / "c.jsonc"
    path.write_text('[1, // one\n 2, /* two */ 3, // end\n]')
    assert read_json(path, jsonc=True)[1] == [1, 2, 3]


# ------------------------------------------------------------- rules read wider

FOUND = {"permission": "deny", "agent": {"review": {"permissions": [
    {"action": "*", "resource": "git *", "effect": "allow"},
    {"action": "bash", "resource": "https://x.test/*", "effect": "ask"}]}}}


def test_an_agents_wider_ask_does_not_override_a_top_level_deny(tmp_path):
    """Found by the property: an agent's `bash https://x.test/* ask` is read as every
    command (dm_cc judges a program by its last name), after the top-level `deny`
    -- so `npm test` asked where opencode denies. The denies before it, top level
    included, are written again after it."""
    out, policy = imported(tmp_path, FOUND)
    assert opencode.decide(FOUND, "review", "bash", "npm test") == "deny"
    assert dm_cc_decides(policy, "review", "bash", "npm test") == "deny"
    assert dm_cc_decides(policy, "review", "read", "a.txt") == "deny"
    assert dm_cc_decides(policy, "build", "bash", "npm test") == "deny"
    assert any("https://x.test/*" in line and "written wider" in line for line in out.dropped)


@pytest.mark.parametrize(("config", "agent", "call", "theirs", "ours"), [
    # a path with several stars read wider (a*b*c: its stars may span segments)
    ({"permission": {"read": "deny"}, "agent": {"review": {"permission": {
        "read": {"a*b*c": "ask"}}}}}, "review", ("read", "a/z/c"), "deny", "deny"),
    # in the same block, as before
    ({"permission": {"read": {"*": "deny", "a*b*c": "ask"}}}, "build", ("read", "a/z/c"),
     "deny", "deny"),
    # an MCP tool's input pattern read as the whole tool, after a top-level deny
    ({"permission": {"github_delete": "deny"}, "agents": {"review": {"permissions": [
        {"action": "github_delete", "resource": "repo=x", "effect": "ask"}]}}},
     "review", ("mcp__github__delete", "*"), "deny", "deny"),
    # a wildcard key's MCP names are wider: `a_*` is read as mcp__a*, which ab_c is not
    ({"permission": {"ab_c": "deny", "a_*": "ask"}}, "build", ("mcp__ab__c", "*"),
     "deny", "deny"),
    ({"permission": {"ab_c": "deny", "a_*": "ask"}}, "build", ("mcp__a__x", "*"), "ask", "ask"),
    # opencode asks `edit` for its write tool (a `write` key decides nothing): an ask
    # read as edit keeps an earlier edit deny, an allow is left out
    ({"permission": {"edit": "deny", "write": "ask"}}, "build", ("edit", "a.txt"),
     "deny", "deny"),
    ({"permission": {"edit": "deny", "write": "allow"}}, "build", ("edit", "a.txt"),
     "deny", "deny"),
    ({"permission": {"write": "allow"}}, "build", ("edit", "a.txt"), "ask", "ask"),
    # the `*` key's pattern over paths is opencode's wildcard (`*` crosses `/`)
    ({"agent": {"build": {"permission": {"*": {"*": "allow", "src/*": "ask"}}}}}, "build",
     ("read", "src/x/y.py"), "ask", "ask"),
    ({"permission": {"read": {"a/.env": "deny"}, "*": {".env": "allow"}}}, "build",
     ("read", "a/.env"), "deny", "deny"),
    ({"permission": {"read": {"a/.env": "deny"}, "*": {".env": "allow"}}}, "build",
     ("read", ".env"), "allow", "allow"),
    ({"permission": {"*": {"git *": "allow"}}}, "build", ("bash", "git status"), "allow",
     "allow"),
    # dm_cc's todo is opencode's todowrite: a todoread allow lets nothing through
    ({"permission": {"todowrite": "deny", "todoread": "allow"}}, "build", ("todo", "*"),
     "deny", "deny"),
    # a disabled agent: no agent's own task allow may start it
    ({"agent": {"review": {"disable": True}, "build": {"permission": {"task": "allow"}}}},
     "build", ("task", "review"), "deny", "deny"),
    ({"agent": {"review": {"disable": True}, "build": {"permission": {"task": "allow"}}}},
     "build", ("task", "explore"), "allow", "allow"),
    # written again only as far as the ask reaches: reads stay allowed
    ({"permission": {"*": "deny", "read": "allow"}, "agent": {"review": {"permission": {
        "bash": {"/opt/x/*": "ask"}}}}}, "review", ("read", "a.txt"), "allow", "allow"),
    ({"permission": {"*": "deny", "read": "allow"}, "agent": {"review": {"permission": {
        "bash": {"/opt/x/*": "ask"}}}}}, "review", ("bash", "ls"), "deny", "deny"),
    # an ask read exactly overrides the deny before it, as in opencode
    ({"permission": "deny", "agent": {"review": {"permission": {"bash": {"git *": "ask"}}}}},
     "review", ("bash", "git status"), "ask", "ask"),
])
def test_a_wider_ask_never_overrides_a_deny(tmp_path, config, agent, call, theirs, ours):
    _, policy = imported(tmp_path, config)
    assert opencode.decide(config, agent, *call) == theirs
    assert dm_cc_decides(policy, agent, *call) == ours


# --------------------------------------------------------------------------- the property

KEYS = ["*", "bash", "shell", "webfetch", "task", "read", "edit", "write", "todowrite",
        "todoread", "ab_c", "a_*", "a*"]
PATTERNS = ["*", "git *", "git push *", "npm *", "rm *", "explore", "https://x.test/*",
            "/opt/x/*", "a*b*c", "src/*", "*.env", ".env", "review"]
actions = st.sampled_from(["allow", "ask", "deny"])
block = st.dictionaries(st.sampled_from(KEYS), st.one_of(
    actions, st.dictionaries(st.sampled_from(PATTERNS), actions, max_size=3)), max_size=4)
v2 = st.lists(st.fixed_dictionaries({"action": st.sampled_from(KEYS),
                                     "resource": st.sampled_from(PATTERNS),
                                     "effect": actions}), max_size=4)


@st.composite
def configs(draw) -> dict:
    config: dict = {}
    if draw(st.booleans()):
        config["permission"] = draw(st.one_of(actions, block))
    if draw(st.booleans()):
        config["permissions"] = draw(v2)
    agent: dict = {}
    if draw(st.booleans()):
        agent["permission"] = draw(block)
    if draw(st.booleans()):
        agent["permissions"] = draw(v2)
    if draw(st.booleans()):
        agent["disable"] = draw(st.booleans())
    agents: dict = {"review": agent} if agent else {}
    if draw(st.booleans()):
        agents["build"] = {"permission": draw(block)}
    if agents:
        config[draw(st.sampled_from(["agent", "agents"]))] = agents
    return config


CALLS = [("bash", "git status"), ("bash", "git push origin"), ("bash", "npm test"),
         ("bash", "rm -rf x"), ("bash", "ls"), ("webfetch", "https://x.test/a"),
         ("task", "explore"), ("task", "review"), ("read", "a/z/c"), ("read", "src/x/y.py"),
         ("read", "x.env"), ("read", "a/.env"), ("edit", "src/a.py"), ("todo", "*"),
         ("mcp__ab__c", "*"), ("mcp__a__x", "*")]

EXAMPLES = int(os.environ.get("DM_CC_IMPORT_EXAMPLES", "150"))


@settings(max_examples=EXAMPLES, deadline=None)
@given(config=configs(), agent=st.sampled_from(["build", "review"]))
def test_never_looser_than_opencode(tmp_path_factory, config, agent):
    """For generated configs (V1 blocks, V2 lists, agents, disabled agents) and calls,
    dm_cc's decision of the import is never looser than opencode's merged ruleset."""
    _, policy = imported(tmp_path_factory.mktemp("o"), config)
    for permission, text in CALLS:
        ours = dm_cc_decides(policy, agent, permission, text)
        theirs = opencode.decide(config, agent, permission, text)
        assert STRICT[ours] >= STRICT[theirs], (permission, text, ours, theirs, config)
