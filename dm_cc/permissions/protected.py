"""Protected paths: files that make code run later, outside any question.

A file here is read by a program the person runs next -- git, their shell, their
editor, a package manager, a CI runner, another assistant -- and what it says runs
as them, unconfined. Writing one is an edit like any other to the rules, but:

* an ``allow`` of the edit is withheld (it asks) unless the deciding rule names the
  path exactly (no wildcard) and comes from the person's own files, the managed
  policy or their answers -- never from the repository's files, never from
  ``edit ** allow`` (:class:`dm_cc.permissions.gate.Gate`);
* in the sandbox every existing one is read-only (``dm_cc.sandbox.derive``).

The table is the one place these are listed (docs/security.md shows it); a policy
file's ``protected:`` adds to it. Patterns are path globs (DESIGN.md §1) matched
ignoring case (on a case-insensitive filesystem ``.GIT/config`` is ``.git/config``);
a pattern without ``/`` matches the name at any depth.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from dm_cc.permissions.patterns import PathContext, PathGlob, path_subject


class Protected(NamedTuple):
    """A path glob and why writing what it matches makes code run later."""

    pattern: str
    why: str


GIT = "git runs what its directory says (config, hooks) at your next git command"
DM_CC = "dm_cc's own project files: the policy, agents and settings of later sessions"
SHELL = "your shell runs it when it starts"
DIRENV = "direnv runs it when you enter the directory"
EDITOR = "your editor runs the tasks, launchers and terminals it names"
CI = "the CI runner runs it, with the repository's secrets"
GIT_HOOKS = "a git hook manager runs it at your next commit"
PACKAGES = "the package manager reads it: registries, scripts and hooks it runs"
PYTHON = "Python runs it at every start of the environment's interpreter"
ASSISTANT = "another coding assistant reads it: its permissions, hooks and servers"
DEVCONTAINER = ("the dev container tools run the commands it names, initializeCommand on your "
                "machine")
EXRC = "vim and neovim run it at start in this directory (exrc)"
MISE = "mise runs its hooks, tasks and env scripts when you enter the directory"

PROTECTED_PATHS: tuple[Protected, ...] = (
    Protected(".git", GIT),
    Protected(".git/**", GIT),
    Protected("HEAD", "a file named HEAD makes its directory a git directory, whose config runs"),
    Protected(".dm_cc", DM_CC),
    Protected(".dm_cc/**", DM_CC),
    Protected(".envrc", DIRENV),
    Protected(".bashrc", SHELL), Protected(".bash_profile", SHELL),
    Protected(".bash_login", SHELL), Protected(".profile", SHELL),
    Protected(".zshrc", SHELL), Protected(".zshenv", SHELL), Protected(".zprofile", SHELL),
    Protected(".vscode/tasks.json", EDITOR), Protected(".vscode/launch.json", EDITOR),
    Protected(".vscode/settings.json", EDITOR), Protected("*.code-workspace", EDITOR),
    Protected(".idea/**", EDITOR), Protected(".zed/**", EDITOR), Protected(".helix/**", EDITOR),
    Protected(".devcontainer/**", DEVCONTAINER), Protected(".devcontainer.json", DEVCONTAINER),
    Protected(".exrc", EXRC), Protected(".nvimrc", EXRC), Protected(".nvim.lua", EXRC),
    Protected("mise.toml", MISE), Protected(".mise.toml", MISE), Protected("mise.local.toml", MISE),
    Protected(".github/workflows/**", CI), Protected(".github/actions/**", CI),
    Protected(".gitlab-ci.yml", CI), Protected(".circleci/**", CI),
    Protected(".buildkite/**", CI), Protected("azure-pipelines.yml", CI),
    Protected(".pre-commit-config.yaml", GIT_HOOKS), Protected(".husky", GIT_HOOKS),
    Protected(".husky/**", GIT_HOOKS), Protected("lefthook.yml", GIT_HOOKS),
    Protected("lefthook.yaml", GIT_HOOKS), Protected(".lefthook.yml", GIT_HOOKS),
    Protected("lefthook-local.yml", GIT_HOOKS), Protected(".lefthook/**", GIT_HOOKS),
    Protected(".npmrc", PACKAGES), Protected(".yarnrc", PACKAGES),
    Protected(".yarnrc.yml", PACKAGES), Protected(".pnpmfile.cjs", PACKAGES),
    Protected("bunfig.toml", PACKAGES), Protected(".cargo/config", PACKAGES),
    Protected(".cargo/config.toml", PACKAGES), Protected("pip.conf", PACKAGES),
    Protected(".gemrc", PACKAGES),
    Protected("site-packages/*.pth", PYTHON), Protected("sitecustomize.py", PYTHON),
    Protected("usercustomize.py", PYTHON), Protected("pyvenv.cfg", PYTHON),
    Protected("bin/activate", PYTHON), Protected("bin/activate.*", PYTHON),
    Protected(".claude/**", ASSISTANT), Protected(".codex/**", ASSISTANT),
    Protected(".gemini/**", ASSISTANT), Protected(".cursor/**", ASSISTANT),
    Protected(".opencode/**", ASSISTANT), Protected("opencode.json", ASSISTANT),
    Protected("opencode.jsonc", ASSISTANT), Protected(".mcp.json", ASSISTANT),
    Protected(".vscode/mcp.json", ASSISTANT), Protected(".kiro/**", ASSISTANT),
    Protected(".windsurf/**", ASSISTANT), Protected(".continue/**", ASSISTANT),
    Protected(".aider.conf.yml", ASSISTANT),
)


class ProtectedPaths:
    """The table (and a policy's additions) compiled: :meth:`why` a request name is
    protected, or None. Names are canonical request names: project-relative inside
    the project, absolute outside (where a pattern without ``/`` still matches the
    name at any depth, and one with ``/`` matches the tail of the path)."""

    def __init__(self, entries: Iterable[Protected] = PROTECTED_PATHS,
                 context: PathContext | None = None) -> None:
        self.entries = tuple(entries)
        self._context = context or PathContext()
        # each glob with the plain segments a path must hold for it to match (a
        # necessary condition, checked first: a build's thousands of files are each
        # looked at by the few globs that can match them, in the table's order)
        self._globs = [(glob, entry, _literal_segments(glob.pattern)) for entry in self.entries
                       for glob in self._globs_of(entry.pattern)]
        # ... found by one of those segments (any: each glob is kept under its least),
        # or always asked when it needs none; a path's few segments pick the few to try
        self._always: list[int] = []
        self._by_segment: dict[str, list[int]] = {}
        for i, (_, _, needs) in enumerate(self._globs):
            if needs:
                self._by_segment.setdefault(min(needs), []).append(i)
            else:
                self._always.append(i)

    def _globs_of(self, pattern: str) -> list[PathGlob]:
        """A relative pattern with ``/`` at any depth, inside the project and out."""
        if "/" in pattern and not pattern.startswith(("/", "~")):
            tail = pattern.removeprefix("**/")
            return [PathGlob(f"**/{tail}", self._context, ignore_case=True),
                    PathGlob(f"/**/{tail}", self._context, ignore_case=True)]
        return [PathGlob(pattern, self._context, ignore_case=True)]

    def with_extra(self, entries: Sequence[Protected] = (),
                   git_dirs: Sequence[str] = ()) -> ProtectedPaths:
        """These paths, ``entries`` and the git directories ``git_dirs`` (absolute: a
        worktree's, wherever its ``.git`` file says) and all they hold."""
        more = [*entries, *(Protected(p, GIT) for d in git_dirs for p in (d, f"{d}/**"))]
        return ProtectedPaths((*self.entries, *more), self._context) if more else self

    def why(self, names: Iterable[str]) -> Protected | None:
        """The first entry matching any of ``names`` (a request's names), or None."""
        for name in names:
            subject = path_subject(name, self._context)
            segments = [*(subject.relative or ()), *(subject.absolute or ())]
            # outside ASCII, case folding is the matcher's own business: ask every glob
            held = {s.casefold() for s in segments} if "".join(segments).isascii() else None
            if held is None:
                tried: Iterable[int] = range(len(self._globs))
            else:  # (in the table's order: the first entry matching is the one named)
                found = [i for s in held for i in self._by_segment.get(s, ())]
                tried = sorted([*self._always, *found]) if found else self._always
            for i in tried:
                glob, entry, needs = self._globs[i]
                if (held is None or needs <= held) and glob.match(subject):
                    return entry
        return None


_WILD = frozenset("*?[]{}\\")


def _literal_segments(pattern: str) -> frozenset[str]:
    """The segments of ``pattern`` every path it matches holds (case-folded): its plain
    ASCII segments; none for a pattern of home (``~``) or alternatives (``{a,b}``)."""
    if pattern.startswith("~") or "{" in pattern:
        return frozenset()
    return frozenset(part.casefold() for part in pattern.split("/")
                     if part not in ("", ".", "**") and part.isascii() and not _WILD & set(part))


DEFAULT_PROTECTED = ProtectedPaths()

# What git writes as it works, under a git directory (``.git/`` at any depth, a
# submodule's or a worktree's inside it): objects, refs, logs, the index, HEAD and
# the heads and messages of a merge, a cherry-pick or a bisect. None of it makes code
# run, so a command's change to it is no protected change (the config, hooks,
# info/attributes and the files that say where a git directory is stay protected).
# Not the state of a rebase, a cherry-pick or an ``am`` (rebase-merge/, sequencer/,
# rebase-apply/): it says what git does at ``--continue`` -- a rebase todo's ``exec``
# lines are shell commands git runs -- so it is an instruction, not data.
_GIT_DATA = re.compile(
    r"(?:^|/)\.git/(?:(?:modules|worktrees)/[^/]+/)*"
    r"(?:(?:objects|refs|logs|rr-cache|lfs)(?:/.*)?"
    r"|index|index\.lock|HEAD|ORIG_HEAD|FETCH_HEAD|MERGE_HEAD|MERGE_MSG|MERGE_MODE|MERGE_RR"
    r"|AUTO_MERGE|REBASE_HEAD|CHERRY_PICK_HEAD|REVERT_HEAD|BISECT_[A-Z_]+|COMMIT_EDITMSG"
    r"|TAG_EDITMSG|packed-refs|packed-refs\.lock|shallow|description|gc\.log|[^/]+\.lock)$")
# What makes a directory a git directory that runs code (its config, its hooks) or
# sends git to another one: never data, wherever it is -- a git directory can be made
# among the objects or the refs (HEAD, objects/, refs/ and a config with
# core.fsmonitor), and git runs its config when it is entered.
_GIT_RUNS = frozenset({"config", "config.worktree", "hooks", "commondir", "gitdir"})


def git_data(relative: str) -> bool:
    """Whether the project path ``relative`` is data git itself writes (see above)."""
    found = _GIT_DATA.search(relative)
    return found is not None and not _GIT_RUNS.intersection(
        relative[found.start():].lstrip("/").split("/")[1:])
