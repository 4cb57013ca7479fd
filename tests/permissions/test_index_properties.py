"""The rule index finds the rule trying every rule would find (hypothesis).

The reference is the definition: the last rule whose permission covers the
request's and whose own matcher (:class:`CompiledRule`) matches it. The index
(``dm_cc.permissions.index``) keys rules by leading words and segments, decides
most patterns by the walk alone and tries the rest as one regular expression:
every shortcut is compared here with the reference, on rules and requests made to
collide (shared words, optional tails, escapes, flags, case, non-ASCII letters
that equal ASCII ones ignoring case, brace and class globs, MCP calls).
"""

from __future__ import annotations

import json
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dm_cc.permissions import PathContext, Rule, Ruleset, evaluate
from dm_cc.permissions.engine import CompiledRule, last_match, subject
from dm_cc.permissions.index import TRIED_BEFORE_COMPILING
from dm_cc.permissions.patterns import Wildcard

CTX = PathContext(root="/proj", home="/home/u")
NO_CTX = PathContext(root=None, home=None)
# Broad strategies are cheap to satisfy; the ones built to collide get more examples.
SOME = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
MANY = settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])

ACTIONS = st.sampled_from(["allow", "deny", "ask"])


def reference(permission: str, text: str, words: tuple[str, ...] | None, rules: list[Rule],
              language: str, context: PathContext) -> Rule | None:
    """The last rule matching, trying every rule with its own matcher."""
    prepared = subject(permission, text, words, context, language)  # type: ignore[arg-type]
    for position in range(len(rules) - 1, -1, -1):
        compiled = CompiledRule(rules[position], position, context)
        if compiled.covers_permission(permission) and compiled.matches(prepared):
            return rules[position]
    return None


def check(permission: str, text: str, rules: list[Rule], language: str,
          context: PathContext = NO_CTX, words: tuple[str, ...] | None = None) -> None:
    expected = reference(permission, text, words, rules, language, context)
    ruleset = Ruleset(rules, context)
    for _ in range(TRIED_BEFORE_COMPILING + 1):  # rules one by one, then as one regex
        hit = last_match(permission, text, words, [ruleset], language)  # type: ignore[arg-type]
        got = None if hit is None else rules[hit[1]]
        assert got is expected, (got, expected)
    if words is None:
        # layered: the same rules cut in three, and through the public evaluate
        cut = len(rules) // 3
        layers = [Ruleset(rules[:cut], context), Ruleset(rules[cut:2 * cut], context),
                  Ruleset(rules[2 * cut:], context)]
        found = evaluate(permission, text, *layers, language=language)  # type: ignore[arg-type]
        assert (found if found.source != "default" else None) is expected


def rule(permission: st.SearchStrategy[str], pattern: st.SearchStrategy[str]
         ) -> st.SearchStrategy[Rule]:
    return st.builds(lambda p, pat, a, n: Rule(p, pat, a, source=f"gen:{n}"),
                     permission, pattern, ACTIONS, st.integers(0, 9))


# --------------------------------------------------------------------------- commands

# Words that collide: programs with flag tables and aliases (npm i is npm install),
# options in several spellings, wildcard characters as text, an empty word.
SHELL_WORDS = st.sampled_from([
    "git", "push", "npm", "i", "install", "run", "rm", "-r", "-f", "-rf", "-fr", "--force",
    "--recursive", "--forc", "-C", "dir", "origin", "+main", "a", "b", "x", "*", "?", "",
    "\\", "-", "--", "kubectl", "-n", "prod", "delete", "é"])
SHELL_TOKENS = st.one_of(SHELL_WORDS, st.sampled_from(["*", "?", "\\*", "\\?", "\\\\", " *"]))
SHELL_PATTERN = st.one_of(
    st.lists(SHELL_TOKENS, min_size=0, max_size=5).map(" ".join),
    st.lists(SHELL_TOKENS, min_size=1, max_size=5).map("".join),
    st.lists(SHELL_WORDS, min_size=1, max_size=4).map(lambda w: " ".join(w) + " *"),
    st.lists(SHELL_WORDS, min_size=1, max_size=4).map(lambda w: " ".join(w) + " * *"),
    st.lists(SHELL_WORDS, min_size=1, max_size=4).map(lambda w: " ".join(w) + "*"),
    st.just("*"), st.just(""), st.just(" *"),
)
SHELL_TEXT = st.one_of(
    st.lists(SHELL_WORDS, min_size=0, max_size=6).map(" ".join),
    st.lists(SHELL_WORDS, min_size=1, max_size=5).map("  ".join),
    st.lists(SHELL_WORDS, min_size=1, max_size=5).map("\t".join),
)
SHELL_PERMISSIONS = st.sampled_from(["bash", "bash", "bash", "*", "ba*", "b?sh", "read"])


@SOME
@given(rules=st.lists(rule(SHELL_PERMISSIONS, SHELL_PATTERN), max_size=14), text=SHELL_TEXT)
def test_shell_rules_index_like_trying_each(rules, text):
    check("bash", text, rules, "shell")


@SOME
@given(rules=st.lists(rule(SHELL_PERMISSIONS, SHELL_PATTERN), max_size=14),
       words=st.lists(SHELL_WORDS, min_size=0, max_size=6))
def test_shell_rules_with_the_parsers_words_index_like_trying_each(rules, words):
    # The gate passes the parser's words: a word may hold a space, the text may differ.
    check("bash", " ".join(words), rules, "shell", words=tuple(words))
    check("bash", " ".join(w.replace("-", " -") for w in words), rules, "shell",
          words=tuple(words))


@MANY
@given(data=st.data(), count=st.integers(0, 14))
def test_shell_rules_drawn_from_the_request_index_like_trying_each(data, count):
    # Patterns cut from the request itself, so that most of them match somewhere.
    text = data.draw(SHELL_TEXT)
    rules = []
    for n in range(count):
        start = data.draw(st.integers(0, len(text)))
        pattern = text[:start] + data.draw(st.sampled_from(["", "*", " *", "?", "*x", "* *"]))
        rules.append(Rule(data.draw(SHELL_PERMISSIONS), pattern, data.draw(ACTIONS),
                          source=f"gen:{n}"))
    check("bash", text, rules, "shell")


# --------------------------------------------------------------------------- names and URLs

# Letters that equal others ignoring case: the Kelvin sign is a k, a long s is an s,
# a dotless i, a sharp s (two letters casefolded), a capital I with a dot.
NAME_CHARS = "aAkKsS \u212a\u017f\u0131\u00df\u0130/:.*?"
NAME_TEXT = st.text(alphabet=NAME_CHARS, max_size=10)
URL_TEXT = st.one_of(NAME_TEXT, st.sampled_from([
    "https://example.com/Secret", "https://example.com/secret", "HTTPS://EXAMPLE.COM/x",
    "api.evil.com", "Api.Evil.com", "https://\u212aey.com/a", "https://key.com/a"]))
URL_PATTERN = st.one_of(URL_TEXT, URL_TEXT.map(lambda t: t + "*"), URL_TEXT.map(lambda t: t + " *"),
                        URL_TEXT.map(lambda t: "*" + t), st.just("*"))


@SOME
@given(rules=st.lists(rule(st.sampled_from(["webfetch", "network", "*", "web*"]), URL_PATTERN),
                      max_size=14),
       text=URL_TEXT, permission=st.sampled_from(["webfetch", "network"]))
def test_url_rules_index_like_trying_each(rules, text, permission):
    check(permission, text, rules, "url")


# Letters and the letters equal to them ignoring case (re.IGNORECASE), some of which
# lower() does not map to them: ``s`` and the long s, ``i`` and the dotless i.
TWINS = {"s": "sS\u017f", "k": "kK\u212a", "i": "iI\u0131\u0130", "a": "aA", " ": " ", "/": "/"}


@st.composite
def respelled(draw, text: str, ascii: bool = False) -> str:
    """``text`` with letters swapped for ones equal to them ignoring case (ASCII ones,
    or ones that are not when there are), perhaps cut and ended with a wildcard."""
    out = "".join(draw(st.sampled_from([t for t in TWINS[ch] if t.isascii() == ascii]
                                       or TWINS[ch])) if draw(st.booleans()) else ch
                  for ch in text)
    if draw(st.booleans()):
        return out
    return out[:draw(st.integers(0, len(out)))] + draw(st.sampled_from(["", "*", " *", "?", "*s"]))


@MANY
@given(data=st.data(), count=st.integers(0, 8), permission=st.sampled_from(["webfetch", "task"]))
def test_rules_equal_ignoring_case_index_like_trying_each(data, count, permission):
    base = data.draw(st.text(alphabet="saki /", min_size=0, max_size=5))
    rules = [Rule(data.draw(st.sampled_from([permission, "*"])), data.draw(respelled(base)),
                  data.draw(ACTIONS), source=f"gen:{n}") for n in range(count)]
    text = data.draw(respelled(base, ascii=data.draw(st.booleans())))
    check(permission, text, rules, "url" if permission == "webfetch" else "name")


@SOME
@given(rules=st.lists(rule(st.sampled_from(["task", "*", "t*"]), URL_PATTERN), max_size=14),
       text=URL_TEXT)
def test_name_rules_index_like_trying_each(rules, text):
    check("task", text, rules, "name")


# --------------------------------------------------------------------------- paths

SEGMENTS = st.sampled_from([
    "a", "A", "b", "src", "SRC", ".env", ".ENV", ".env.local", "x.pem", "X.PEM", "\u00df",
    "SS", "ss", "\u212a", "k", "K", "proj", "home", "u", "node_modules", "*", "?", "**",
    "*.pem", ".env*", "[ab]", "[!a]*", "{a,b}", "{src,lib}", "*a*", "?s"])
REQUEST_SEGMENTS = SEGMENTS.filter(lambda s: not any(c in s for c in "*?[{"))
PATH_PATTERN = st.one_of(
    st.lists(SEGMENTS, min_size=1, max_size=4).map("/".join),
    st.lists(SEGMENTS, min_size=1, max_size=4).map(lambda s: "/" + "/".join(s)),
    st.lists(SEGMENTS, min_size=0, max_size=3).map(lambda s: "/proj/" + "/".join(s)),
    st.lists(SEGMENTS, min_size=1, max_size=3).map(lambda s: "~/" + "/".join(s)),
    st.lists(SEGMENTS, min_size=1, max_size=3).map(lambda s: "./" + "/".join(s) + "/"),
    SEGMENTS, st.sampled_from(["*", "**", "/", "~", "/**", "**/*", "./**"]),
)
PATH_TEXT = st.one_of(
    st.lists(REQUEST_SEGMENTS, min_size=0, max_size=4).map(lambda s: "/".join(s) or "."),
    st.lists(REQUEST_SEGMENTS, min_size=0, max_size=4).map(lambda s: "/" + "/".join(s)),
    st.lists(REQUEST_SEGMENTS, min_size=0, max_size=3).map(lambda s: "/proj/" + "/".join(s)),
    st.lists(REQUEST_SEGMENTS, min_size=1, max_size=3).map(lambda s: "/home/u/" + "/".join(s)),
    st.sampled_from(["..", "../a", "a/../../b", "./a"]),
)


@SOME
@given(rules=st.lists(rule(st.sampled_from(["read", "read", "*", "re*", "edit"]), PATH_PATTERN),
                      max_size=14),
       text=PATH_TEXT, context=st.sampled_from([CTX, NO_CTX]))
def test_path_rules_index_like_trying_each(rules, text, context):
    check("read", text, rules, "path", context)


@st.composite
def path_near(draw, segments: list[str]) -> str:
    """A path pattern made from a request's ``segments``: some respelled in another case
    (casefold makes ``SS`` of a sharp s), cut, ended with ``**``, ``*`` or a glob, and
    anchored as a relative, absolute or home pattern, or a last segment alone."""
    respell = {"src": "SRC", "\u00df": "SS", "ss": "\u00df", "k": "\u212a", ".env": ".ENV"}
    out = [respell.get(s, s.swapcase()) if draw(st.booleans()) else s for s in segments]
    out = out[:draw(st.integers(0, len(out)))]
    out.append(draw(st.sampled_from(["**", "*", "*.pem", "?", "a", "[ab]", "{a,src}"])))
    if draw(st.booleans()):
        out.pop()
    if not out:
        return draw(st.sampled_from(["*", "**", "a"]))
    anchor = draw(st.sampled_from(["", "/", "/proj/", "~/", "./"]))
    return out[-1] if anchor == "" and draw(st.booleans()) else anchor + "/".join(out)


@MANY
@given(data=st.data(), count=st.integers(0, 10), context=st.sampled_from([CTX, NO_CTX]))
def test_path_rules_near_the_request_index_like_trying_each(data, count, context):
    segments = data.draw(st.lists(REQUEST_SEGMENTS, min_size=0, max_size=4))
    text = data.draw(st.sampled_from(["", "/", "/proj/", "/home/u/"])) + "/".join(segments)
    rules = [Rule(data.draw(st.sampled_from(["read", "*"])), data.draw(path_near(segments)),
                  data.draw(ACTIONS), source=f"gen:{n}") for n in range(count)]
    check("read", text or ".", rules, "path", context)


# --------------------------------------------------------------------------- MCP calls

CALLS = st.sampled_from([{"a": 1}, {"a": "x"}, {"a": "X"}, {"b": [1, "x"]}, {"a": 1, "b": 2},
                         {"b": 2, "a": 1}, {}])
MCP_TEXT = st.one_of(CALLS.map(json.dumps), CALLS.map(lambda c: json.dumps(c, indent=1)),
                     st.sampled_from(["", "not json", "[1]", '{"a": 1, "a": 2}']))
MCP_PATTERN = st.one_of(MCP_TEXT, st.sampled_from(["*", "a=*", "a=x*", "a=1", "b=x",
                                                   '*"a"*', "a=X b=2"]))


@SOME
@given(rules=st.lists(rule(st.sampled_from(["mcp__s__t", "mcp__s__*", "*"]), MCP_PATTERN),
                      max_size=14),
       text=MCP_TEXT)
def test_mcp_rules_index_like_trying_each(rules, text):
    check("mcp__s__t", text, rules, "name")


# --------------------------------------------------------------------------- wildcards as regexes

WILD_TEXT = st.text(alphabet="ab k\u212a\\*?", max_size=12)


@SOME
@given(pattern=WILD_TEXT, text=st.text(alphabet="ab kK\u212a\\*?S", max_size=14),
       ignore_case=st.booleans(), escapes=st.booleans(), tail=st.booleans())
def test_a_wildcards_regex_matches_what_it_matches(pattern, text, ignore_case, escapes, tail):
    wildcard = Wildcard(pattern, ignore_case=ignore_case, escapes=escapes, optional_tail=tail)
    assert (re.match(wildcard.regex(), text, re.DOTALL) is not None) == wildcard.match(text)
