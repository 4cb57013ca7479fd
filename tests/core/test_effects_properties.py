"""What lands of a command's changes (dm_cc/core/effects.py), as properties over rule
stacks the gate decides: a change a rule denies never lands, whoever approved the
command; a protected path's change never lands without a question unless a literal
rule of the person's allows it; a ``delete`` rule that asks is always a question;
and the person's approval of the command lifts edit asks only."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from dm_cc.config import HostFilesystem
from dm_cc.core.effects import _outcome, _requests
from dm_cc.permissions import Gate, Layer, PathContext, PathContextDirs, Rule
from dm_cc.sandbox import Change

PATHS = ["src/app.py", "build/out.o", ".envrc", ".git/hooks/pre-commit", ".git/index",
         "migrations/0001.sql", "docs/readme.md", ".github/workflows/ci.yml"]
PATTERNS = ["*", "**", "src/**", "build/**", ".envrc", "migrations/**", "*.md", ".git/**"]
PERMISSIONS = ["edit", "delete", "*"]
ACTIONS = ["allow", "ask", "deny"]
ROOT = Path("/nonexistent-project")
WHERE = PathContextDirs(root=ROOT, cwd=ROOT, home=Path("/nonexistent-home"), fs=HostFilesystem())

rules = st.lists(st.builds(lambda p, pat, a, source: Rule(p, pat, a, source=source),
                           st.sampled_from(PERMISSIONS), st.sampled_from(PATTERNS),
                           st.sampled_from(ACTIONS), st.sampled_from(["me.yaml:1", "team:2"])),
                 max_size=6)
changes = st.builds(lambda path, kind: Change(path, kind, "file"), st.sampled_from(PATHS),
                    st.sampled_from(["created", "modified", "deleted", "mode"]))


def verdicts_of(change: Change, stack: list[Rule]):
    gate = Gate([Layer("defaults", (Rule("*", "*", "ask", source="builtin:defaults"),),
                       origin="builtin"), Layer("user", tuple(stack))], PathContext())
    return tuple(gate.judge(r) for r in _requests(change, WHERE))


@settings(max_examples=300, deadline=None)
@given(changes, rules, st.booleans())
def test_a_denied_change_never_lands(change, stack, approved):
    verdicts = verdicts_of(change, stack)
    if any(v.action == "deny" for v in verdicts):
        assert _outcome(change, verdicts, approved).action == "discard"


@settings(max_examples=300, deadline=None)
@given(changes, rules, st.booleans())
def test_a_protected_change_lands_only_by_a_literal_allow_or_a_question(change, stack, approved):
    verdicts = verdicts_of(change, stack)
    outcome = _outcome(change, verdicts, approved)
    if outcome.action == "apply" and any(v.request.protected for v in verdicts):
        assert all(v.action == "allow" for v in verdicts)
        assert all("*" not in v.rule.pattern for v in verdicts if v.request.protected)


@settings(max_examples=300, deadline=None)
@given(changes, rules, st.booleans())
def test_a_delete_rule_that_asks_is_always_a_question(change, stack, approved):
    verdicts = verdicts_of(change, stack)
    asking = [v for v in verdicts if v.action == "ask" and v.rule.permission == "delete"]
    if asking and not any(v.action == "deny" for v in verdicts):
        assert _outcome(change, verdicts, approved).action == "ask"


@settings(max_examples=300, deadline=None)
@given(changes, rules)
def test_approving_the_command_only_ever_lifts_edit_asks(change, stack):
    verdicts = verdicts_of(change, stack)
    rule_allowed = _outcome(change, verdicts, approved=False)
    person = _outcome(change, verdicts, approved=True)
    if rule_allowed.action != person.action:
        assert (rule_allowed.action, person.action) == ("ask", "apply")
        assert change.kind != "deleted"
        assert not any(v.request.protected for v in verdicts)


def test_git_s_own_data_is_no_protected_change_but_its_hooks_are():
    index, hook = (Change(".git/index", "modified", "file"),
                   Change(".git/hooks/pre-commit", "created", "file"))
    assert all(r.protected is None for r in _requests(index, WHERE))
    assert any(r.protected for r in _requests(hook, WHERE))
