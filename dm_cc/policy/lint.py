"""``dm_cc policy lint``: rule mistakes that load fine but do not do what was meant.

* **shadowed** — a narrower rule followed by a broader one with another action:
  last match wins, so the narrow rule never decides anything.
* **redundant** — a rule covered by a later rule with the same action.
* **unknown-permission** — a permission name (or wildcard) that names nothing.
* **not-absolute** — a path pattern that looks absolute but is project-relative
  (``etc/passwd``, ``$HOME/.ssh/**``, ``~user/…``).
* **never-matches** — a pattern that canonical requests can never take
  (``..`` segments, doubled slashes, stray spaces in a command, MCP patterns that
  are not JSON).

Coverage is judged conservatively: a finding is only reported when the later
rule certainly matches everything the earlier one does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dm_cc.permissions import PathContext, Rule
from dm_cc.permissions.patterns import PathGlob, Wildcard, path_subject
from dm_cc.permissions.rules import MCP_PREFIX, language_of
from dm_cc.policy.loader import PolicyFile
from dm_cc.tools.catalog import is_known_permission, known_permissions

ROOT_LOOKING = {
    "etc", "usr", "home", "var", "tmp", "root", "opt", "bin", "sbin", "lib", "Users",
    "private", "proc", "dev", "sys", "mnt", "srv", "Volumes", "Library",
}


@dataclass(frozen=True, slots=True)
class Finding:
    source: str
    kind: str
    message: str

    def __str__(self) -> str:
        return f"{self.source}: {self.kind}: {self.message}"


def _wild(text: str) -> bool:
    return any(ch in text for ch in "*?")


def _literal_prefix(pattern: str) -> str:
    cut = min((i for i in (pattern.find("*"), pattern.find("?")) if i >= 0), default=len(pattern))
    return pattern[:cut]


def _text_covers(broad: str, narrow: str) -> bool:
    """Does every text ``narrow`` matches also match ``broad``? (sound, not complete)"""
    if broad == narrow or broad == "*":
        return True
    if not _wild(narrow):
        return Wildcard(broad).match(narrow)
    if broad.endswith("*") and not _wild(broad[:-1]):
        return _literal_prefix(narrow).startswith(broad[:-1])
    return False


def _path_covers(broad: str, narrow: str) -> bool:
    if broad == narrow or broad == "*":
        return True
    relative = "/" in narrow and not narrow.startswith(("/", "~"))
    if broad == "**":
        return relative and "{" not in narrow
    if not _wild(narrow) and "{" not in narrow and "[" not in narrow:
        context = PathContext(root="/project", home="/home/user")
        return PathGlob(broad, context).match(path_subject(narrow, context))
    if broad.endswith("/**") and not _wild(broad[:-3]) and "{" not in broad:
        return _literal_prefix(narrow).startswith(broad[:-2])
    return False


def _covers(later: Rule, earlier: Rule) -> bool:
    if not _text_covers(later.permission, earlier.permission):
        return False
    if earlier.action != "allow" and later.action == "allow" and later.pattern not in ("*", "**"):
        # deny/ask rules also match other letter cases and flag spellings; an allow
        # rule does not, so only a universal allow certainly covers them.
        return False
    permission = earlier.permission if not _wild(earlier.permission) else later.permission
    if _wild(permission):  # patterns in different languages: only `*` surely covers
        return later.pattern == "*"
    if language_of(permission) == "path":
        return _path_covers(later.pattern, earlier.pattern)
    return _text_covers(later.pattern, earlier.pattern)


def _shadowing(rules: Sequence[Rule]) -> list[Finding]:
    findings = []
    for i, earlier in enumerate(rules):
        for later in rules[i + 1:]:
            if not _covers(later, earlier):
                continue
            if later.action == earlier.action:
                findings.append(Finding(earlier.source, "redundant",
                    f"{earlier.action} {earlier.permission} {earlier.pattern!r} never decides: "
                    f"the later rule at {later.source} ({later.pattern!r}) covers it"))
            else:
                findings.append(Finding(earlier.source, "shadowed",
                    f"{earlier.action} {earlier.permission} {earlier.pattern!r} is silenced by the "
                    f"broader {later.action} {later.permission} {later.pattern!r} at "
                    f"{later.source}; last match wins, so put the narrower rule after it"))
            break
    return findings


def _permission_findings(rule: Rule) -> list[Finding]:
    if _wild(rule.permission):
        prefix = _literal_prefix(rule.permission)
        matcher = Wildcard(rule.permission)
        if any(matcher.match(p) for p in known_permissions()) or MCP_PREFIX.startswith(prefix) \
                or prefix.startswith(MCP_PREFIX):
            return []
        return [Finding(rule.source, "unknown-permission",
                        f"{rule.permission!r} matches no permission dm_cc knows")]
    if not is_known_permission(rule.permission):
        hint = " (write/edit/patch are all 'edit')" if rule.permission in ("write", "patch") else ""
        return [Finding(rule.source, "unknown-permission",
                        f"unknown permission {rule.permission!r}{hint}; known: "
                        f"{', '.join(sorted(known_permissions()))}, mcp__<server>__<tool>")]
    return []


def _path_findings(rule: Rule) -> list[Finding]:
    pattern = rule.pattern
    out = []
    first = pattern.split("/", 1)[0]
    if "/" in pattern and first in ROOT_LOOKING:
        out.append(Finding(rule.source, "not-absolute",
                           f"{pattern!r} is relative to the project root; write /{pattern} "
                           "for the absolute path"))
    if pattern.startswith(("$HOME", "${HOME}", "$USERPROFILE")):
        out.append(Finding(rule.source, "not-absolute",
                           f"{pattern!r}: variables are not expanded in patterns; use ~/"))
    elif pattern.startswith("~") and not pattern.startswith("~/") and pattern != "~":
        out.append(Finding(rule.source, "not-absolute",
                           f"{pattern!r}: only ~/ (your home) is expanded"))
    segments = pattern.split("/")
    if ".." in segments or "." in segments[1:] or "//" in pattern.lstrip("/") or "\\" in pattern:
        out.append(Finding(rule.source, "never-matches",
                           f"{pattern!r}: request paths are canonical (no '.', '..', '//' "
                           "or backslashes), so this can never match"))
    return out


def _text_findings(rule: Rule, language: str) -> list[Finding]:
    pattern = rule.pattern
    if language == "shell" and (pattern != pattern.strip() or "  " in pattern):
        return [Finding(rule.source, "never-matches",
                        f"{pattern!r}: commands are matched with single spaces and no "
                        "leading or trailing space")]
    if rule.permission.startswith(MCP_PREFIX) and not pattern.startswith(("{", "*", "?")):
        return [Finding(rule.source, "never-matches",
                        f"{pattern!r}: MCP requests are JSON objects, so the pattern must "
                        "start with '{' or '*'")]
    return []


def lint_rules(rules: Sequence[Rule]) -> list[Finding]:
    findings: list[Finding] = []
    for rule in rules:
        findings += _permission_findings(rule)
        if _wild(rule.permission):
            continue
        language = language_of(rule.permission)
        findings += _path_findings(rule) if language == "path" else _text_findings(rule, language)
    findings += _shadowing(rules)
    return sorted(findings, key=lambda f: _line(f.source))


def _line(source: str) -> int:
    tail = source.rsplit(":", 1)[-1]
    return int(tail) if tail.isdigit() else 0


def lint_file(policy: PolicyFile) -> list[Finding]:
    findings = lint_rules(policy.rules)
    for rules in policy.agents.values():
        findings += lint_rules(rules)
    return findings
