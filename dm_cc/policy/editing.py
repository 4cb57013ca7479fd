"""Adding and removing one rule of a policy file, as a line of its text: what the
REPL's ``/permissions add`` and ``remove`` do to the person's own files.

    edit = add_rule(path, "rules.yaml", NewRule("ask", "bash", "git push *", "visible"))
    edit = remove_rule(path, "rules.yaml", where)   # where: a Place of numbered(...)
    save(edit)                                      # refused if the file changed since

The file is changed as a person would change it, not rewritten: a new rule is one
more item at the end of its ``rules:`` list (in the style of the items before it; the
list, or the file, is made when there is none), a removed rule's lines go (its
comment on the same line with it, the comments around it stay). Every other byte
is kept, comments and all.

Nothing is saved on trust in this module's own cleverness: each edit is checked by
reading the new text back. It must load (else the :class:`PolicyError` names its
``file:line``), and its YAML data must equal the old data with exactly that rule
added or removed; any other outcome (a layout this module does not know how to
change) is refused with a message and the file is left as it was. :func:`save`
writes atomically (a temporary file replaced over the old one) and only when the
file still holds what the edit was made from.

Which rules may be changed is the caller's to say; :func:`numbered` lists those of
some files in the order the REPL numbers them.
"""

from __future__ import annotations

import copy
import difflib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, NamedTuple

import yaml

from dm_cc.config import load_yaml, replace_file
from dm_cc.errors import PolicyError
from dm_cc.permissions import Rule
from dm_cc.policy.effects import Limited
from dm_cc.policy.lint import Finding, findings_added, lint_files
from dm_cc.policy.loader import PolicyFile, parse_policy

#: What a policy file made by :func:`add_rule` starts with.
NEW_FILE_HEAD = "# dm_cc policy (docs/policies.md); rules added with /permissions add\n"


class NewRule(NamedTuple):
    """A rule to add, as the person typed it."""

    action: str
    permission: str
    pattern: str
    reason: str | None = None

    def matches(self, rule: Rule) -> bool:
        return (rule.action, rule.permission, rule.pattern, rule.reason) == tuple(self)

    def __str__(self) -> str:
        return f'{self.action} {self.permission} "{self.pattern}"' + \
            (f"  # {self.reason}" if self.reason else "")


class Place(NamedTuple):
    """Where a rule is in its file: the section (``()`` the top level, ``("agents",
    NAME)``, ``("auto",)``) and its position among that section's rules, in the order
    the loader reads them (the ``permission:`` shorthand first, then ``rules:``)."""

    file: PolicyFile
    section: tuple[str, ...]
    position: int
    rule: Rule


@dataclass(frozen=True)
class Edit:
    """One rule added to or removed from the file at ``path``."""

    path: Path              # where the file is (absolute)
    shown: str              # its name in rules' sources and errors
    before: str | None      # its text before (None: there was no file)
    after: str              # its text after
    rule: Rule              # the rule added (its source: where it is now) or removed
    lines: tuple[str, ...]  # the lines added or removed, as written

    def line_map(self) -> dict[int, int]:
        """Each line of the text before that is still there → its number after."""
        old = (self.before or "").splitlines()
        new = self.after.splitlines()
        mapped: dict[int, int] = {}
        for block in difflib.SequenceMatcher(None, old, new, autojunk=False).get_matching_blocks():
            for offset in range(block.size):
                mapped[block.a + offset + 1] = block.b + offset + 1
        return mapped


# ---------------------------------------------------------------------- numbering

def numbered(files: Sequence[PolicyFile]) -> list[Place]:
    """Every rule of ``files`` (top level, each agent's, the auto layer's) in the order
    a person reads them: file by file, line by line."""
    places = []
    for file in files:
        sections = [((), file.rules), (("auto",), file.auto),
                    *((("agents", name), rules) for name, rules in file.agents.items())]
        found = [Place(file, section, position, rule)
                 for section, rules in sections for position, rule in enumerate(rules)]
        places += sorted(found, key=lambda place: _line(place.rule.source))
    return places


def _line(source: str) -> int:
    tail = source.rsplit(":", 1)[-1]
    return int(tail) if tail.isdigit() else 0


# ---------------------------------------------------------------------- the YAML nodes

class _Entry(NamedTuple):
    """A rule as written: the collection holding it (the ``rules:`` list, or a
    ``permission:`` mapping), its position there, the key the collection is the
    value of, and where its data is (``("rules", 3)``)."""

    collection: yaml.CollectionNode
    position: int
    key: yaml.Node
    path: tuple[Any, ...]


def _compose(text: str) -> yaml.Node | None:
    return yaml.compose(text, Loader=yaml.SafeLoader)  # noqa: S506 - composes, builds nothing


def _value(mapping: yaml.Node | None, name: str) -> tuple[yaml.Node, yaml.Node] | None:
    """The key node ``name`` of a mapping node and its value node."""
    if not isinstance(mapping, yaml.MappingNode):
        return None
    return next(((key, value) for key, value in mapping.value
                 if isinstance(key, yaml.ScalarNode) and key.value == name), None)


def _section_node(root: yaml.Node | None, section: tuple[str, ...]) -> yaml.Node | None:
    node = root
    for name in section:
        found = _value(node, name)
        node = found[1] if found else None
    return node


def _entries(root: yaml.Node | None, section: tuple[str, ...]) -> list[_Entry]:
    """A section's rules as written, in the loader's order (``rules_from``)."""
    node = _section_node(root, section)
    entries = []
    shorthand = _value(node, "permission")
    if shorthand and isinstance(mapping := shorthand[1], yaml.MappingNode):
        outer_key = shorthand[0]
        for position, (key, value) in enumerate(mapping.value):
            if isinstance(value, yaml.MappingNode):
                entries += [_Entry(value, inner, key, (*section, "permission", key.value,
                                                       pattern.value))
                            for inner, (pattern, _action) in enumerate(value.value)]
            else:
                entries.append(_Entry(mapping, position, outer_key,
                                      (*section, "permission", key.value)))
    listed = _value(node, "rules")
    if listed and isinstance(items := listed[1], yaml.SequenceNode):
        entries += [_Entry(items, position, listed[0], (*section, "rules", position))
                    for position in range(len(items.value))]
    return entries


def _end(node: yaml.Node) -> yaml.Mark:
    """Where a node's own text ends (a block collection's end mark is the next token's
    start, past the comments after it: this is its last value's end)."""
    if isinstance(node, yaml.MappingNode | yaml.SequenceNode) and not node.flow_style \
            and node.value:
        last = node.value[-1]
        return _end(last[1] if isinstance(last, tuple) else last)
    return node.end_mark


# ---------------------------------------------------------------------- adding

def _fields(rule: NewRule) -> list[str]:
    """The rule's ``key: value`` pairs: names as plain words, the pattern and the
    reason as JSON (= YAML) double-quoted strings."""
    return [f"permission: {_word(rule.permission)}", f"pattern: {_quoted(rule.pattern)}",
            f"action: {rule.action}", *([f"reason: {_quoted(rule.reason)}"] if rule.reason
                                        else [])]


def _flow_item(rule: NewRule) -> str:
    return "{" + ", ".join(_fields(rule)) + "}"


def _block_item(rule: NewRule, dash: int, keys: int) -> list[str]:
    first, *rest = _fields(rule)
    return [" " * dash + "- " + first, *(" " * keys + line for line in rest)]


def _word(value: str) -> str:
    plain = re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", value) and value.lower() not in _YAML_WORDS
    return value if plain else _quoted(value)


def _quoted(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


#: Plain words YAML reads as something other than a string.
_YAML_WORDS = frozenset({"true", "false", "yes", "no", "on", "off", "y", "n", "null"})


def _with_newline(text: str) -> str:
    return text if not text or text.endswith("\n") else text + "\n"


def _added_text(text: str, rule: NewRule, shown: str) -> tuple[str, list[str]]:
    """``text`` with ``rule`` at the end of its top-level ``rules:``; the new lines."""
    root = _compose(text)
    if root is None:   # empty, or only comments
        lines = ["rules:", "  - " + _flow_item(rule)]
        head = _with_newline(text) if text.strip() else NEW_FILE_HEAD
        return head + "\n".join(lines) + "\n", lines
    if not isinstance(root, yaml.MappingNode) or root.flow_style:
        raise PolicyError(shown, 1, "the file is not a block mapping (key: value lines): "
                                    "add the rule by hand")
    found = _value(root, "rules")
    if found is None:
        lines = ["rules:", "  - " + _flow_item(rule)]
        return _with_newline(text) + "\n".join(lines) + "\n", lines
    rules = found[1]
    assert isinstance(rules, yaml.SequenceNode), "the file loaded: rules: is a list"
    if rules.flow_style:
        return _into_flow(text, rules, rule)
    last = rules.value[-1]
    line = text.splitlines()[last.start_mark.line]
    dash = line.rfind("-", 0, last.start_mark.column)
    if isinstance(last, yaml.MappingNode) and not last.flow_style:
        new = _block_item(rule, dash, last.start_mark.column)
    else:
        new = [" " * dash + "- " + _flow_item(rule)]
    end = _end(last)
    return _after_line(text, end.line - (1 if end.column == 0 and end.line > 0 else 0), new)


def _after_line(text: str, line: int, new: list[str]) -> tuple[str, list[str]]:
    """``text`` with ``new`` lines after its line ``line`` (0-based)."""
    newline = "\r\n" if "\r\n" in text else "\n"
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += newline
    lines[line + 1:line + 1] = [item + newline for item in new]
    return "".join(lines), new


def _into_flow(text: str, rules: yaml.SequenceNode, rule: NewRule) -> tuple[str, list[str]]:
    """A flow list (``rules: [...]``) with the rule as its last item."""
    item = _flow_item(rule)
    if rules.value:
        at = _end(rules.value[-1]).index
        item = ", " + item
    else:
        at = text.rindex("]", rules.start_mark.index, rules.end_mark.index)
    new = text[:at] + item + text[at:]
    return new, [new.splitlines()[new.count("\n", 0, at)]]


def add_rule(path: Path, shown: str, rule: NewRule) -> Edit:
    """``rule`` added at the end of the file's top-level rules (the file made when
    there is none). PolicyError (``file:line``) when the file does not load as it is,
    or would not with the rule, or the rule cannot be added by a line."""
    before = _read(path, shown)
    old = _parsed(before or "", shown, path)
    after, lines = _added_text(before or "", rule, shown)
    new = _checked(after, shown, path, _plus(old.data, rule))
    added = new.file.rules[-1] if new.file.rules else None
    if added is None or not rule.matches(added):
        raise PolicyError(shown, None, "the rule could not be added as the file's last rule: "
                                       "add it by hand")
    return Edit(path, shown, before, after, added, tuple(lines))


def _plus(data: Any, rule: NewRule) -> dict[str, Any]:
    expected = copy.deepcopy(data) if isinstance(data, dict) else {}
    if expected.get("rules") is None:
        expected["rules"] = []
    expected["rules"].append({"permission": rule.permission, "pattern": rule.pattern,
                              "action": rule.action,
                              **({"reason": rule.reason} if rule.reason else {})})
    return expected


# ---------------------------------------------------------------------- removing

def remove_rule(path: Path, shown: str, place: Place) -> Edit:
    """The rule at ``place`` removed from the file as it is now. PolicyError when the
    file no longer holds that rule there (it changed since it was read), or the rule
    cannot be removed by its lines."""
    before = _read(path, shown)
    old = _parsed(before or "", shown, path)
    rules = _section_rules(old.file, place.section)
    line = _line(place.rule.source)
    if before is None or place.position >= len(rules) \
            or _said(rules[place.position]) != _said(place.rule):
        raise PolicyError(shown, line or None, f"the file changed since this session read it: "
                          f"{_said(place.rule)} is no longer there; edit it by hand, or start "
                          "dm_cc again to see it as it is")
    entries = _entries(_compose(before), place.section)
    if len(entries) != len(rules):
        raise PolicyError(shown, line, "this rule cannot be told apart from the others as "
                                       "written: remove it by hand")
    entry = entries[place.position]
    after, lines = _removed_text(before, entry, shown)
    _checked(after, shown, path, _minus(old.data, entry.path))
    return Edit(path, shown, before, after, place.rule, tuple(lines))


def _section_rules(file: PolicyFile, section: tuple[str, ...]) -> tuple[Rule, ...]:
    if section == ():
        return file.rules
    if section == ("auto",):
        return file.auto
    return file.agents.get(section[1], ())


def _said(rule: Rule) -> str:
    """The rule as written at its line (whatever its file is called)."""
    return f'{rule.action} {rule.permission} "{rule.pattern}"' + \
        (f" # {rule.reason}" if rule.reason else "") + f" (line {_line(rule.source)})"


def _removed_text(text: str, entry: _Entry, shown: str) -> tuple[str, list[str]]:
    """``text`` without the entry; the text removed, line by line."""
    collection = entry.collection
    item = collection.value[entry.position]
    first, last = (item[0], item[1]) if isinstance(item, tuple) else (item, item)
    if collection.flow_style:
        return _cut_flow(text, collection, entry.position)
    lines = text.splitlines(keepends=True)
    start, end = first.start_mark, _end(last)
    end_line = end.line - (1 if end.column == 0 and end.line > start.line else 0)
    lead = lines[start.line][:start.column]
    if isinstance(item, yaml.Node):   # a list's item: its dash leads it
        lead = lead.rstrip()
        if not lead.endswith("-"):
            raise PolicyError(shown, start.line + 1, "cannot remove this item by its lines: "
                                                     "remove it by hand")
        lead = lead[:-1]
    tail = lines[end_line][end.column:] if end.line == end_line else ""
    if lead.strip() or (tail.strip() and not tail.strip().startswith("#")):
        raise PolicyError(shown, start.line + 1, "the rule shares its line with other text: "
                                                 "remove it by hand")
    removed = [line.rstrip("\n") for line in lines[start.line:end_line + 1]]
    del lines[start.line:end_line + 1]
    after = "".join(lines)
    if len(collection.value) == 1:   # the list or mapping is empty now: say so
        colon = after.index(":", entry.key.end_mark.index)
        after = after[:colon + 1] + (" []" if isinstance(collection, yaml.SequenceNode)
                                     else " {}") + after[colon + 1:]
    return after, removed


def _cut_flow(text: str, collection: yaml.CollectionNode, position: int) -> tuple[str, list[str]]:
    """A flow list's or mapping's entry cut out with its comma."""
    def span(index: int) -> tuple[int, int]:
        item = collection.value[index]
        first, last = (item[0], item[1]) if isinstance(item, tuple) else (item, item)
        return first.start_mark.index, last.end_mark.index

    start, end = span(position)
    if position + 1 < len(collection.value):
        end = span(position + 1)[0]
    elif position > 0:
        start = span(position - 1)[1]
    return text[:start] + text[end:], [text[start:end].strip(", \n")]


def _minus(data: Any, path: tuple[Any, ...]) -> Any:
    expected = copy.deepcopy(data)
    holder = expected
    for step in path[:-1]:
        holder = holder[step]
    del holder[path[-1]]
    return expected


# ---------------------------------------------------------------------- checking, saving

class _Parsed(NamedTuple):
    data: Any
    file: PolicyFile


def _parsed(text: str, shown: str, path: Path) -> _Parsed:
    """The text's data and what it says as a policy file (PolicyError if it does not load)."""
    data, _lines = load_yaml(text, shown, PolicyError)
    return _Parsed(data, parse_policy(text, shown, path.parent))


def _checked(text: str, shown: str, path: Path, expected: Any) -> _Parsed:
    parsed = _parsed(text, shown, path)
    if parsed.data != expected:
        raise PolicyError(shown, None, "changing this file by a line would change more than "
                                       "the rule: edit it by hand")
    return parsed


def _read(path: Path, shown: str) -> str | None:
    """The file's text, its line ends as they are; None when there is none."""
    try:
        return path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise PolicyError(shown, None, f"cannot read policy file: {exc}") from None


def save(edit: Edit) -> None:
    """Write the edit: refused (PolicyError) when the file no longer holds what the
    edit was made from; else atomically (a temporary file in the same directory,
    fsynced, replaced over it, the file's mode kept). The directory is made if needed;
    a symbolic link is followed (whether it may be is the caller's to say)."""
    path = edit.path.resolve()   # a link (the person's dotfiles): the file it names
    if _read(path, edit.shown) != edit.before:
        raise PolicyError(edit.shown, None, "the file changed while it was being edited: "
                                            "nothing was saved; try again")
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o7777 if edit.before is not None else 0o644
    replace_file(path, edit.after.encode("utf-8"), mode)


class Changed(NamedTuple):
    """What became of an edit: saved or not, what the lint found that it did not find
    before, what became of the file's trust (a project's file; "" for another), and
    why the policy could not be read again after it ("": it was)."""

    edit: Edit
    saved: bool
    findings: list[Finding]
    trust: str = ""
    unread: str = ""


def findings_of(edit: Edit, files: Sequence[PolicyFile], at: int,
                known_agents: Mapping[str, Limited] | None = None) -> list[Finding]:
    """What the lint (``dm_cc policy lint``) finds in ``files`` (in layer order) once
    the edit is made that it did not find before. The edited file takes the place of
    what it was; a new file goes at ``at``."""
    after = as_loaded(edit)
    location = str(edit.path)
    if any(file.location == location for file in files):
        changed = [after if file.location == location else file for file in files]
    else:
        changed = [*files[:at], after, *files[at:]]
    return findings_added(lint_files(files, known_agents), lint_files(changed, known_agents),
                          edit.shown, edit.line_map())


def as_loaded(edit: Edit) -> PolicyFile:
    """The edited file as it reads after the edit."""
    return replace(parse_policy(edit.after, edit.shown, edit.path.parent),
                   location=str(edit.path))
