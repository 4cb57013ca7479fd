"""What ``/permissions`` shows (dm_cc/ui/permissions_text.py): one screen at 80
columns, dm_cc's own layers folded, columns that hold with long names, filters,
and how ``/permissions add`` reads a rule."""

from __future__ import annotations

import re

import pytest
from support.trust import trust_project

from dm_cc.compose import open_world
from dm_cc.errors import UsageError
from dm_cc.permissions import Rule
from dm_cc.policy import NewRule
from dm_cc.ui.permissions_text import focus_lines, summary_lines, view_of
from dm_cc.ui.rule_edits import changed_lines, parse_add

LONG = "mcp__github__create_pull_request_review_comment"
PROJECT = """\
rules:
  - {permission: bash, pattern: "git push *", action: ask, reason: "pushes are visible"}
  - {permission: bash, pattern: "npm test *", action: allow}
"""
USER = f"""\
rules:
  - {{permission: {LONG}, pattern: "repo=myorg/*", action: allow, reason: "reviews in my org"}}
  - {{permission: webfetch, pattern: "https://docs.python.org/**", action: allow}}
  - permission: bash
    pattern: "docker compose -f docker-compose.production.yml up --build --force-recreate *"
    action: ask
    reason: prod
  - {{permission: bash, pattern: "make *", action: deny, reason: "\\u001b[31mred\\nand a second line"}}
"""


@pytest.fixture
def world(project, monkeypatch):
    (project / ".dm_cc").mkdir()
    (project / ".dm_cc" / "policy.yaml").write_text(PROJECT)
    monkeypatch.chdir(project)
    opened = open_world(cwd=project)
    user = opened.rule_file("user")
    user.parent.mkdir(parents=True)
    user.write_text(USER)
    return opened


def _view(world, session=None):
    saved = world.approvals.add("bash", "ls -la *", agent="build")
    session = session or {"build": [Rule("bash", "git status *", "allow",
                                         source="approval:session")]}
    return view_of(world, world.gate(world.agent("build"), approvals=(saved.rule(),)), "build",
                   session), saved


def _texts(lines):
    return [text for text, _style in lines]


def test_the_summary_fits_a_screen_of_80_columns(world, project):
    trust_project(project)
    view, saved = _view(open_world(cwd=project))
    texts = _texts(summary_lines(view, 80))
    assert all(len(text) < 80 for text in texts), [t for t in texts if len(t) >= 80]
    assert len(texts) < 30
    assert [t for t in texts if t.startswith("[guardrails]")] == [
        next(t for t in texts if re.fullmatch(r"\[guardrails\] \d+ denies no rule can open · "
                                              r"/permissions guardrails", t))]
    assert any(re.fullmatch(r"\[builtin\] \d+ defaults \(\d+ allow, \d+ ask\) · /permissions "
                            r"builtin", t) for t in texts)
    assert "[project] .dm_cc/policy.yaml · trusted: opens nothing beyond the project" in texts
    assert '   1 ask   bash "git push *"  :2  # pushes are visible' in texts
    assert '   2 allow bash "npm test *"  :3' in texts
    # a permission too long for its column: the pattern goes under it, the columns hold
    row = texts.index(f"   3 allow {LONG}")
    assert texts[row + 1] == '           "repo=myorg/*"  :2  # reviews in my org'
    assert '   4 allow webfetch         "https://docs.python.org/**"  :3' in texts
    docker = next(t for t in texts if t.startswith("   5 ask   bash"))
    assert texts[texts.index(docker) + 1].startswith(" " * 28)      # under its pattern
    # what a file says is shown, never acted on
    assert '   6 deny  bash             "make *"  :8  # \\u001b[31mred\\nand a second line' \
        in texts
    assert f"  {saved.id}  build  bash \"ls -la *\"  · saved" in texts
    assert '  s1                build  bash "git status *"  · this session' in texts
    assert "  this project's files: trusted (/permissions untrust forgets them)" in texts


def test_an_untrusted_projects_allow_rules_are_listed_apart_with_their_numbers(world):
    view, _ = _view(world)
    texts = _texts(summary_lines(view, 80))
    assert "[project] .dm_cc/policy.yaml · not trusted: its allow rules are left out" in texts
    left = texts.index("Left out until you trust this project's files (/permissions trust):")
    assert texts[left + 1] == '   2 allow bash "npm test *"  :3'
    assert any(t.startswith("  this project's files: not trusted: .dm_cc/policy.yaml")
               for t in texts)
    focused = _texts(focus_lines(view, "project", 80))
    assert '   2 allow bash "npm test *"  :3' in focused


def test_filters_show_a_tools_permission_a_layer_or_some_text(world):
    view, _ = _view(world)
    about_write = _texts(focus_lines(view, "write", 80))
    assert about_write[0].startswith("Rules about edit (the write tool's permission) for build")
    assert '     ask   * "*"  # not covered by a more specific rule' in about_write
    about_bash = _texts(focus_lines(view, "bash", 80))
    assert any(re.fullmatch(r"\[guardrails\] \d+ rules about bash · /permissions guardrails "
                            "bash", t) for t in about_bash)            # still folded
    assert '   1 ask   bash "git push *"  :2  # pushes are visible' in about_bash
    guardrails = _texts(focus_lines(view, "guardrails dd", 80))
    assert guardrails[0].startswith("Rules of the guardrails layer that mention 'dd' for build")
    assert "      # irreversible damage to the whole machine or home directory" in guardrails
    assert '     deny  bash "dd * of=/dev/sd*"' in guardrails
    assert all("rm -r" not in t for t in guardrails)
    assert _texts(focus_lines(view, "push", 80))[1:] == [
        "[project] .dm_cc/policy.yaml · not trusted: its allow rules are left out",
        '   1 ask   bash "git push *"  :2  # pushes are visible']
    assert _texts(focus_lines(view, "nothing-like-this", 80))[-1] == \
        "no rules that mention 'nothing-like-this'; /permissions lists every layer"
    every = _texts(focus_lines(view, "all", 80))
    assert len(every) > 150 and all(len(t) < 80 for t in every)


@pytest.mark.parametrize(("args", "expected"), [
    ("--user ask bash git push *", ("user", NewRule("ask", "bash", "git push *"))),
    ("--project deny bash rm -rf * # no deletes here",
     ("project", NewRule("deny", "bash", "rm -rf *", "no deletes here"))),
    ("--user allow bash 'echo # not a comment' # quoted",
     ("user", NewRule("allow", "bash", "echo # not a comment", "quoted"))),
    ('--user allow edit "src/**"', ("user", NewRule("allow", "edit", "src/**"))),
    ("--user allow bash make#1", ("user", NewRule("allow", "bash", "make#1"))),
])
def test_a_rule_is_read_as_typed(args, expected):
    assert parse_add(args.split(" "), {}) == expected


@pytest.mark.parametrize(("args", "error"), [
    ("ask bash x", "say whose file the rule goes in: /permissions add --user … (your own, "
                   "U: every project) or --project … (this project's, P: shared"),
    ("--team ask bash x", "--team: say --project or --user, once"),
    ("--user --project ask bash x", "--project: say --project or --user, once"),
    ("--user maybe bash x", "usage: /permissions add"),
    ("--user ask bash", "usage: /permissions add"),
    ("--user ask bash # only a reason", "the rule needs a pattern"),
])
def test_a_malformed_rule_is_refused_with_what_to_type(args, error):
    with pytest.raises(UsageError) as refused:
        parse_add(args.split(" "), {"user": "U", "project": "P"})
    assert str(refused.value).startswith(error)


def test_a_refused_change_says_why_and_that_nothing_was_saved(world):
    changed = world.add_rule("project", NewRule("ask", "bash", "git push *"))
    texts = _texts(changed_lines(changed, 80))
    assert texts[0].startswith("not saved: the lint finds a problem the rule would bring")
    assert texts[2].startswith("  .dm_cc/policy.yaml:2: redundant: ask bash 'git push *' never")
    assert texts[-2].startswith("  (nothing was saved; the command is back at the prompt")
    assert all(len(t) < 80 for t in texts)


def test_many_saved_approvals_show_the_newest_and_how_to_see_them_all(world, project):
    """Months of "always" answers: /permissions shows the newest (this session's
    last), says how many older ones it leaves out; /permissions approvals lists all."""
    import json

    from dm_cc.session import SavedApproval

    world.approvals.add("bash", "ls -la *", agent="build")  # the file and its directory
    older = [SavedApproval(f"apr_{n:08x}", "bash", f"npm run task{n} *", "build",
                           1_780_000_000.0 + n).to_json() for n in range(1_000)]
    world.approvals.path.write_text(json.dumps({"version": 1, "project": None,
                                                "approvals": older}), encoding="utf-8")
    session = {"build": [Rule("bash", "git status *", "allow", source="approval:session")]}
    view = view_of(world, world.gate(world.agent("build")), "build", session)
    texts = _texts(summary_lines(view, 80))
    assert "  981 older not shown · /permissions approvals lists them all" in texts
    shown = [t for t in texts if "npm run task" in t]
    assert len(shown) == 19 and "task999 " in shown[-1] and "task981 " in shown[0]
    assert any(t.startswith("  s1 ") and "git status *" in t for t in texts)
    everything = _texts(focus_lines(view, "approvals", 80))
    assert sum("npm run task" in t for t in everything) == 1_000
    assert not any("older not shown" in t for t in everything)
