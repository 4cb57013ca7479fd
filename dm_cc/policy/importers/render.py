"""An :class:`Imported` as a dm_cc policy file: YAML, one flow mapping per rule, the
source rule as a comment above it. Strings are written as JSON strings (valid YAML
double-quoted scalars), so no pattern can change the file's structure."""

from __future__ import annotations

import json

from dm_cc.policy.importers.model import Entry, Imported


def _q(text: str) -> str:
    return json.dumps(text)


def _comment(text: str, indent: str) -> list[str]:
    return [f"{indent}# {line}".rstrip() for line in text.splitlines() or [""]]


def _entries(entries: list[Entry], indent: str) -> list[str]:
    out: list[str] = []
    for entry in entries:
        if entry.comment:
            out += _comment(entry.comment, indent)
        if entry.permission is not None:
            out.append(f"{indent}- {{permission: {_q(entry.permission)}, "
                       f"pattern: {_q(entry.pattern)}, action: {entry.action}}}")
    return out


def render_policy(imported: Imported) -> str:
    lines = _comment("\n".join(imported.header), "") if imported.header else []
    if imported.dropped:
        lines += ["#", "# Not imported, or imported only approximately (see the comments below):"]
        lines += [f"#   - {line}" for line in imported.dropped]
    if imported.refused:
        lines += ["#", "# Deny or ask rules left out with --lossy: this policy is looser than "
                       "its source here:"]
        lines += [f"#   - {line}" for line in imported.refused]
    rules = [entry for entry in imported.rules if entry.permission is not None]
    lines.append("rules:" if rules else "rules: []")
    lines += _entries(imported.rules, "  ")
    if imported.agents:
        lines.append("agents:")
        for name, entries in imported.agents.items():
            has_rules = any(entry.permission is not None for entry in entries)
            lines.append(f"  {_q(name)}:")
            lines.append("    rules:" if has_rules else "    rules: []")
            lines += _entries(entries, "      ")
    if imported.tests:
        lines.append("tests:")
        for test in imported.tests:
            if test.comment:
                lines += _comment(test.comment, "  ")
            extra = (f", agent: {_q(test.agent)}" if test.agent else "") + \
                (f", name: {_q(test.name)}" if test.name else "")
            lines.append(f"  - {{tool: {_q(test.tool)}, input: {_q(test.input)}, "
                         f"expect: {test.expect}{extra}}}")
    return "\n".join(lines) + "\n"
