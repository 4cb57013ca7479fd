"""dm_cc.permissions.shell.tables: program knowledge as data, checked as it is built."""

from __future__ import annotations

import pytest

from dm_cc.permissions.shell.tables import DuplicateEntry, lookup, names, table, words
from dm_cc.permissions.shell.tables.arguments import ARG_SPECS, risks
from dm_cc.permissions.shell.tables.flag_aliases import FLAG_ALIASES
from dm_cc.permissions.shell.tables.suggestions import ARITY
from dm_cc.permissions.shell.tables.wrappers import WRAPPERS


def test_words_refuses_a_word_given_twice() -> None:
    assert words("-a -b  --c") == frozenset({"-a", "-b", "--c"})
    with pytest.raises(DuplicateEntry, match="--user"):
        words("-u --user -w --user")


def test_table_keys_are_commands_separated_by_commas() -> None:
    assert dict(table(("git fetch, git pull", 1), ("ls", 2))) == {
        ("git", "fetch"): 1, ("git", "pull"): 1, ("ls",): 2}


@pytest.mark.parametrize("entries", [
    (("wc", 1), ("cat, wc", 2)),  # across entries: a dict literal would keep the last
    (("git clone, git clone", 1),),  # within one entry
    (("a, , b", 1),),  # an empty command
])
def test_table_refuses_a_key_given_twice_or_empty(entries) -> None:
    with pytest.raises(DuplicateEntry):
        table(*entries)


def test_names_refuses_a_word_given_twice() -> None:
    assert dict(names(("python pypy", 1), ("perl", 2))) == {"python": 1, "pypy": 1, "perl": 2}
    with pytest.raises(DuplicateEntry):
        names(("python pypy", 1), ("pypy", 2))


def test_risks_groups_options_by_kind_and_checks_them() -> None:
    assert dict(risks(edit="-o --output", flag_read="-K")) == {
        "-o": "edit", "--output": "edit", "-K": "flag-read"}
    with pytest.raises(DuplicateEntry):
        risks(edit="-o", flag="-o")
    with pytest.raises(ValueError, match="unknown risk"):
        risks(flagg="-x")


def test_the_tables_resolved_their_old_duplicates_to_what_applied() -> None:
    # each was given twice; the later (wider) entry is the one that applied, and stays
    assert ARG_SPECS[("wc",)].risky == {"--files0-from": "read"}
    clone = ARG_SPECS[("git", "clone")]
    assert {clone.risky["-c"], clone.risky["--config"]} == {"setting"}  # sensitive, and judged
    assert clone.risky["-u"] == "script"  # the upload-pack path runs through the shell
    assert ARG_SPECS[("bat",)].files == "read"


def test_git_subcommands_override_common_options_explicitly() -> None:
    assert ARG_SPECS[("git", "rebase")].risky["--exec"] == "script"
    assert ARG_SPECS[("git", "commit")].risky["--template"] == "read"
    assert ARG_SPECS[("git", "diff")].risky["--template"] == "flag"


@pytest.mark.parametrize("mapping", [ARG_SPECS, WRAPPERS, ARITY, FLAG_ALIASES])
def test_table_keys_are_words(mapping) -> None:
    assert all(key and all(w and " " not in w for w in key) for key in mapping)
    with pytest.raises(TypeError):
        mapping[("new",)] = None  # read-only


def test_lookup_prefers_the_longest_key() -> None:
    assert lookup(ARITY, ["npm", "run", "dev"]) == (("npm", "run"), 3)
    assert lookup(ARITY, ["npm", "install"]) == (("npm",), 2)
    assert lookup(ARITY, ["unknown"]) == ((), None)
