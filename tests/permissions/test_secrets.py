"""Secret stores (dm_cc.permissions.secrets) at the gate: which names are in one,
and who may open one -- only a rule of the person's own (their files, the managed
files, their answers) naming the path exactly or the store itself; never a broad
allow, never a repository's rule; a ceiling's catch-all allow is no such opening."""

from __future__ import annotations

from pathlib import Path

import pytest

from dm_cc.config.dirs import HostFilesystem
from dm_cc.permissions import (
    DEFAULT_SECRETS,
    Ceiling,
    Gate,
    Layer,
    PathContext,
    PathContextDirs,
    Rule,
    SecretStore,
    path_requests,
)

HOME = "/home/me"


@pytest.mark.parametrize(("name", "store"), [
    (f"{HOME}/.ssh/id_rsa", "~/.ssh"), (f"{HOME}/.ssh", "~/.ssh"),
    (f"{HOME}/.aws/credentials", "~/.aws"), ("/home/bob/.aws/sso/cache/x", "~/.aws"),
    ("/root/.gnupg/private-keys-v1.d/k", "~/.gnupg"), (f"{HOME}/.netrc", "~/.netrc"),
    (f"{HOME}/.docker/config.json", "~/.docker/config.json"),
    (f"{HOME}/.config/gh/hosts.yml", "~/.config/gh"),
    (f"{HOME}/.cargo/credentials.toml", "~/.cargo/credentials.toml"),
    (f"{HOME}/.sshx", None), (f"{HOME}/.docker/buildx", None), (f"{HOME}/.netrc.bak", None),
    ("/srv/home/bob/.ssh/k", None), ("/home/a/b/.ssh/k", None), (".ssh/id_rsa", None),
    (f"{HOME}/.config/ghx", None), (f"{HOME}/src/.aws/credentials", None),
])
def test_which_names_are_in_a_store(name, store):
    found = DEFAULT_SECRETS.secret([name], HOME)
    assert (found.store if found else None) == store


def test_a_policy_may_add_a_store_none_may_remove_one():
    more = DEFAULT_SECRETS.with_extra([SecretStore("~/.config/acme", "acme"),
                                       SecretStore("/etc/acme/key", "acme key")])
    assert more.secret([f"{HOME}/.config/acme/token"], HOME).why == "acme"
    assert more.secret(["/etc/acme/key"], HOME).why == "acme key"
    assert more.secret([f"{HOME}/.ssh/id_rsa"], HOME) is not None


def judged(layers: list[Layer], path: str, ceilings: tuple[Ceiling, ...] = ()) -> str:
    where = PathContextDirs(Path("/p"), Path("/p"), Path(HOME), HostFilesystem())
    gate = Gate(layers, PathContext("/p", HOME), ceilings)
    return gate.decide(path_requests("read", path, where)).action


OUTSIDE = Rule("external_directory", "*", "allow")
BROAD = [Rule("read", "~/**", "allow"), Rule("read", "/**", "allow"), Rule("read", "*", "allow")]


@pytest.mark.parametrize("broad", BROAD, ids=lambda r: r.pattern)
def test_a_broad_allow_opens_no_store_but_other_home_files(broad):
    layers = [Layer("user", (OUTSIDE, broad))]
    assert judged(layers, f"{HOME}/.ssh/id_rsa") == "ask"
    assert judged(layers, "/home/bob/.aws/credentials") == "ask"
    assert judged(layers, f"{HOME}/notes.txt") == "allow"      # no question in normal work


@pytest.mark.parametrize("opener", ["~/.ssh/**", f"{HOME}/.ssh/**", f"{HOME}/.ssh/id_rsa",
                                    "~/.ssh/id_rsa"])
@pytest.mark.parametrize("origin", ["person", "builtin"])
def test_your_own_rule_naming_it_or_its_store_opens_it(opener, origin):
    layers = [Layer("user", (OUTSIDE, Rule("read", opener, "allow")), origin=origin)]
    assert judged(layers, f"{HOME}/.ssh/id_rsa") == "allow"


@pytest.mark.parametrize("opener", ["~/.ssh/*", "~/.ss?/id_rsa", "~/{.ssh,.x}/id_rsa",
                                    "~/.ssh/[i]d_rsa", "~/**/id_rsa"])
def test_a_wildcard_naming_part_of_it_does_not(opener):
    layers = [Layer("user", (OUTSIDE, Rule("read", opener, "allow")))]
    assert judged(layers, f"{HOME}/.ssh/id_rsa") == "ask"


@pytest.mark.parametrize("origin", ["repository", "untrusted"])
def test_a_repository_rule_never_opens_one_even_naming_it(origin):
    layers = [Layer("user", (OUTSIDE,)),
              Layer("project", (Rule("read", "~/.ssh/id_rsa", "allow"),
                                Rule("read", "~/.ssh/**", "allow")), origin=origin)]
    assert judged(layers, f"{HOME}/.ssh/id_rsa") == "ask"


def test_an_answer_naming_it_opens_it_and_a_ceiling_bounds_without_asking_again():
    answer = Layer("approvals", (Rule("read", f"{HOME}/.ssh/id_rsa", "allow"),),
                   approvals=True)
    own = Gate([Layer("dm_cc", (Rule("*", "*", "allow"),), origin="builtin")])
    layers = [Layer("user", (OUTSIDE, Rule("read", "~/**", "ask"))), answer]
    assert judged(layers, f"{HOME}/.ssh/id_rsa", (Ceiling(own),)) == "allow"
