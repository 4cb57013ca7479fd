"""The rule engine: last match wins, the three pattern languages, decide(), fail-safes.

Negative shell-pattern cases use ``allow`` rules on purpose: deny/ask shell rules
may also match other flag spellings (tested elsewhere), allow rules never do.
"""

from __future__ import annotations

import time

import pytest
from support.requests import Request, evaluate

from dm_cc.permissions import Ceiling, Gate, Layer, PathContext, Rule, Ruleset, decide

ROOT = "/work/project"
HOME = "/home/alice"
CTX = PathContext(root=ROOT, home=HOME)


def rules(*specs: tuple[str, str, str]) -> list[Rule]:
    """Rules from ``(permission, pattern, action)``; each gets its index as its source."""
    return [Rule(p, pat, a, source=f"test:{i}") for i, (p, pat, a) in enumerate(specs, start=1)]


def action(permission: str, text: str, *specs: tuple[str, str, str],
           context: PathContext | None = None) -> str:
    ruleset = Ruleset(rules(*specs), context) if context is not None else rules(*specs)
    return evaluate(permission, text, ruleset).action


# --------------------------------------------------------------------------- last match wins


def test_last_matching_rule_wins_and_is_returned_itself():
    ruleset = rules(("bash", "*", "deny"), ("bash", "ls *", "allow"), ("bash", "ls -R *", "ask"))
    assert evaluate("bash", "ls -la", ruleset) is ruleset[1]
    assert evaluate("bash", "ls -R /", ruleset) is ruleset[2]
    assert evaluate("bash", "rm x", ruleset) is ruleset[0]


def test_a_later_broader_rule_silences_an_earlier_narrow_one():
    ruleset = rules(("bash", "ls -R *", "ask"), ("bash", "ls *", "allow"))
    assert evaluate("bash", "ls -R /", ruleset) is ruleset[1]


@pytest.mark.parametrize("permission, text", [
    ("bash", "ls"), ("read", "src/a.py"), ("webfetch", "https://example.com"),
    ("mcp__git__status", "{}"), ("task", "explore"),
])
def test_no_match_is_ask_from_default(permission, text):
    rule = evaluate(permission, text, rules(("edit", "*", "allow")))
    assert rule.action == "ask"
    assert rule.source == "default"
    assert rule.reason  # the default explains itself


def test_no_rulesets_at_all_is_default_ask():
    rule = evaluate("bash", "ls")
    assert (rule.action, rule.source) == ("ask", "default")


def test_rulesets_are_concatenated_in_order():
    first = rules(("bash", "git *", "allow"))
    second = [Rule("bash", "git push *", "deny", source="second")]
    assert evaluate("bash", "git push origin", first, second).source == "second"
    assert evaluate("bash", "git status", first, second).action == "allow"
    assert evaluate("bash", "git push origin", second, first).action == "allow"


@pytest.mark.parametrize("specs, text, expected", [
    # opencode's documented example: later, more specific rules win
    ((("bash", "*", "ask"), ("bash", "git *", "allow"), ("bash", "git push *", "deny")),
     "git status", "allow"),
    ((("bash", "*", "ask"), ("bash", "git *", "allow"), ("bash", "git push *", "deny")),
     "git push origin", "deny"),
    ((("bash", "*", "ask"), ("bash", "git *", "allow"), ("bash", "git push *", "deny")),
     "git push", "deny"),
    ((("bash", "*", "ask"), ("bash", "git *", "allow"), ("bash", "git push *", "deny")),
     "ls", "ask"),
    # reversed: the later, broader rule wins
    ((("bash", "git push *", "deny"), ("bash", "git *", "allow")), "git push", "allow"),
    ((("bash", "git push *", "deny"), ("bash", "git *", "allow")), "git push origin", "allow"),
    ((("bash", "*", "allow"), ("bash", "rm *", "deny")), "rm -rf build", "deny"),
    ((("bash", "rm *", "deny"), ("bash", "*", "allow")), "rm -rf build", "allow"),
])
def test_opencode_last_match_wins_cases(specs, text, expected):
    assert action("bash", text, *specs) == expected


# --------------------------------------------------------------------------- permission wildcards


@pytest.mark.parametrize("rule_permission, permission, matches", [
    ("*", "bash", True),
    ("*", "read", True),
    ("*", "mcp__git__status", True),
    ("mcp__git__*", "mcp__git__status", True),
    ("mcp__git__*", "mcp__git__log", True),
    ("mcp__git__*", "mcp__github__status", False),
    ("mcp__git__*", "mcp__gitx__status", False),
    ("mcp__*", "mcp__fs__read", True),
    ("mcp__*", "bash", False),
    ("ed?t", "edit", True),
    ("edit", "edits", False),
    ("read", "READ", False),
])
def test_permission_field_is_a_wildcard(rule_permission, permission, matches):
    got = action(permission, "x", (rule_permission, "*", "allow"))
    assert got == ("allow" if matches else "ask")


def test_exact_and_wildcard_permission_rules_keep_their_relative_order():
    ruleset = rules(("bash", "*", "allow"), ("*", "*", "deny"), ("bash", "ls", "allow"))
    assert evaluate("bash", "ls", ruleset) is ruleset[2]
    assert evaluate("bash", "cat x", ruleset) is ruleset[1]
    assert evaluate("read", "x", ruleset) is ruleset[1]


# --------------------------------------------------------------------------- shell wildcard


@pytest.mark.parametrize("pattern, text, matches", [
    ("git *", "git", True),
    ("git *", "git status", True),
    ("git *", "git status --short", True),
    ("git *", "gitk", False),
    ("git *", "git-lfs", False),
    ("git *", "GIT status", False),
    ("git *", "agit status", False),
    ("git status", "git status", True),
    ("git status", "git status -s", False),
    ("git status", "git", False),
    ("*", "anything at all / with slashes", True),
    ("*", "", True),
    ("rm *", "rm -rf /tmp/a/b", True),
    ("cat */secret", "cat a/b c/secret", True),
    ("cat */secret", "cat secret", False),
    ("echo *c", "echo a/b c", True),
    ("l?", "ls", True),
    ("l?", "l", False),
    ("l?", "lss", False),
    ("l? -la", "ls -la", True),
    ("echo ?", "echo  ", True),
    ("echo (a|b)", "echo (a|b)", True),
    ("echo (a|b)", "echo a", False),
    ("echo [ab]", "echo [ab]", True),
    ("echo [ab]", "echo a", False),
    ("echo $HOME", "echo $HOME", True),
    ("echo $HOME", "echo HOME", False),
    ("echo ^x+y.z", "echo ^x+y.z", True),
    ("echo ^x+y.z", "echo xxy.z", False),
    ("echo ^x+y.z", "echo ^x+yaz", False),
    ("echo a.b", "echo aXb", False),
    ("echo {a,b}", "echo a", False),
    ("echo \\d", "echo 1", False),
    ("echo \\d", "echo \\d", True),
    ("npm run *", "npm run dev", True),
    ("npm run *", "npm run", True),
    ("npm run *", "npm runx", False),
])
def test_shell_wildcard(pattern, text, matches):
    assert action("bash", text, ("bash", pattern, "allow")) == ("allow" if matches else "ask")


@pytest.mark.parametrize("permission", ["task", "webfetch", "todo", "mcp__git__status"])
@pytest.mark.parametrize("pattern, text, matches", [
    ("https://docs.python.org/*", "https://docs.python.org/3/library/re.html", True),
    ("https://docs.python.org/*", "https://docs.python.org.evil.com/x", False),
    ("https://example.com/?", "https://example.com/a", True),
    ("https://example.com/a?b=1", "https://example.com/a?b=1", True),
    ("https://example.com/a?b=1", "https://example.com/a?b=12", False),
    ("https://*.example.com/*", "https://api.example.com/v1", True),
    ("https://*.example.com/*", "https://example.com/v1", False),
    ("explore", "explore", True),
    ("explore", "Explore", False),
    ("exp*", "explore", True),
    ("(x|y)", "x", False),
    ('{"repo": *}', '{"repo": "/a/b"}', True),
    ('{"repo": *}', '{"path": "/a/b"}', False),
])
def test_names_and_urls_use_the_shell_wildcard(permission, pattern, text, matches):
    assert action(permission, text, (permission, pattern, "allow")) == (
        "allow" if matches else "ask")


def test_name_rules_are_case_sensitive_even_for_deny():
    # the case-insensitive fail-safe is for paths only
    assert action("task", "Explore", ("task", "explore", "deny")) == "ask"


# --------------------------------------------------------------------------- path globs


@pytest.mark.parametrize("pattern, path, matches", [
    # * and ? stay within one segment, ** crosses
    ("src/*", "src/a.py", True),
    ("src/*", "src/a/b.py", False),
    ("src/*.py", "src/a.py", True),
    ("src/?.py", "src/a.py", True),
    ("src/?.py", "src/ab.py", False),
    ("src/**", "src/a/b/c.py", True),
    ("src/**", "src", True),
    ("src/**", "srcx/a.py", False),
    ("src/**/*.py", "src/a.py", True),
    ("src/**/*.py", "src/a/b/c.py", True),
    ("src/**/*.py", "src/a/b/c.txt", False),
    ("**", "a/b/c", True),
    ("**", ".", True),
    # braces
    ("{src,lib}/**", "lib/a.py", True),
    ("{src,lib}/**", "src/a.py", True),
    ("{src,lib}/**", "test/a.py", False),
    ("src/*.{py,pyi}", "src/a.pyi", True),
    ("src/*.{py,pyi}", "src/a.pyc", False),
    # dotfiles are matched by wildcards
    ("**/*", "a/.hidden/b", True),
    ("src/*", "src/.env", True),
    ("a/*/b", "a/.git/b", True),
    ("*.pyc", "deep/x/.a.pyc", True),
    # no slash: the basename at any depth
    (".env*", ".env", True),
    (".env*", "config/deep/.env.production", True),
    (".env*", "config/deep/env", False),
    ("*.pem", "keys/prod/server.pem", True),
    ("id_rsa", "home/.ssh/id_rsa", True),
    ("id_rsa", "id_rsa.pub", False),
    # a slash anchors at the project root
    ("src/*.py", "x/src/a.py", False),
    ("config/.env", "config/.env", True),
    ("config/.env", "a/config/.env", False),
    ("./src/*.py", "src/a.py", True),
    # character classes
    ("src/a[0-9].py", "src/a1.py", True),
    ("src/a[0-9].py", "src/ax.py", False),
])
def test_path_globs(pattern, path, matches):
    assert action("read", path, ("read", pattern, "allow"), context=CTX) == (
        "allow" if matches else "ask")


@pytest.mark.parametrize("pattern, path, matches", [
    ("/etc/**", "/etc/passwd", True),
    ("/etc/**", "/etc/ssl/certs/a.pem", True),
    ("/etc/**", "/etcx/passwd", False),
    ("/etc/*", "/etc/ssl/certs", False),
    ("/etc/passwd", "/etc/passwd", True),
    ("~/.ssh/**", f"{HOME}/.ssh/id_rsa", True),
    ("~/.ssh/**", "/home/bob/.ssh/id_rsa", False),
    ("~", HOME, True),
    ("~/x/**", f"{HOME}/x/y/z", True),
    # an absolute rule matches a project-relative request
    (f"{ROOT}/src/**", "src/a.py", True),
    (f"{ROOT}/**", ".", True),
    ("/work/**", "src/a.py", True),
    ("/other/**", "src/a.py", False),
    # a project-relative rule matches an absolute request inside the project
    ("src/**", f"{ROOT}/src/a.py", True),
    ("src/**", f"{ROOT}x/src/a.py", False),
    # basename patterns match outside the project too
    (".env*", "/etc/app/.env", True),
    ("**", "/etc/passwd", False),
    ("**", ROOT, True),
])
def test_absolute_home_and_project_anchoring(pattern, path, matches):
    assert action("read", path, ("read", pattern, "allow"), context=CTX) == (
        "allow" if matches else "ask")


def test_home_pattern_without_home_matches_nothing():
    context = PathContext(root=ROOT, home=None)
    assert action("read", f"{HOME}/x", ("read", "~/**", "deny"), context=context) == "ask"


def test_home_pattern_uses_the_context_home_not_the_process_home():
    assert action("read", f"{HOME}/x/y", ("read", "~/x/**", "allow"),
                  context=PathContext(home=HOME)) == "allow"
    assert action("read", f"{HOME}/x/y", ("read", "~/x/**", "allow"),
                  context=PathContext(home="/home/bob")) == "ask"


@pytest.mark.parametrize("path", [
    "../x", "../src/a.py", "a/../../x", "src/../../etc/passwd", "..",
])
@pytest.mark.parametrize("context", [CTX, PathContext(root=None, home=HOME)],
                         ids=["root", "no-root"])
def test_relative_paths_climbing_out_are_never_inside(path, context):
    for pattern in ("**", "src/**", "x", "a.py", "etc/passwd"):
        if context.root is not None and pattern in ("x", "a.py"):
            continue  # basename patterns legitimately match anywhere once the path is known
        assert action("read", path, ("read", pattern, "allow"), context=context) == "ask", pattern


def test_dotdot_is_folded_against_the_root():
    assert action("read", "../x", ("read", "/work/x", "allow"), context=CTX) == "allow"
    assert action("read", "src/../../project/a.py", ("read", "a.py", "allow"),
                  context=CTX) == "allow"
    assert action("read", "a/../b", ("read", "b", "allow"), context=CTX) == "allow"


@pytest.mark.parametrize("path", ["../secret.txt", "/etc/passwd"])
def test_double_star_slash_star_is_project_relative(path):
    assert action("read", path, ("read", "**/*", "allow"), context=CTX) == "ask"


# --------------------------------------------------------------------------- fail-safe asymmetry


@pytest.mark.parametrize("pattern, path, rule_action, expected", [
    ("src/**", "SRC/Main.py", "allow", "ask"),
    ("src/**", "SRC/Main.py", "deny", "deny"),
    ("src/**", "src/Main.py", "allow", "allow"),
    (".ENV", ".env", "deny", "deny"),
    (".env*", "a/.Env.Local", "deny", "deny"),
    (".env*", "a/.Env.Local", "allow", "ask"),
    ("/ETC/**", "/etc/passwd", "deny", "deny"),
    ("/ETC/**", "/etc/passwd", "allow", "ask"),
    ("*.PEM", "keys/a.pem", "deny", "deny"),
    ("Makefile", "makefile", "allow", "ask"),
])
def test_deny_paths_ignore_case_allow_paths_do_not(pattern, path, rule_action, expected):
    assert action("read", path, ("read", pattern, rule_action), context=CTX) == expected


def test_ask_path_rules_also_ignore_case():
    ruleset = rules(("read", "**", "allow"), ("read", "secrets/**", "ask"))
    rule = evaluate("read", "SECRETS/key", Ruleset(ruleset, CTX))
    assert rule is ruleset[1]


def test_read_src_main_upper_case_against_allow_src_is_ask():
    rule = evaluate("read", "SRC/Main.py", Ruleset(rules(("read", "src/**", "allow")), CTX))
    assert (rule.action, rule.source) == ("ask", "default")


# --------------------------------------------------------------------------- decide()


def test_decide_any_deny_is_deny():
    ruleset = rules(("bash", "*", "allow"), ("bash", "rm *", "deny"), ("bash", "curl *", "ask"))
    decision = decide([Request("bash", "ls"), Request("bash", "curl x"), Request("bash", "rm x")],
                      ruleset)
    assert decision.action == "deny"
    assert [v.action for v in decision.verdicts] == ["allow", "ask", "deny"]
    assert [v.rule for v in decision.verdicts] == [ruleset[0], ruleset[2], ruleset[1]]
    assert [v.rule.source for v in decision.deciding] == ["test:2"]


def test_decide_any_ask_is_ask():
    ruleset = rules(("bash", "*", "allow"), ("bash", "curl *", "ask"))
    decision = decide([Request("bash", "ls"), Request("bash", "curl x")], ruleset)
    assert decision.action == "ask"
    assert decision.deciding[0].request == Request("bash", "curl x")
    assert decision.deciding[0].rule.source == "test:2"


def test_decide_all_allow_is_allow():
    ruleset = rules(("bash", "ls *", "allow"), ("read", "**", "allow"))
    decision = decide([Request("bash", "ls -la"), Request("read", "src/a.py")],
                      Ruleset(ruleset, CTX))
    assert decision.action == "allow"
    assert [v.rule.source for v in decision.verdicts] == ["test:1", "test:2"]
    assert all(v.note is None for v in decision.verdicts)


def test_decide_empty_request_set_asks():
    decision = decide([], rules(("*", "*", "allow")))
    assert decision.action == "ask"
    assert decision.verdicts == ()


def test_decide_unmatched_request_carries_the_default_rule():
    decision = decide([Request("webfetch", "https://x.org")], rules(("bash", "*", "allow")))
    assert decision.action == "ask"
    assert decision.verdicts[0].rule.source == "default"


def test_decide_keeps_reason_and_source():
    rule = Rule("read", ".env*", "deny", reason="secrets stay local", source="p.yaml:3")
    verdict = decide([Request("read", "config/.env.local")], [rule]).verdicts[0]
    assert verdict.rule is rule
    assert (verdict.rule.source, verdict.rule.reason) == ("p.yaml:3", "secrets stay local")
    assert "p.yaml:3" in rule.describe() and "secrets stay local" in rule.describe()


def test_decide_accepts_several_rulesets():
    decision = decide([Request("bash", "git push")], rules(("bash", "git *", "allow")),
                      [Rule("bash", "git push *", "deny", source="later")])
    assert decision.action == "deny"
    assert decision.verdicts[0].rule.source == "later"


def test_a_gate_lists_the_rules_that_could_decide_a_permission_layer_by_layer():
    first = rules(("bash", "*", "ask"), ("read", "*", "allow"), ("*", "*", "deny"))
    second = [Rule("bash", "git *", "allow", source="later"), Rule("b?sh", "rm *", "deny")]
    gate = Gate([Layer("policy", tuple(first)), Layer("approvals", tuple(second), approvals=True)])
    assert gate.rules_for("bash") == (first[0], first[2], *second)
    assert gate.rules_for("read") == (first[1], first[2])
    assert gate.rules_for("edit") == (first[2],)
    ceiling = Gate([Layer("parent", (Rule("edit", "*", "deny"),))])
    assert gate.within(Ceiling(ceiling)).rules_for("edit") == (first[2],)  # its own layers'
    assert Gate([]).rules_for("bash") == ()

# --------------------------------------------------------------------------- aliases


@pytest.mark.parametrize("specs, pattern, alias, expected, deciding_name", [
    # deny if either name is denied
    ((("read", "**", "allow"), ("read", ".env*", "deny")), "link.txt", "config/.env", "deny",
     "config/.env"),
    ((("read", "**", "allow"), ("read", ".env*", "deny")), "config/.env", "link.txt", "deny",
     "config/.env"),
    ((("read", "**", "allow"), ("read", ".env", "deny")), "link", ".ENV", "deny", ".ENV"),
    # allow only if both are allowed
    ((("read", "docs/**", "allow"),), "docs/a.md", "src/a.md", "ask", "src/a.md"),
    ((("read", "docs/**", "allow"),), "src/a.md", "docs/a.md", "ask", "src/a.md"),
    ((("read", "docs/**", "allow"), ("read", "src/**", "allow")), "docs/a.md", "src/a.md",
     "allow", "docs/a.md"),
    # an outside target of an inside link
    ((("read", "**", "allow"),), "link", "/etc/shadow", "ask", "/etc/shadow"),
])
def test_aliases_strictest_name_wins(specs, pattern, alias, expected, deciding_name):
    decision = decide([Request("read", pattern, aliases=(alias,))], Ruleset(rules(*specs), CTX))
    assert decision.action == expected
    assert decision.verdicts[0].name == deciding_name


def test_alias_allow_needs_exact_case_on_both_names():
    decision = decide([Request("read", "docs/a.md", aliases=("DOCS/a.md",))],
                      Ruleset(rules(("read", "docs/**", "allow")), CTX))
    assert decision.action == "ask"


# --------------------------------------------------------------------------- allowable / sensitive


@pytest.mark.parametrize("rule_action, expected", [
    ("allow", "ask"), ("ask", "ask"), ("deny", "deny"),
])
def test_unallowable_request_is_never_allowed(rule_action, expected):
    ruleset = rules(("bash", "*", rule_action))
    decision = decide([Request("bash", "$CMD x", allowable=False)], ruleset)
    assert decision.action == expected
    verdict = decision.verdicts[0]
    assert verdict.rule is ruleset[0]
    if rule_action == "allow":
        assert verdict.note  # says why the allow was withheld


def test_unallowable_request_keeps_its_own_note():
    decision = decide([Request("bash", "x", allowable=False, note="built from $VAR")],
                      rules(("bash", "x", "allow")))
    assert decision.action == "ask"
    assert decision.verdicts[0].note == "built from $VAR"


@pytest.mark.parametrize("pattern, expected", [
    ("find *", "ask"),
    ("*", "ask"),
    ("find * -exec *", "allow"),
    ("find . -exec rm {} ;", "allow"),
])
def test_sensitive_token_must_be_spelled_by_the_allow_rule(pattern, expected):
    request = Request("bash", "find . -exec rm {} ;", sensitive=("-exec",))
    decision = decide([request], rules(("bash", pattern, "allow")))
    assert decision.action == expected
    assert (decision.verdicts[0].note is None) == (expected == "allow")
    if expected == "ask":
        assert "-exec" in decision.verdicts[0].note


def test_sensitive_tokens_do_not_weaken_deny():
    request = Request("bash", "find . -exec rm {} ;", sensitive=("-exec",))
    assert decide([request], rules(("bash", "find *", "deny"))).action == "deny"


def test_every_sensitive_token_must_be_named():
    request = Request("bash", "env NODE_OPTIONS=x find -exec y",
                      sensitive=("-exec", "NODE_OPTIONS"))
    assert decide([request], rules(("bash", "env * -exec *", "allow"))).action == "ask"
    assert decide([request], rules(("bash", "env NODE_OPTIONS=* -exec *", "allow"))
                  ).action == "allow"


# --------------------------------------------------------------------------- speed

LONG = 100_000


@pytest.mark.parametrize("permission, pattern, text", [
    ("bash", "*a*b*a*b*c", "a" * LONG),
    ("bash", "*a*b*a*b*c", "ab" * (LONG // 2)),
    ("bash", "*a*b*a*b*c", "ab" * (LONG // 2) + "x"),
    ("bash", "*a?b*a*b*c", "ab" * (LONG // 2)),
    ("webfetch", "*a*b*a*b*c", "ab" * (LONG // 2)),
    ("read", "*a*b*a*b*c", "a" * LONG),
    ("read", "*a*b*a*b*c", "ab" * (LONG // 2)),
    ("read", "*a*b*a*b*c", "ab" * (LONG // 2) + "x"),
    ("read", "src/*a*b*a*b*c", "src/" + "ab" * (LONG // 2)),
    ("read", "**/a/**/b/**/a/**/b/**/c", "/".join(["a"] * (LONG // 2))),
    ("read", "**/a/**/b/**/a/**/b/**/c", "/".join(["a", "b"] * (LONG // 4))),
    ("read", "**/a/**/b/**/a/**/b/**/c", "/".join(["a", "b"] * (LONG // 4)) + "/x"),
])
@pytest.mark.parametrize("rule_action", ["allow", "deny"])
def test_no_catastrophic_backtracking(permission, pattern, text, rule_action):
    assert len(text) >= LONG - 1
    ruleset = Ruleset(rules((permission, pattern, rule_action)), CTX)
    start = time.perf_counter()
    verdict = evaluate(permission, text, ruleset)
    decision = decide([Request(permission, text)], ruleset)
    elapsed = time.perf_counter() - start
    assert elapsed < 1.0, f"{elapsed:.2f}s"
    assert verdict.action in ("ask", rule_action)
    assert decision.action == verdict.action


@pytest.mark.parametrize("permission, pattern, text", [
    ("bash", "*a*b*a*b*c", "ab" * (LONG // 2) + "c"),
    ("read", "*a*b*a*b*c", "ab" * (LONG // 2) + "c"),
    ("read", "**/a/**/b/**/a/**/b/**/c", "/".join(["a", "b"] * (LONG // 4)) + "/c"),
])
def test_long_inputs_that_do_match_still_match_quickly(permission, pattern, text):
    start = time.perf_counter()
    rule = evaluate(permission, text, Ruleset(rules((permission, pattern, "deny")), CTX))
    assert time.perf_counter() - start < 1.0
    assert rule.action == "deny"


def test_a_rule_is_described_with_its_pattern_as_written():
    from dm_cc.permissions import Rule

    assert Rule("bash", "rm -r /\\* *", "deny", source="s").describe() == "deny bash 'rm -r /\\* *' (s)"
    assert Rule("bash", "echo 'x'", "ask", source="s").describe() == "ask bash \"echo 'x'\" (s)"
    assert Rule("bash", "a'b\"c", "ask", source="s").describe() == "ask bash 'a\\'b\"c' (s)"


def test_a_gate_names_the_rules_that_could_decide_a_permission_and_matches_names_as_it_does():
    from dm_cc.permissions import Ceiling, Gate, Layer

    policy = (Rule("read", ".env*", "deny"), Rule("*", "*", "ask"), Rule("edit", "**", "allow"))
    approved = (Rule("read", "src/**", "allow"),)
    gate = Gate([Layer("policy", policy), Layer("approvals", approved, approvals=True)], CTX)
    found = gate.candidates("read")
    assert [(c.rule, c.layer.name) for c in found] == [
        (policy[0], "policy"), (policy[1], "policy"), (approved[0], "approvals")]
    assert found[0].context == CTX
    assert found[0].matches("config/.ENV.local")         # a deny ignores case, at any depth
    assert found[2].matches(f"{ROOT}/src/a.py")          # absolute names inside the project
    assert not found[2].matches("SRC/a.py")              # an allow needs the exact case
    assert not found[0].matches("src/a.py")
    parent = Gate([Layer("parent", (Rule("read", "**", "deny"),))], CTX)
    assert gate.within(Ceiling(parent)).candidates("read") == found   # its own layers only
    assert [c.rule for c in gate.candidates("webfetch")] == [policy[1]]
