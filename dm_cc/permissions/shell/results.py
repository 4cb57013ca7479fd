"""What :func:`~dm_cc.permissions.shell.analyse` returns: the public result types."""

from __future__ import annotations

from typing import Literal, NamedTuple


class SimpleCommand(NamedTuple):
    """One command the line runs. ``text`` is what bash rules are matched against."""

    words: tuple[str, ...]
    dynamic: bool = False
    sensitive: tuple[str, ...] = ()
    note: str | None = None
    # A guess that an unknown program runs its arguments as a command (`fakeroot rm
    # -rf x`): only a deny decides it; anything else leaves the line as it was.
    speculative: bool = False
    # The command's other names (`npm publ` is `npm publish`, `RM` may be `rm`, `pip3.11`
    # is `pip`), each as its words: deny and ask rules see them too (.names).
    names: tuple[tuple[str, ...], ...] = ()
    # git run in another directory than the session's (`cd sub && git status`), as a path
    # from the session's directory when static: the request is left out when it names
    # the session's directory itself (`cd /the/project && git status`).
    runs_in: str | None = None
    # Run with a redirect, a heredoc or a here-string (its own, or a compound command's
    # around it: `{ a; } > f`): a `redirect` request besides its command's.
    redirected: bool = False

    @property
    def text(self) -> str:
        return " ".join(self.words)


class FileRef(NamedTuple):
    """A file the line reads or writes, unquoted as written (``~`` is not expanded)."""

    path: str
    access: Literal["read", "edit"]
    dynamic: bool = False
    # Named by a guessed inner command (`fakeroot cat ~/.ssh/id_rsa`): only a deny decides.
    speculative: bool = False


class ShellAnalysis(NamedTuple):
    """Everything :func:`~dm_cc.permissions.shell.analyse` found, each item once, in order."""

    commands: tuple[SimpleCommand, ...]
    files: tuple[FileRef, ...]
    # Guessed inner commands of unknown programs (`fakeroot rm -rf x` → `rm -rf x`):
    # judged by deny rules only.
    speculative: tuple[SimpleCommand, ...] = ()
    # Hosts network clients send requests to, as written (`curl https://x/` → x; proxies,
    # connect-to targets): judged as `network HOST` by deny rules (the sandbox's proxy
    # judges the connections themselves).
    hosts: tuple[str, ...] = ()
    # A redirection with no command (`> f`, `2>&1`): a `redirect` request of the line.
    redirected: bool = False
