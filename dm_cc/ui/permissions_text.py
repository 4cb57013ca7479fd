"""The rules in force, as the REPL's ``/permissions`` shows them: one screen, the
person's own rules and the project's numbered (``/permissions remove N``), dm_cc's
own folded to a line each, columns that fit the terminal.

    view = view_of(world, gate, "build", session_approvals)
    summary_lines(view, width)          # /permissions: every layer, a line or its rules
    focus_lines(view, "bash", width)    # /permissions bash|write|guardrails|all|TEXT

How ``/permissions add`` reads a rule and what a change says: rule_edits.py; the
columns: rule_table.py.

Every text a file brings (a pattern, a reason, a path) is shown, never acted on: what
is not printable is escaped, so a repository's reason cannot break a column or move
the cursor. Lines are ``(text, style)`` pairs, none wider than ``width - 1``. Plain
text (no prompt_toolkit): tested on its own.
"""

from __future__ import annotations

import functools
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

from dm_cc.errors import DmccError, UsageError
from dm_cc.ui.rule_edits import ACTIONS, LAYERS
from dm_cc.ui.rule_table import (
    Line,
    at_home,
    file_of,
    quoted,
    rule_rows,
    shown,
    wrapped,
)

if TYPE_CHECKING:
    from dm_cc.compose import World
    from dm_cc.permissions import Gate, Layer, Rule
    from dm_cc.session import SavedApproval

WIDTH = 80          # columns, unless told
FOLD = 3            # a layer of dm_cc's own with more rules than this is shown as one line
NEWEST = 20         # approvals /permissions shows (the newest); /permissions approvals: all
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
                error, {layer: at_home(display_path(world.rule_file(layer)), world.home.as_posix())
                        for layer in LAYERS},
                _trust_line(world), tuple(_servers(world)),
                lambda permission: frozenset(gate.rules_for(permission, bounds=True)),
                world.home.as_posix())


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
        files = ", ".join(shown(file.relative) for file, _ in trust.pending)
        return (f"this project's files: not trusted: {files} (/permissions trust; /trust shows "
                "what they would open)")
    return "this project's files: trusted (/permissions untrust forgets them)"


def _servers(world: World) -> Iterable[str]:
    try:
        servers = list(world.settings.mcp.values())
        for server in servers:
            yield f"{shown(server.name)} {world.mcp_trust(server)}"
    except DmccError as exc:
        yield f"unknown: {exc}"


# ---------------------------------------------------------------------- the screens

def summary_lines(view: View, width: int = WIDTH) -> list[Line]:
    """``/permissions``: each layer, dm_cc's own folded to a line (how to unfold it
    said), the others' rules listed; the approvals, the trust, how to change them."""
    lines = wrapped(f"Rules for {view.agent}, layer by layer: the last match decides, a later "
                  "layer wins.", width, "class:tool")
    for section in _sections(view):
        lines += _layer(view, section, section.layer.rules, width, fold=section.folds,
                        newest=NEWEST)
    if view.left_out:
        lines += wrapped("Left out until you trust this project's files (/permissions trust):",
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
    lines = wrapped(f"Rules {wanted_filter.about} for {view.agent}, layer by layer (the last "
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
            lines += wrapped(f"[{layer.name}] {len(rules)} rules {wanted_filter.about} · "
                           f"/permissions {_key(layer)} {wanted}", width, "class:tool")
            continue
        lines += _layer(view, section, rules, width, fold=False,
                        keep=functools.partial(_kept, keep, layer=layer))
    left = [rule for _, rule in view.left_out if keep(rule, None)
            and (not wanted_filter.layers or "project" in wanted_filter.layers)]
    if left:
        shown += 1
        lines += wrapped("Left out until you trust this project's files (/permissions trust):",
                       width, "class:tool")
        lines += _table(left, view, width)
    if not shown:
        lines += wrapped(f"no rules {wanted_filter.about}; /permissions lists every layer", width,
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
        f"of the {', '.join(sorted(layers))} layer{'s' if len(layers) > 1 else ''}" \
        if layers else ""
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
           fold: bool, keep: Callable[[Rule], bool] = lambda rule: True,
           newest: int | None = None) -> list[Line]:
    """A layer's heading and its rules (or, folded, what they are in a line); of the
    approvals, only the ``newest`` (months of "always" answers would fill screens)."""
    layer = section.layer
    if layer.name == "approvals":
        approved = [a for a in view.approved if keep(a.rule)]
        heading = f"[approvals] {section.about} · /permissions revoke ID" \
            if approved or view.store_error else \
            '[approvals] none yet (your answers "a" always and "s" for this session)'
        lines = wrapped(heading, width, "class:tool")
        older = len(approved) - newest if newest is not None else 0
        if older > 0:
            lines += wrapped(f"{older:,} older not shown · /permissions approvals lists them "
                             "all", width, "class:dim", "  ", "  ")
            approved = approved[older:]
        return lines + _approvals(view, approved, width)
    if fold and len(rules) > FOLD:
        counts = ", ".join(f"{count} {action}" for action in ACTIONS
                           if (count := sum(r.action == action for r in rules)))
        said = FOLDED.get(layer.name, "{n} rules ({counts}): " + section.about)
        return wrapped(f"[{layer.name}] {said.format(n=len(rules), counts=counts)} · "
                     f"/permissions {_key(layer)}", width, "class:tool")
    files = [file for file in _files(rules) if not file.startswith("builtin:")]
    if not rules and layer.name in LAYERS:
        return wrapped(f"[{layer.name}] none yet: /permissions add --{layer.name} … writes "
                     f"{view.files.get(layer.name, '')}", width, "class:tool")
    parts = [part for part in (at_home(shown(files[0]), view.home) if len(files) == 1 else "",
                               section.about) if part]
    heading = f"[{layer.name}] " + " · ".join(parts)
    return wrapped(heading, width, "class:tool", "  ", "") + \
        _table(rules, view, width, files=len(files) > 1)


def _key(layer: Layer) -> str:
    """What to type after ``/permissions`` to see the layer's rules."""
    return layer.name.split(":", 1)[0] if layer.name.startswith("may:") else layer.name


def _files(rules: Sequence[Rule]) -> list[str]:
    """The files (or ``builtin:NAME``) ``rules`` come from, in order, once each."""
    return list(dict.fromkeys(file_of(rule) for rule in rules))


def _table(rules: Sequence[Rule], view: View, width: int, *, files: bool = False) -> list[Line]:
    return rule_rows(rules, width, numbers=view.numbers, home=view.home, files=files)


def _approvals(view: View, approved: Sequence[Approved], width: int) -> list[Line]:
    """The approvals: what revoke takes (the id), whose, what they allow, until when."""
    if view.store_error:
        return wrapped(f"saved approvals unknown: {view.store_error}", width, "class:error", "  ")
    if not approved:
        return []
    ids = max(len(a.id) for a in approved)
    agents = max(len(a.agent) for a in approved)
    lines: list[Line] = []
    for item in approved:
        lead = f"  {item.id:<{ids}}  {item.agent:<{agents}}  "
        said = f"{shown(item.rule.permission)} {quoted(item.rule)}"
        row = f"{lead}{said}  · {item.until}"
        if len(row) < width:
            lines.append((row, "class:allow"))
        else:
            lines += wrapped(said, width, "class:allow", " " * len(lead), lead)
            lines += wrapped(f"· {item.until}", width, "class:dim", " " * len(lead))
    return lines


def _footer(view: View, width: int) -> list[Line]:
    lines: list[Line] = []
    if view.trust:
        lines += wrapped(view.trust, width, "", "  ")
    if view.servers:
        lines += wrapped("MCP servers: " + ", ".join(view.servers) +
                       " · /permissions mcp trust|untrust NAME", width, "", "  ")
    return lines + wrapped(HELP, width, "class:dim", "  ")
