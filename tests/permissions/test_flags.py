"""dm_cc.permissions.flags: option scanning, the rule wildcard, flag-insensitive rules."""

from __future__ import annotations

import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dm_cc.permissions.shell.flags import (
    FlagRule,
    Option,
    compile_flag_rule,
    scan_options,
    wildcard_match,
)

# --------------------------------------------------------------------------- wildcard


@pytest.mark.parametrize(("pattern", "text", "expected"), [
    ("ls", "ls", True),
    ("ls", "ls -la", False),
    ("ls *", "ls", True),  # a trailing " *" is optional
    ("ls *", "ls -la", True),
    ("ls *", "lsof", False),
    ("git push*", "git push", True),
    ("git push*", "git pushx", True),
    ("git * --force", "git push origin --force", True),
    ("git * --force", "git push --force origin", False),
    ("*", "", True),
    ("*", "anything at all", True),
    ("a?c", "abc", True),
    ("a?c", "ac", False),
    ("a?c*", "abd", False),
    ("*a?c*", "xxabcxx", True),
    ("x* *y", "x y", True),
    ("rm -rf /", "rm -rf /tmp", False),
    ("a*b*c", "abc", True),
    ("a*b*c", "acb", False),
    ("*.txt", "a.txt.bak", False),
    ("a**b", "ab", True),
    ("[abc]", "a", False),  # brackets are literal
    ("[abc]", "[abc]", True),
])
def test_wildcard_match(pattern: str, text: str, expected: bool) -> None:
    assert wildcard_match(pattern, text) is expected


def _oracle(pattern: str, text: str) -> bool:
    regex = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    if re.fullmatch(regex, text, re.DOTALL):
        return True
    return pattern.endswith(" *") and _oracle(pattern[:-2], text)


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="ab *?", max_size=8), st.text(alphabet="ab ", max_size=10))
def test_wildcard_agrees_with_a_regex_oracle(pattern: str, text: str) -> None:
    assert wildcard_match(pattern, text) is _oracle(pattern, text)


@pytest.mark.parametrize("text", [
    "ab" * 50_000,
    "a" * 100_000,
    "ab" * 50_000 + "c",
    ("ab" * 25_000 + "b") * 2,
])
def test_wildcard_is_linear(text: str) -> None:
    start = time.perf_counter()
    for pattern in ("*a*b*a*b*c", "*a?b*a?b*c", "a*" * 20 + "c"):
        wildcard_match(pattern, text)
    assert time.perf_counter() - start < 0.1


# --------------------------------------------------------------------------- scanning
def test_scan_short_clusters_and_values() -> None:
    scan = scan_options(["-rfn5", "x", "--out=y", "--in", "z", "-", "--", "-w"],
                        value_opts={"-n", "--in"})
    assert scan.options == (Option("-r", None, 0), Option("-f", None, 0),
                            Option("-n", "5", 0), Option("--out", "y", 2),
                            Option("--in", "z", 4))
    assert scan.positionals == (1, 5, 7)


def test_scan_value_in_next_word() -> None:
    scan = scan_options(["-u", "bob", "ls"], value_opts={"-u"})
    assert scan.options == (Option("-u", "bob", 1),) and scan.positionals == (2,)


def test_scan_stops_at_the_first_positional_for_wrappers() -> None:
    scan = scan_options(["-n", "5", "rm", "-rf"], value_opts={"-n"}, stop_at_positional=True)
    assert scan.end == 2
    assert scan_options(["-x", "--", "rm"], stop_at_positional=True).end == 2


def test_scan_stop_options() -> None:
    scan = scan_options(["--impure", "-c", "rm", "-rf"], stop_opts={"-c"})
    assert scan.end == 2


def test_scan_optional_and_pair_values() -> None:
    scan = scan_options(["-i.bak", "--arg", "k", "v", "f"], optional_opts={"-i"},
                        pair_opts={"--arg"})
    assert scan.options == (Option("-i", ".bak", 0), Option("--arg", "k", 2))
    assert scan.positionals == (4,)


def test_scan_single_dash_long_options() -> None:
    scan = scan_options([".", "-name", "x", "-delete"], single_dash_long=True,
                        value_opts={"-name"})
    assert [o.flag for o in scan.options] == ["-name", "-delete"]


def test_scan_positional_pattern() -> None:
    scan = scan_options(["-x", "file"], positional_re=r"^-[rwx]+$")
    assert scan.options == () and scan.positionals == (0, 1)


def test_scan_lone_dash() -> None:
    assert scan_options(["-"]).positionals == (0,)
    assert scan_options(["-", "ls"], lone_dash_option=True, stop_at_positional=True).end == 1


# --------------------------------------------------------------------------- flag rules
@pytest.mark.parametrize("pattern", ["rm *", "*", "-rf", "* -rf", "rm -*",
                                     "git push*", "", "rm -r?", "rm --*"])
def test_rules_without_normalisable_flags(pattern: str) -> None:
    assert compile_flag_rule(pattern) is None


@pytest.mark.parametrize(("pattern", "command", "expected"), [
    ("kubectl delete *", "kubectl -n prod delete pod x", True),
    ("make deploy *", "make -C infra deploy", True),
    ("terraform destroy *", "terraform -chdir=infra destroy", True),
    ("cargo publish *", "cargo +nightly publish", True),
    ("git clean *", "git clean -fdx", True),
    ("git push *", "git log --grep push", False),
    ("kubectl delete *", "kubectl get delete", False),
])
def test_subcommand_rules_see_past_global_options(pattern: str, command: str,
                                                  expected: bool) -> None:
    rule = compile_flag_rule(pattern)
    assert rule is not None and rule.flags == frozenset()
    assert rule.matches(command.split()) is expected


def test_compiled_shape() -> None:
    assert compile_flag_rule("rm -rf *") == FlagRule(("rm",), frozenset({"-r", "-f"}), "*")
    assert compile_flag_rule("git push --force *") == FlagRule(
        ("git", "push"), frozenset({"-f"}), "*")
    assert compile_flag_rule("git push origin --force") == FlagRule(
        ("git", "push", "origin"), frozenset({"-f"}), "")


@pytest.mark.parametrize(("rule", "command", "expected"), [
    ("rm -rf *", "rm -rf x", True),
    ("rm -rf *", "rm -fr x", True),
    ("rm -rf *", "rm -r -f x", True),
    ("rm -rf *", "rm -rfv x", True),
    ("rm -rf *", "rm -v -f -R x", True),
    ("rm -rf *", "rm --recursive --force x", True),
    ("rm -rf *", "rm --force --recursive --verbose x y", True),
    ("rm -rf *", "rm --rec --forc x", True),  # GNU accepts unambiguous abbreviations
    ("rm -rf *", "rm -R -f x", True),
    ("rm -rf *", "rm x -rf", True),
    ("rm -rf *", "rm -rf", True),
    ("rm -rf *", "rm -r x", False),
    ("rm -rf *", "rm x", False),
    ("rm -rf *", "rm -- -rf", False),
    ("rm -rf *", "rmdir -rf x", False),
    ("rm -rf /", "rm -fr /", True),
    ("rm -rf /", "rm -fr / --no-preserve-root", True),
    ("rm -rf /", "rm -fr /tmp", False),
    ("rm -rf /tmp/*", "rm -r -f /tmp/x", True),
    ("rm -rf /tmp/*", "rm -r -f /etc/x", False),
    ("git push --force *", "git push -f origin", True),
    ("git push --force *", "git push origin main --force", True),
    ("git push --force *", "git push origin +main", True),
    ("git push --force *", "git push --force-with-lease", False),
    ("git push --force *", "git push origin main", False),
    ("git push --force *", "git pull -f", False),
    ("git push -f *", "git push --force origin", True),
    ("git push --delete *", "git push origin :old", True),
    ("git clean -fd *", "git clean -d -f", True),
    ("git clean -fd *", "git clean --force -d -x", True),
    ("git clean -fd *", "git clean -f", False),
    ("git reset --hard *", "git reset --hard HEAD~1", True),
    ("git reset --hard *", "git reset --soft HEAD~1", False),
    ("git checkout --force *", "git checkout -f main", True),
    ("git branch -D *", "git branch --delete --force x", True),
    ("chmod -R *", "chmod --recursive 777 /", True),
    ("find * -delete", "find . -name x -delete", True),
    ("find * -delete", "find . -type d -name lte", False),
    ("sed -i *", "sed --in-place s/a/b/ f", True),
    ("curl -o *", "curl --output x https://e", True),
    ("git push --force*", "git push -f", True),
    ("git push --force*", "git push origin -f", True),
    ("rm -rf*", "rm -r -f x", True),
])
def test_flag_rule_matches(rule: str, command: str, expected: bool) -> None:
    compiled = compile_flag_rule(rule)
    assert compiled is not None
    assert compiled.matches(command.split()) is expected


SPELLINGS = {"r": ["-r", "-R", "--recursive"], "f": ["-f", "--force"]}


@settings(max_examples=300, deadline=None)
@given(st.permutations(["r", "f", "v", "i"]), st.integers(0, 3), st.data())
def test_any_spelling_of_rm_rf_is_caught(order: list[str], split: int, data: st.DataObject
                                         ) -> None:
    letters = [c for c in order if c in "rfv"]
    cluster = "-" + "".join(letters[:split])
    spelled = [data.draw(st.sampled_from(SPELLINGS.get(c, ["-" + c]))) for c in letters[split:]]
    words = ["rm", *([cluster] if split else []), *spelled, "x"]
    rule = compile_flag_rule("rm -rf *")
    assert rule is not None
    assert rule.matches(words), words


def test_flag_rules_are_fast_on_long_commands() -> None:
    rule = compile_flag_rule("rm -rf *a*b*a*b*c")
    assert rule is not None
    start = time.perf_counter()
    rule.matches(["rm", "-rf", *(["ab"] * 50_000)])
    assert time.perf_counter() - start < 0.5
