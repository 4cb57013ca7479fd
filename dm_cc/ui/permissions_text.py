"""The rules in force, as the REPL's ``/permissions`` shows them: one screen, the
person's own rules and the project's numbered (``/permissions remove N``), dm_cc's
own folded to a line each, columns that fit the terminal.

    view = view_of(world, gate, "build", session_approvals)
    summary_lines(view, width)          # /permissions: every layer, a line or its rules
    focus_lines(view, "bash", width)    # /permissions bash|write|guardrails|all|TEXT
    parse_add(["--user", "ask", "bash", "git", "push", "*"])   # -> ("user", NewRule)
    changed_lines(changed, width)       # what /permissions add|remove did

Every text a file brings (a pattern, a reason, a path) is shown, never acted on: what
is not printable is escaped, so a repository's reason cannot break a column or move
the cursor. Lines are ``(text, style)`` pairs, none wider than ``width - 1``. Plain
text (no prompt_toolkit): tested on its own.
"""

from __future__ import annotations

import functools
import json
import re
import textwrap
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

from dm_cc.errors import DmccError, UsageError

if TYPE_CHECKING:
    from dm_cc.compose import World
    from dm_cc.permissions import Gate, Layer, Rule
    from dm_cc.policy import Changed, NewRule
    from dm_cc.session import SavedApproval

Line = tuple[str, str]          # (text, style)

WIDTH = 80          # columns, unless told
FOLD = 3            # a layer of dm_cc's own with more rules than this is shown as one line
PERMISSION_AT_MOST = 16   # the permission column's width at most (a longer name overflows it)
NUMBER = 4          # the number column (``  12``)
ACTIONS = ("allow", "ask", "deny")
LAYERS = ("project", "user")    # where /permissions add writes
#: What each layer is, after its name and its files (a layer not named here: nothing).
ABOUT = {
    "builtin": "dm_cc's defaults",
    "guardrails": "built-in denies no rule can open",
    "managed": "your organisation's (binding: no approval overrides it)",
    "subagent": "a subagent's: no todo list, no further subagents",
    "auto": "lifts asks where commands run as transactions (never a configured deny)",
    "approvals": 'your "a"/"s" answers (never beat a deny)',
    "enforced": "your organisation's last word",
}
#: A folded layer of dm_cc's own, in a line: ``{n}`` its rules, ``{counts}`` by action.
FOLDED = {
    "builtin": "{n} defaults ({counts})",
    "guardrails": "{n} denies no rule can open",
}
BACK = ("(nothing was saved; the command is back at the prompt to correct, Ctrl-C clears "
        "it; or edit the file by hand)")
USAGE = ("usage: /permissions [FILTER] | add --project|--user allow|ask|deny PERMISSION "
         "PATTERN [# REASON] | remove N | revoke ID | trust | untrust | mcp trust|untrust NAME")
HELP = ("/permissions TOOL|PERMISSION|LAYER|TEXT|all: only those rules · add --project|--user "
        "allow|ask|deny PERMISSION PATTERN [# reason] · remove N · revoke ID · trust|untrust · "
        "mcp trust|untrust NAME")


@dataclass(frozen=True)
class Approved:
    """An approval as listed: what ``/permissions revoke`` takes, whose it is, what it
    allows and how long."""

    id: str
    agent: str
    rule: Rule
    until: str


@dataclass(frozen=True)
class View:
    """What ``/permissions`` shows, gathered once (:func:`view_of`)."""

    agent: str
    layers: tuple[Layer, ...]
    bounds: tuple[tuple[Layer, str], ...] = ()
    numbers: Mapping[Rule, int] = field(default_factory=dict)
    left_out: tuple[tuple[int, Rule], ...] = ()    # numbered allow rules of untrusted files
    approved: tuple[Approved, ...] = ()
    store_error: str = ""                          # why the saved approvals are unknown
    files: Mapping[str, str] = field(default_factory=dict)   # layer -> where add writes
    trust: str = ""                                # the project's files, in a line
    servers: tuple[str, ...] = ()                  # the MCP servers and their trust
    covering: Callable[[str], frozenset[Rule]] = lambda permission: frozenset()
    home: str = ""                                 # written ~ in the files' names


def view_of(world: World, gate: Gate, agent: str,
            session: Mapping[str, Sequence[Rule]]) -> View:
    """The view of ``agent``'s ``gate`` (the session's, its approvals included) and of
    the approvals of every agent, saved and of this ``session``."""
    from dm_cc.config import display_path

    places = world.editable_rules()
    numbers = {place.rule: number for number, place in enumerate(places, start=1)}
    in_force = {rule for layer in gate.layers for rule in layer.rules}
    left_out = tuple((number, place.rule) for number, place in enumerate(places, start=1)
                     if place.rule.action == "allow" and place.rule not in in_force
                     and place.section in ((), ("agents", agent))
                     and any(f is place.file for f in world.policy.project))
    approved, error = _approved(world, session)
    return View(agent, tuple(gate.layers), tuple(gate.bounds()), numbers, left_out, approved,
                error, {layer: _home(display_path(world.rule_file(layer)), world.home.as_posix())
                        for layer in LAYERS},
                _trust_line(world), tuple(_servers(world)),
                lambda permission: frozenset(gate.rules_for(permission, bounds=True)),
                world.home.as_posix())


def _home(path: str, home: str) -> str:
    """``path`` with the home directory written ``~``."""
    return "~" + path[len(home):] if home and path.startswith(home + "/") else path


def _approved(world: World, session: Mapping[str, Sequence[Rule]]
              ) -> tuple[tuple[Approved, ...], str]:
    listed = []
    error = ""
    try:
        saved: list[SavedApproval] = world.approvals.list()
    except DmccError as exc:
        saved, error = [], str(exc)
    for item in saved:
        if item.agent == "*":   # trust of a file or a server: no rule (shown under trust)
            continue
        until = time.strftime("until %Y-%m-%d %H:%M", time.localtime(item.expires)) \
            if item.expires else "saved"
        listed.append(Approved(item.id, item.agent, item.rule(), until))
    number = 0
    for agent, rules in session.items():
        for rule in rules:
            number += 1
            listed.append(Approved(f"s{number}", agent, rule, "this session"))
    return tuple(listed), error


def session_approval(session: Mapping[str, list[Rule]], wanted: str) -> tuple[str, Rule]:
    """The session approval ``s<N>`` as :func:`view_of` numbers them: (agent, rule)."""
    found = [(agent, rule) for agent, rules in session.items() for rule in rules]
    number = wanted[1:]
    if not number.isdigit() or not 1 <= int(number) <= len(found):
        raise UsageError(f"no approval {wanted!r} for this session (/permissions lists them)")
    return found[int(number) - 1]


def _trust_line(world: World) -> str:
    trust = world.trust
    if not trust.files:
        return ""
    if trust.forbidden is not None:
        return f"this project's files: never trusted here ({trust.forbidden})"
    if trust.pending:
        files = ", ".join(_shown(file.relative) for file, _ in trust.pending)
        return (f"this project's files: not trusted: {files} (/permissions trust; /trust shows "
                "what they would open)")
    return "this project's files: trusted (/permissions untrust forgets them)"


def _servers(world: World) -> Iterable[str]:
    try:
        servers = list(world.settings.mcp.values())
        for server in servers:
            yield f"{_shown(server.name)} {world.mcp_trust(server)}"
    except DmccError as exc:
        yield f"unknown: {exc}"


# ---------------------------------------------------------------------- the screens

def summary_lines(view: View, width: int = WIDTH) -> list[Line]:
    """``/permissions``: each layer, dm_cc's own folded to a line (how to unfold it
    said), the others' rules listed; the approvals, the trust, how to change them."""
    lines = _wrap(f"Rules for {view.agent}, layer by layer: the last match decides, a later "
                  "layer wins.", width, "class:tool")
    for section in _sections(view):
        lines += _layer(view, section, section.layer.rules, width, fold=section.folds)
    if view.left_out:
        lines += _wrap("Left out until you trust this project's files (/permissions trust):",
                       width, "class:tool")
        lines += _table([rule for _, rule in view.left_out], view, width)
    lines += _footer(view, width)
    return lines


def focus_lines(view: View, wanted: str, width: int = WIDTH) -> list[Line]:
    """``/permissions WANTED``: the rules of one layer (``guardrails``, or ``all``), then
    of those (or of every layer) the rules about one permission (a tool's: ``write``
    is ``edit``), or that mention some text. Layer by layer; dm_cc's own layers stay
    folded unless named, each in a line that says how to see its rules."""
    wanted_filter = _filter(view, wanted)
    keep = wanted_filter.keep
    lines = _wrap(f"Rules {wanted_filter.about} for {view.agent}, layer by layer (the last "
                  "match decides):", width, "class:tool")
    shown = 0
    for section in _sections(view):
        layer = section.layer
        rules = [rule for rule in layer.rules if keep(rule, layer)]
        approvals = layer.name == "approvals" and any(keep(a.rule, layer)
                                                       for a in view.approved)
        if not (rules or approvals):
            continue
        shown += 1
        if section.folds and len(rules) > FOLD and not wanted_filter.layers:
            lines += _wrap(f"[{layer.name}] {len(rules)} rules {wanted_filter.about} · "
                           f"/permissions {_key(layer)} {wanted}", width, "class:tool")
            continue
        lines += _layer(view, section, rules, width, fold=False,
                        keep=functools.partial(_kept, keep, layer=layer))
    left = [rule for _, rule in view.left_out if keep(rule, None)
            and (not wanted_filter.layers or "project" in wanted_filter.layers)]
    if left:
        shown += 1
        lines += _wrap("Left out until you trust this project's files (/permissions trust):",
                       width, "class:tool")
        lines += _table(left, view, width)
    if not shown:
        lines += _wrap(f"no rules {wanted_filter.about}; /permissions lists every layer", width,
                       "class:dim")
    return lines


def _kept(keep: Callable[[Rule, Layer | None], bool], rule: Rule, *, layer: Layer) -> bool:
    return keep(rule, layer)


class _Filter(NamedTuple):
    keep: Callable[[Rule, Layer | None], bool]   # (no layer: a rule left out, the project's)
    about: str                                   # how to say which rules
    layers: frozenset[str]                       # the layers named (none: every layer)


def _filter(view: View, wanted: str) -> _Filter:
    """Which rules ``wanted`` asks for: a layer (or ``all``), then a permission (a
    tool's) or some text, each optional; and how to say it."""
    words = wanted.split()
    names = {layer.name for layer in view.layers} | {layer.name for layer, _ in view.bounds}
    layers = frozenset(names if words[:1] == ["all"] else
                       {name for name in names if words and
                        words[0] in (name, re.split(r"[:.]", name)[0])})
    about = "of every layer" if words[:1] == ["all"] else \
        f"of {', '.join(sorted(layers))}" if layers else ""
    rest = " ".join(words[1:] if layers else words)
    matches, said = _matching(view, rest) if rest else ((lambda rule: True), "")
    return _Filter(lambda rule, layer: (not layers or layer is None or layer.name in layers)
                   and matches(rule), " ".join(part for part in (about, said) if part), layers)


def _matching(view: View, wanted: str) -> tuple[Callable[[Rule], bool], str]:
    """The rules about the permission ``wanted`` names (or its tool's), else those that
    mention it; and how to say it."""
    from dm_cc.tools import entry, is_known_permission

    permission = wanted
    if not is_known_permission(wanted):
        try:
            permission = entry(wanted).permission
        except (LookupError, ValueError):
            permission = ""
    if permission:
        covering = view.covering(permission)
        tool = f" (the {wanted} tool's permission)" if permission != wanted else ""
        return (lambda rule: rule in covering or rule.permission == permission), \
            f"about {permission}{tool}"
    text = wanted.casefold()
    return (lambda rule: text in f"{rule.permission} {rule.pattern} {rule.reason or ''} "
                                 f"{rule.source}".casefold()), f"that mention {wanted!r}"


class _Section(NamedTuple):
    layer: Layer
    about: str          # what it is, after its name
    folds: bool         # dm_cc's own: folded to a line when it has many rules


def _sections(view: View) -> Iterator[_Section]:
    """The layers worth a heading, each with what it is: those with rules, the places
    the person's rules go (even empty), the approvals, then the bounds."""
    said: set[str] = set()
    for layer in view.layers:
        if layer.rules or layer.name in LAYERS and layer.name not in said \
                or layer.name == "approvals":
            said.add(layer.name)
            yield _Section(layer, _about(layer), layer.origin == "builtin")
    for layer, why in view.bounds:
        yield _Section(layer, f"bounds every layer above: {why}", True)


def _about(layer: Layer) -> str:
    if layer.origin == "untrusted":
        return "not trusted: its allow rules are left out"
    if layer.origin == "repository" and layer.rules:
        return "trusted: opens nothing beyond the project"
    if layer.name.startswith("agent:"):
        return "the agent's own rules"
    if layer.name.startswith("agents."):
        return f"your files' rules for {layer.name.split('.', 1)[1]}"
    return ABOUT.get(layer.name, "")


def _layer(view: View, section: _Section, rules: Sequence[Rule], width: int, *,
           fold: bool, keep: Callable[[Rule], bool] = lambda rule: True) -> list[Line]:
    """A layer's heading and its rules (or, folded, what they are in a line)."""
    layer = section.layer
    if layer.name == "approvals":
        approved = [a for a in view.approved if keep(a.rule)]
        heading = f"[approvals] {section.about} · /permissions revoke ID" \
            if approved or view.store_error else \
            '[approvals] none yet (your answers "a" always and "s" for this session)'
        return _wrap(heading, width, "class:tool") + _approvals(view, approved, width)
    if fold and len(rules) > FOLD:
        counts = ", ".join(f"{count} {action}" for action in ACTIONS
                           if (count := sum(r.action == action for r in rules)))
        said = FOLDED.get(layer.name, "{n} rules ({counts}): " + section.about)
        return _wrap(f"[{layer.name}] {said.format(n=len(rules), counts=counts)} · "
                     f"/permissions {_key(layer)}", width, "class:tool")
    files = [file for file in _files(rules) if not file.startswith("builtin:")]
    if not rules and layer.name in LAYERS:
        return _wrap(f"[{layer.name}] none yet: /permissions add --{layer.name} … writes "
                     f"{view.files.get(layer.name, '')}", width, "class:tool")
    parts = [part for part in (_home(_shown(files[0]), view.home) if len(files) == 1 else "",
                               section.about) if part]
    heading = f"[{layer.name}] " + " · ".join(parts)
    return _wrap(heading, width, "class:tool", "  ", "") + \
        _table(rules, view, width, files=len(files) > 1)


def _key(layer: Layer) -> str:
    """What to type after ``/permissions`` to see the layer's rules."""
    return layer.name.split(":", 1)[0] if layer.name.startswith("may:") else layer.name


def _files(rules: Sequence[Rule]) -> list[str]:
    """The files (or ``builtin:NAME``) ``rules`` come from, in order, once each."""
    seen: dict[str, None] = {}
    for rule in rules:
        seen.setdefault(rule.source.rsplit(":", 1)[0] if _line(rule) else rule.source)
    return list(seen)


def _line(rule: Rule) -> str:
    tail = rule.source.rsplit(":", 1)[-1]
    return tail if tail.isdigit() and ":" in rule.source else ""


# ---------------------------------------------------------------------- the columns

def _table(rules: Sequence[Rule], view: View, width: int, *, files: bool = False) -> list[Line]:
    """Rules in columns (number, action, permission, pattern; then the line of the file
    and the reason): a column as wide as its widest cell, the permission's at most
    :data:`PERMISSION_AT_MOST` (a longer one pushes that row's pattern along); what
    does not fit after the pattern goes under it, wrapped. Rules in a row that share
    a reason have it once, above them; rules from several files, a line per file."""
    if not rules:
        return []
    permission = min(max(len(_shown(r.permission)) for r in rules), PERMISSION_AT_MOST)
    head = NUMBER + 1 + 5 + 1 + permission + 1
    widest = max(width - 1 - head - 12, 16)   # a longer pattern leaves its column
    pattern = max((len(text) for r in rules if len(text := _pattern(r)) <= widest), default=0)
    lines: list[Line] = []
    last_file = None
    for run in _runs(rules):
        file = _files(run[:1])[0]
        if files and file != last_file:
            lines += _wrap(_home(_shown(file), view.home), width, "class:dim", "  ")
        last_file = file
        shared = run[0].reason if len(run) > 1 else None
        if shared:
            lines += _wrap(f"# {_shown(shared)}", width, "class:dim", " " * (NUMBER + 2))
        for rule in run:
            lines += _row(rule, view.numbers.get(rule), permission, pattern, width,
                          reason=None if shared else rule.reason)
    return lines


def _runs(rules: Sequence[Rule]) -> list[list[Rule]]:
    """Rules grouped as they come: one group per file and reason."""
    runs: list[list[Rule]] = []
    for rule in rules:
        if runs and (runs[-1][0].reason, _files(runs[-1][:1])) == (rule.reason, _files([rule])):
            runs[-1].append(rule)
        else:
            runs.append([rule])
    return runs


def _row(rule: Rule, number: int | None, permission: int, pattern: int, width: int, *,
         reason: str | None) -> list[Line]:
    name = _shown(rule.permission)
    cells = f"{number or '':>{NUMBER}} {rule.action:<5} {name:<{permission}} "
    tail = "  ".join(part for part in (f":{_line(rule)}" if _line(rule) else "",
                                       f"# {_shown(reason)}" if reason else "") if part)
    style = f"class:{rule.action}"
    if len(cells) > width // 2:   # a long permission: the pattern under it
        return [(cells.rstrip(), style)] + \
            _rest(" " * (NUMBER + 7), _pattern(rule), tail, 0, width, style)
    return _rest(cells, _pattern(rule), tail, pattern, width, style)


def _rest(lead: str, text: str, tail: str, pattern: int, width: int, style: str) -> list[Line]:
    """A row from its pattern on: the pattern in its column, then the line and the
    reason; what does not fit goes under the pattern, wrapped."""
    under = " " * len(lead)
    if not tail:
        return _wrap(lead + text, width, style, under, lead)
    for row in (f"{lead}{text:<{pattern}}  {tail}", f"{lead}{text}  {tail}"):
        if len(row) < width:
            return [(row, style)]
    return _wrap(f"{lead}{text}  {tail}", width, style, under, lead)


def _approvals(view: View, approved: Sequence[Approved], width: int) -> list[Line]:
    """The approvals: what revoke takes (the id), whose, what they allow, until when."""
    if view.store_error:
        return _wrap(f"saved approvals unknown: {view.store_error}", width, "class:error", "  ")
    if not approved:
        return []
    ids = max(len(a.id) for a in approved)
    agents = max(len(a.agent) for a in approved)
    lines: list[Line] = []
    for item in approved:
        lead = f"  {item.id:<{ids}}  {item.agent:<{agents}}  "
        said = f"{_shown(item.rule.permission)} {_pattern(item.rule)}"
        row = f"{lead}{said}  · {item.until}"
        if len(row) < width:
            lines.append((row, "class:allow"))
        else:
            lines += _wrap(lead + said, width, "class:allow", " " * len(lead), lead)
            lines += _wrap(f"· {item.until}", width, "class:dim", " " * len(lead))
    return lines


def _footer(view: View, width: int) -> list[Line]:
    lines: list[Line] = []
    if view.trust:
        lines += _wrap(view.trust, width, "", "  ")
    if view.servers:
        lines += _wrap("MCP servers: " + ", ".join(view.servers) +
                       " · /permissions mcp trust|untrust NAME", width, "", "  ")
    return lines + _wrap(HELP, width, "class:dim", "  ")


# ---------------------------------------------------------------------- changing

def parse_add(args: Sequence[str], files: Mapping[str, str]) -> tuple[str, NewRule]:
    """``add [--project|--user] ACTION PERMISSION PATTERN [# REASON]``: the layer and
    the rule. The pattern is the words after the permission (or a quoted string, when
    it holds `` # ``); the reason what follows a lone ``#``. ``files``: where each
    layer's rules go (for the message when none is named). UsageError if malformed."""
    from dm_cc.policy import NewRule

    words = list(args)
    layer = None
    while words and words[0].startswith("--"):
        flag = words.pop(0)
        if flag.removeprefix("--") not in LAYERS or layer is not None:
            raise UsageError(f"{flag}: say --project or --user, once; {USAGE}")
        layer = flag.removeprefix("--")
    if layer is None:
        raise UsageError("say whose file the rule goes in: /permissions add --user … (your "
                         f"own, {files.get('user')}: every project) or --project … (this "
                         f"project's, {files.get('project')}: shared with whoever uses it)")
    if len(words) < 3 or words[0] not in ACTIONS:
        raise UsageError("usage: /permissions add --project|--user allow|ask|deny PERMISSION "
                         "PATTERN [# REASON]")
    action, permission, rest = words[0], words[1], " ".join(words[2:])
    pattern, reason = _pattern_and_reason(rest)
    return layer, NewRule(action, permission, pattern, reason)


def _pattern_and_reason(text: str) -> tuple[str, str | None]:
    quoted = re.fullmatch(r"""(["'])(.*?)\1(?:\s+#(?:\s+(.*))?)?""", text)
    if quoted:
        pattern, reason = quoted.group(2), quoted.group(3)
    elif (mark := re.search(r"(?:^|\s)#(?:\s|$)", text)) is not None:
        pattern, reason = text[:mark.start()].strip(), text[mark.end():]
    else:
        pattern, reason = text.strip(), None
    if not pattern:
        raise UsageError("the rule needs a pattern: * for every request of the permission")
    return pattern, (reason or "").strip() or None


def changed_lines(changed: Changed, width: int = WIDTH) -> list[Line]:
    """What ``/permissions add`` or ``remove`` did: the file and the lines added or
    removed, what the lint found, what became of the file's trust; or, not saved, why."""
    edit = changed.edit
    added = edit.before is None or len(edit.after) > len(edit.before)
    if not changed.saved:
        lines = _wrap(f"not saved: the lint finds a problem the rule would bring "
                      f"({edit.shown} is unchanged):", width, "class:error")
        for finding in changed.findings:
            lines += _wrap(str(finding), width, "class:error", "    ", "  ")
        return lines + _wrap(BACK, width, "class:dim", "  ")
    where = f"{edit.shown}:{_line(edit.rule)}"
    lines = _wrap(f"{'added to' if added else 'removed from'} {where}" +
                  (":" if changed.unread else ", in force from now on:"), width, "class:tool")
    for line in edit.lines:
        lines += _wrap(_shown(line), width, "class:add" if added else "class:del", "      ", "")
    if changed.trust:
        lines += _wrap(f"{edit.shown}: {changed.trust}", width, "class:dim", "  ")
    for finding in changed.findings:
        lines += _wrap(f"! {finding}", width, "class:notice", "  ")
    if changed.unread:
        lines += _wrap(f"! saved, but the policy could not be read again ({changed.unread}): "
                       "this session keeps the rules it had until that is fixed", width,
                       "class:error", "  ")
    return lines


def said_lines(text: str, width: int = WIDTH, style: str = "") -> list[Line]:
    """A sentence wrapped to the terminal, its lines after the first indented."""
    return _wrap(text, width, style, "  ", "")


def refused_lines(message: str, width: int = WIDTH) -> list[Line]:
    """Why ``/permissions add`` saved nothing, and that the command is back to correct."""
    return _wrap(message, width, "class:error", "  ", "") + _wrap(BACK, width, "class:dim", "  ")


# ---------------------------------------------------------------------- text

def _shown(text: str) -> str:
    """``text`` as it may reach a terminal: what is not printable escaped."""
    return text if text.isprintable() else json.dumps(text, ensure_ascii=False)[1:-1]


def _pattern(rule: Rule) -> str:
    return f'"{_shown(rule.pattern)}"'


def _wrap(text: str, width: int, style: str = "", indent: str = "", then: str | None = None,
          ) -> list[Line]:
    """``text`` in lines narrower than ``width``, the first led by ``then`` (default
    ``indent``), the others by ``indent``; a word too long for a line (a long path or
    pattern) is cut, so that no line is wider than the terminal."""
    if then is not None and text.startswith(then):   # the lead is kept as it is
        text = text[len(then):]
    wrapped = textwrap.wrap(text, max(width - 1, 20),
                            initial_indent=indent if then is None else then,
                            subsequent_indent=indent, break_long_words=True,
                            break_on_hyphens=False, drop_whitespace=True) if text else [""]
    return [(line, style) for line in wrapped]
