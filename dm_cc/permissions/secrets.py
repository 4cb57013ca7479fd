"""Secret stores: the person's credential files and directories outside any project.

A file here holds what lets its reader act as the person somewhere else -- a private
key, a cloud or registry token, saved passwords, a browser's cookies, a history of
typed commands (with the tokens typed in them). Nobody's coding session reads one,
so holding them costs no question in ordinary work; a repository the person trusts
(its ``bash * allow``) must still not reach them through a command it is allowed.

* a request naming one (the read, grep, glob and list tools, the edit tool, a shell
  command's file argument: ``Request.secret``) has its ``allow`` withheld (it asks)
  unless the deciding rule names the path exactly (no wildcard) or names the store
  itself (``read ~/.ssh/** allow``), and comes from the person's own files, the
  managed policy or their answers -- never from a repository's files, never from a
  broad ``read ~/** allow`` (:class:`dm_cc.permissions.gate.Gate`);
* in the sandbox every existing one is hidden (``dm_cc.sandbox.derive``): an empty
  directory or file over it, whatever command the policy allows; only a store the
  person's own rule opens whole (the gate then allows reading a new file in it)
  stays visible.

This is the one place these are listed (docs/security.md shows the table); a policy
file's ``secret_stores:`` adds to it (any file may add, none remove). A store is a
path under the home (``~/.ssh``) or an absolute one; a home store is held in every
home the gate sees -- the person's, ``/root/…`` and ``/home/*/…`` (dm_cc run as root
reads them all) -- and in the sandbox in the person's home and every other home
directory that exists.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import NamedTuple


class SecretStore(NamedTuple):
    """A credential file or directory (``~/.ssh`` or absolute) and what it holds."""

    path: str
    why: str


KEYS = "private keys: who holds one logs in (ssh) or signs (gpg) as you"
CLOUD = "cloud credentials: access keys and tokens to your accounts"
FORGE = "a token for your GitHub account (repositories, secrets, workflows)"
CLUSTER = "cluster credentials: client keys and tokens for your Kubernetes clusters"
REGISTRY = "a registry token: who holds it publishes packages as you"
PASSWORDS = "passwords for the hosts it names, in plain text"
VAULT = "your password store"
BROWSER = "a browser profile: saved passwords and the cookies of every signed-in session"
HISTORY = "a history of typed commands, with the tokens and passwords typed in them"
ASSISTANT = "another assistant's login: its API key or account token"

SECRET_STORES: tuple[SecretStore, ...] = (
    SecretStore("~/.ssh", KEYS),
    SecretStore("~/.gnupg", KEYS),
    SecretStore("~/.aws", CLOUD),
    SecretStore("~/.azure", CLOUD),
    SecretStore("~/.config/gcloud", CLOUD),
    SecretStore("~/.oci", CLOUD),
    SecretStore("~/.config/doctl", CLOUD),
    SecretStore("~/.config/rclone", "rclone's remotes: tokens to your cloud storage"),
    SecretStore("~/.config/gh", FORGE),
    SecretStore("~/.config/hub", FORGE),
    SecretStore("~/.config/glab-cli", "a token for your GitLab account"),
    SecretStore("~/.kube", CLUSTER),
    SecretStore("~/.docker/config.json", "container registry logins (auths)"),
    SecretStore("~/.netrc", PASSWORDS),
    SecretStore("~/.git-credentials", "git's credential store: your forge passwords and "
                                      "tokens in plain text"),
    SecretStore("~/.config/git/credentials", "git's credential store (XDG place)"),
    SecretStore("~/.npmrc", REGISTRY + " (npm; the person's, not a project's)"),
    SecretStore("~/.yarnrc", REGISTRY + " (yarn 1)"),
    SecretStore("~/.yarnrc.yml", REGISTRY + " (yarn 2+, npmAuthToken)"),
    SecretStore("~/.pypirc", REGISTRY + " (PyPI)"),
    SecretStore("~/.cargo/credentials", REGISTRY + " (crates.io)"),
    SecretStore("~/.cargo/credentials.toml", REGISTRY + " (crates.io)"),
    SecretStore("~/.gem/credentials", REGISTRY + " (RubyGems)"),
    SecretStore("~/.terraform.d/credentials.tfrc.json", "Terraform Cloud tokens"),
    SecretStore("~/.vault-token", "a HashiCorp Vault token"),
    SecretStore("~/.pgpass", PASSWORDS + " (PostgreSQL)"),
    SecretStore("~/.my.cnf", PASSWORDS + " (MySQL)"),
    SecretStore("~/.password-store", VAULT + " (pass)"),
    SecretStore("~/.local/share/keyrings", VAULT + " (GNOME keyring)"),
    SecretStore("~/.mozilla", BROWSER + " (Firefox)"),
    SecretStore("~/.config/google-chrome", BROWSER + " (Chrome)"),
    SecretStore("~/.config/chromium", BROWSER + " (Chromium)"),
    SecretStore("~/.config/BraveSoftware", BROWSER + " (Brave)"),
    SecretStore("~/.bash_history", HISTORY), SecretStore("~/.zsh_history", HISTORY),
    SecretStore("~/.local/share/fish/fish_history", HISTORY),
    SecretStore("~/.psql_history", HISTORY), SecretStore("~/.mysql_history", HISTORY),
    SecretStore("~/.codex/auth.json", ASSISTANT + " (Codex)"),
    SecretStore("~/.claude/.credentials.json", ASSISTANT + " (Claude Code)"),
    SecretStore("~/.gemini/oauth_creds.json", ASSISTANT + " (Gemini CLI)"),
)

#: Homes other than the person's the gate holds a home store in (dm_cc run as root
#: reads every one): ``/root`` and each directory directly under ``/home``.
_OTHER_HOMES = r"(?:/root|/home/[^/]+)"


class Secret(NamedTuple):
    """What a request naming a secret store carries: the store (as the table has it),
    why, and the rule patterns that open it (the store itself: ``~/.ssh``,
    ``~/.ssh/**`` and their absolute spellings)."""

    store: str
    why: str
    openers: tuple[str, ...]


class SecretStores:
    """The table (and a policy's additions) compiled: :meth:`secret` for a request's
    names (absolute), or None; :meth:`places` the paths to hide in the sandbox."""

    def __init__(self, entries: Iterable[SecretStore] = SECRET_STORES) -> None:
        self.entries = tuple(entries)
        self._compiled: dict[str, re.Pattern[str] | None] = {}
        # every store's place below its home (or its absolute path) holds "/.": a name
        # without one is in none, and is not matched (most names: a project's files)
        self._dotted = all("/." in e.path.rstrip("/").removeprefix("~") for e in self.entries)

    def with_extra(self, entries: Sequence[SecretStore]) -> SecretStores:
        return SecretStores((*self.entries, *entries)) if entries else self

    def _matcher(self, home: str) -> re.Pattern[str] | None:
        """One pattern for the whole table in ``home`` (a group per entry): a name is
        looked at once, however many stores."""
        if home not in self._compiled:
            homes = f"(?:{_OTHER_HOMES}|{re.escape(home.rstrip('/'))})"
            alternatives = [
                f"(?P<e{i}>{homes if e.path.startswith('~/') else ''}"
                f"{re.escape(e.path.rstrip('/').removeprefix('~'))})"
                for i, e in enumerate(self.entries)]
            self._compiled[home] = re.compile(
                f"(?:{'|'.join(alternatives)})(?:/|$)") if alternatives else None
        return self._compiled[home]

    def secret(self, names: Iterable[str], home: str) -> Secret | None:
        """The first store holding any of ``names`` (absolute request names; a
        project-relative name is inside the project, never a store) in ``home`` or
        another home, or None."""
        matcher = self._matcher(home)
        if matcher is None:
            return None
        for name in names:
            if self._dotted and "/." not in name:
                continue
            found = matcher.match(name) if name.startswith("/") else None
            if found is not None:
                index = next(int(k[1:]) for k, v in found.groupdict().items() if v is not None)
                entry = self.entries[index]
                return Secret(entry.path, entry.why, _openers(entry.path, home))
        return None

    def places(self, homes: Iterable[str]) -> list[tuple[str, SecretStore]]:
        """Every place of every store (absolute): a home store in each of ``homes``."""
        found: list[tuple[str, SecretStore]] = []
        homes = list(dict.fromkeys(h.rstrip("/") or "/" for h in homes))
        for entry in self.entries:
            path = entry.path.rstrip("/")
            if path.startswith("~/"):
                found += [(home.rstrip("/") + path[1:], entry) for home in homes]
            else:
                found.append((path, entry))
        return found


def _openers(store: str, home: str) -> tuple[str, ...]:
    spelled = [store]
    if store.startswith("~/"):
        spelled.append(home.rstrip("/") + store[1:])
    return tuple(p for s in spelled for p in (s, f"{s}/**"))


DEFAULT_SECRETS = SecretStores()
