"""``dm_cc policy lint``: rule mistakes that load fine but do not do what was meant.

* **shadowed** — a narrower rule followed by a broader one with another action:
  last match wins, so the narrow rule never decides anything (``ask git push *``
  then ``allow git *``), in one file or across the loaded files in layer order (a
  user file's allow silencing a project rule).
* **redundant** — a rule covered by a later rule with the same action.
* **unknown-permission** — a permission name (or wildcard) that names nothing.
* **not-absolute** — a path pattern that looks absolute but is project-relative
  (``etc/passwd``, ``$HOME/.ssh/**``, ``~user/…``).
* **unknown-agent** — an ``agents:`` entry naming no agent dm_cc knows (a warning at
  load too; not an error, since the agent may be defined later).
* **never-matches** — a pattern that canonical requests can never take
  (``..`` segments, doubled slashes, stray spaces in a command, an MCP pattern
  that is neither ``key=value`` conditions nor JSON).
* **joined-commands** — a shell pattern (``bash``, ``sandbox_escape``) that joins
  commands with ``&&``, ``||``, ``;`` or ``|``: rules are matched against each simple
  command, so it matches only a command that holds that text as its own words.
* **never-allows** — an MCP allow written as a wildcard over the arguments' JSON
  text: a nested value could meet it, so it is withheld (asks) every time.

What a pattern can match is the engine's to say (``dm_cc.permissions.covers``,
``names_a_permission``, ``arguments_fault``): coverage is judged conservatively, a
finding only reported when the later rule certainly matches everything the earlier
one does; this module walks the files and words the findings.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from dm_cc.config import did_you_mean
from dm_cc.permissions import MCP_PREFIX, Rule, arguments_fault, covers, names_a_permission
from dm_cc.policy.effects import Limited, describe, limited
from dm_cc.policy.loader import PolicyFile
from dm_cc.tools import effects_of, is_known_permission, known_permissions, language_of

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


def _file_of(source: str) -> str:
    return source.rsplit(":", 1)[0]


def _shadowing(rules: Sequence[Rule], across: bool = False) -> list[Finding]:
    """Each rule's first later rule covering it; ``across``: only when that rule is in
    another file (the same file's pairs are each file's own findings)."""
    findings = []
    for i, earlier in enumerate(rules):
        for later in rules[i + 1:]:
            if not covers(later, earlier, language_of):
                continue
            if across and _file_of(later.source) == _file_of(earlier.source):
                break
            if later.action == earlier.action:
                if not across:
                    findings.append(Finding(earlier.source, "redundant",
                        f"{earlier.action} {earlier.permission} {earlier.pattern!r} never "
                        f"decides: the later rule at {later.source} ({later.pattern!r}) "
                        "covers it"))
            else:
                findings.append(Finding(earlier.source, "shadowed",
                    f"{earlier.action} {earlier.permission} {earlier.pattern!r} is silenced by "
                    f"the broader {later.action} {later.permission} {later.pattern!r} at "
                    f"{later.source}; last match wins, so {earlier.pattern!r} never decides: "
                    "put the narrower rule after the broader one"
                    + (" (in a later file, or the broader rule earlier)" if across else "")))
            break
    return findings


def _permission_findings(rule: Rule) -> list[Finding]:
    if _wild(rule.permission):
        if names_a_permission(rule.permission, known_permissions()):
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


def _joiner(pattern: str) -> str | None:
    """The list or pipeline operator a shell pattern joins commands with, if any
    (``;`` ending the pattern is a word of its own: ``find -exec … ;``)."""
    words = pattern.split()
    for index, word in enumerate(words):
        for operator in ("&&", "||"):
            if operator in word:
                return operator
        if word == "|" or (word.endswith(";") and index < len(words) - 1):
            return word[-1]
    return None


def _text_findings(rule: Rule, language: str) -> list[Finding]:
    pattern = rule.pattern
    if language == "shell" and (pattern != pattern.strip() or "  " in pattern):
        return [Finding(rule.source, "never-matches",
                        f"{pattern!r}: commands are matched with single spaces and no "
                        "leading or trailing space")]
    if language == "shell" and (joiner := _joiner(pattern)):
        return [Finding(rule.source, "joined-commands",
                        f"{pattern!r} joins commands with {joiner!r}: {rule.permission} rules "
                        "are matched against each simple command of a line, never the whole "
                        "line, so this matches only a command whose own words hold it (bash "
                        "-c '…'); write a rule for each command")]
    if not rule.permission.startswith(MCP_PREFIX):
        return []
    fault = arguments_fault(pattern, rule.action)
    if fault == "never-matches":
        return [Finding(rule.source, "never-matches",
                        f"{pattern!r}: neither conditions over top-level keys (repo=myorg/*) "
                        "nor a wildcard over the arguments' JSON text, which starts with '{'")]
    if fault == "never-allows":
        return [Finding(rule.source, "never-allows",
                        f"{pattern!r}: a wildcard over the arguments' JSON text can be met by a "
                        "nested value, so it never allows (dm_cc asks instead); write "
                        "conditions over top-level keys, e.g. 'repo=myorg/*'")]
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


def lint_file(policy: PolicyFile,
              known_agents: Mapping[str, Limited] | Collection[str] | None = None) -> list[Finding]:
    """``known_agents``: the agents there are (by name, or with what each may do, so an
    override that can never apply to a read-only agent is found too)."""
    findings = lint_rules(policy.rules) + lint_rules(policy.auto)
    for rules in policy.agents.values():
        findings += lint_rules(rules)
    if known_agents is not None:
        findings += unknown_agents([policy], known_agents)
    if isinstance(known_agents, Mapping):
        findings += beyond_rights([policy], known_agents)
    return findings


def lint_files(files: Sequence[PolicyFile],
               known_agents: Mapping[str, Limited] | Collection[str] | None = None
               ) -> list[Finding]:
    """Every file's findings, then rules silenced by a rule of a later file (the files
    in layer order: their top-level rules are concatenated in this order)."""
    findings = [finding for f in files for finding in lint_file(f, known_agents)]
    if len(files) > 1:
        findings += _shadowing([rule for f in files for rule in f.rules], across=True)
    return findings


def unknown_agents(files: Sequence[PolicyFile], known: Collection[str]) -> list[Finding]:
    """``agents:`` entries naming no agent in ``known`` (with a close match if any)."""
    return [Finding(policy.agent_sources.get(name, policy.path), "unknown-agent",
                    f"unknown agent {name!r} under agents:{did_you_mean(name, known)}; its rules "
                    f"apply to no agent (known: {', '.join(sorted(known))})")
            for policy in files for name in policy.agents if name not in known]


def beyond_rights(files: Sequence[PolicyFile], agents: Mapping[str, Limited]) -> list[Finding]:
    """``agents:`` allow rules that can never apply: they name a permission whose effects
    go beyond what the agent may do at all (the plan agent only reads; a shell command
    is judged by what it does, so ``bash`` rules are not among these)."""
    found = []
    for policy in files:
        for name, rules in policy.agents.items():
            agent = agents.get(name)
            if agent is None or not limited(agent):
                continue
            for rule in rules:
                effects = effects_of(rule.permission)
                if rule.action != "allow" or _wild(rule.permission) or effects == {"execute"} \
                        or effects <= agent.may or rule.pattern in agent.may_edit:
                    continue
                found.append(Finding(rule.source, "never-allows", (
                    f"the {name} agent may only {describe(agent.may)}: this allow of "
                    f"{rule.permission} (which may {describe(effects - agent.may)}) never "
                    "applies to it, whatever the rules say (define an agent of your own "
                    "with `may:` to give one more)")))
    return found


def findings_added(before: Sequence[Finding], after: Sequence[Finding], shown: str,
                   moved: Mapping[int, int]) -> list[Finding]:
    """The findings of ``after`` that ``before`` did not have: what a change to the
    file ``shown`` brings (``/permissions add``). ``moved``: each line of the file
    before the change that is still there → its number after (a finding that names
    a line no longer there cannot come back)."""
    where = re.compile(re.escape(shown) + r":(\d+)")

    def renumbered(text: str) -> str | None:
        lines = [int(found) for found in where.findall(text)]
        if any(line not in moved for line in lines):
            return None
        return where.sub(lambda match: f"{shown}:{moved[int(match.group(1))]}", text)

    seen = {renumbered(str(finding)) for finding in before}
    return [finding for finding in after if str(finding) not in seen]
