"""A cheap test of the project tree against a deny or ask rule: which paths could
match it at all, found from the tree's indexes (by last segment, or under a
directory) rather than path by path, so that in a tree of 100,000 files a rule's
own matcher runs only on the few paths that could match. Never sufficient: a path
that passes is then judged by the gate (:mod:`dm_cc.sandbox.derive`).
"""

from __future__ import annotations

from typing import Literal, NamedTuple

from dm_cc.permissions import Candidate, PathContextDirs
from dm_cc.sandbox.tree import Tree, inside

# A name no rule is likely to single out: "a new file in this directory".
NEW_FILE = "dm_cc-new-file-probe"


class Screen(NamedTuple):
    """A cheap test a project path must pass for a deny or ask rule to match it (a
    necessary condition, never sufficient), so that in a large tree the rule's own
    matcher runs only on the few paths that could match. Paths are compared ASCII
    and casefolded (deny and ask rules ignore case); other paths always pass.

    ``kind``: ``any`` (every path may match), ``none``, ``under`` (the path is
    ``text`` or inside it), ``named`` (its last segment is ``text``), ``shaped`` (its
    last segment starts with ``text`` and ends with ``end``), ``beneath`` (one of its
    segments is ``text``: it is, or is inside, a directory so named)."""

    kind: Literal["any", "none", "under", "named", "shaped", "beneath"]
    text: str = ""
    end: str = ""

    def could(self, folded: str, last: str) -> bool:
        """Whether a path (casefolded, and its last segment) passes."""
        if self.kind == "under":
            return folded == self.text or folded.startswith(self.text + "/")
        if self.kind == "named":
            return last == self.text
        if self.kind == "shaped":
            return (len(last) >= len(self.text) + len(self.end) and last.startswith(self.text)
                    and last.endswith(self.end))
        if self.kind == "beneath":
            return self.text in folded.split("/")
        return self.kind == "any"

    def paths(self, tree: Tree) -> list[str]:
        """The tree's paths that pass, from its indexes (not path by path)."""
        if self.kind == "any":
            return [entry.path for entry in tree.entries]
        if self.kind == "none":
            return []
        if self.kind == "under":
            found = tree.folded_under(self.text)
        elif self.kind == "beneath":
            found = [path for named in tree.by_last_segment().get(self.text, ())
                     for path in tree.folded_under(named.casefold())]
        else:
            found = [path for last, paths in tree.by_last_segment().items()
                     if self.could("", last) for path in paths]
        return found + list(tree.not_ascii())


def necessary(rule: Candidate, where: PathContextDirs) -> Screen:
    """The :class:`Screen` of ``rule``: a pattern without ``/`` matches the last
    segment (its literal start and end), one with ``/`` the paths under its literal
    leading directories; anything else passes."""
    return screen_of(rule.rule.pattern, rule.context.root or where.root.as_posix(),
                     rule.context.home or where.home.as_posix())


def anywhere(pattern: str, root: str, home: str) -> Screen:
    """The :class:`Screen` of a pattern that, relative and with ``/``, matches at any
    depth (a protected path's: ``.vscode/tasks.json`` wherever it is): its last
    segment, or for ``DIR/**`` the paths beneath a directory named as DIR's last."""
    if pattern.startswith(("/", "~")) or "/" not in pattern.strip("/"):
        return screen_of(pattern, root, home)
    if not pattern.isascii() or any(ch in pattern for ch in "{[\\"):
        return Screen("any")
    folded = pattern.casefold().rstrip("/")
    beneath = folded.endswith("/**")
    last = folded.removesuffix("/**").rsplit("/", 1)[-1]
    cuts = [i for i, ch in enumerate(last) if ch in "*?"]
    if last in ("", ".", "..") or (cuts and (beneath or last == "**")):
        return Screen("any")
    if beneath:
        return Screen("beneath", last)
    if not cuts:
        return Screen("named", last)
    return Screen("shaped", last[:cuts[0]], last[cuts[-1] + 1:])


def screen_of(pattern: str, root: str, home: str) -> Screen:
    """The :class:`Screen` of a path pattern as a rule has it (see :func:`necessary`)."""
    if not pattern.isascii() or any(ch in pattern for ch in "{[\\"):
        return Screen("any")
    root = root.casefold()
    if pattern == "~" or pattern.startswith("~/"):
        pattern = home.rstrip("/") + pattern[1:]
    pattern = (pattern.rstrip("/") or pattern).casefold()
    segments = [part for part in pattern.split("/") if part]
    if any(part in (".", "..") for part in segments[1 if pattern.startswith("./") else 0:]):
        return Screen("any")
    if pattern.startswith("/"):
        literal = "/" + "/".join(_literal_segments(segments))
        if not inside(literal, root):
            return Screen("any" if inside(root, literal) else "none")
        within = literal[len(root.rstrip("/")):].lstrip("/")
        return Screen("under", within) if within else Screen("any")
    if "/" not in pattern and pattern != "**":
        cuts = [i for i, ch in enumerate(pattern) if ch in "*?"]
        if not cuts:
            return Screen("named", pattern)
        return Screen("shaped", pattern[:cuts[0]], pattern[cuts[-1] + 1:])
    if segments and segments[0] == ".":
        segments = segments[1:]
    within = "/".join(_literal_segments(segments))
    return Screen("under", within) if within else Screen("any")


def _literal_segments(segments: list[str]) -> list[str]:
    literal = []
    for segment in segments:
        if any(ch in segment for ch in "*?"):
            break
        literal.append(segment)
    return literal
