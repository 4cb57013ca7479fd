"""Slash commands: an explicit registry, each with its help line and completions.

A line starting with ``/`` is a command, never a message to the model: an unknown
``/word`` is an error shown to the person. ``/help`` lists this registry.

    command, args = parse("/tasks cancel 2")   # DmccError for an unknown command
    result = command.run(context, args)        # an awaitable when the command waits

A command sees the session through the :class:`Context` the REPL hands it: the
screen, the world, the loop in charge, the last decision, and the few things it
may ask the REPL to do (start a new session, cancel a background subagent, show
the spinner, put text at the next prompt). Shift+Tab calls :func:`next_agent`; :class:`SlashCompleter` needs
nothing but this registry.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

from dm_cc.agents import named_agent
from dm_cc.config import counted, display_path
from dm_cc.errors import DmccError
from dm_cc.llm import ModelError
from dm_cc.permissions import Request
from dm_cc.session import session_tree
from dm_cc.ui.describe import trace_lines
from dm_cc.ui.headless import one_line, tools_text
from dm_cc.ui.mcp_text import approved_lines, server_lines, server_rows, unapproved_line
from dm_cc.ui.pager import page
from dm_cc.ui.permissions_text import focus_lines, session_approval, summary_lines, view_of
from dm_cc.ui.render import Shown, diff_lines
from dm_cc.ui.rule_edits import LAYERS, changed_lines, parse_add, refused_lines, said_lines
from dm_cc.ui.rule_table import wrapped
from dm_cc.ui.sessions_text import session_table
from dm_cc.ui.thinking import show_thinking
from dm_cc.ui.trust_text import MAX_WIDTH, session_lines, trust_lines, trusted_lines
from dm_cc.ui.undo_text import result_lines, rewind_lines, step_lines
from dm_cc.ui.usage_text import usage_line

if TYPE_CHECKING:
    from dm_cc.compose import World
    from dm_cc.core import Loop, Running
    from dm_cc.permissions import Decision
    from dm_cc.session import ToolCall
    from dm_cc.ui.screen import Screen

SESSIONS = 10       # top-level sessions /sessions lists (each with its subagents' below)


@dataclass(frozen=True)
class Context:
    """What a slash command works with: the session as it is when the command is
    typed, and the few things the command may ask the REPL to do."""

    screen: Screen
    world: World
    loop: Loop                                           # the loop in charge
    last_decision: tuple[ToolCall, Decision] | None      # for /why
    new_session: Callable[[], Awaitable[Loop]]           # /clear: the fresh session's loop
    cancel_background: Callable[[str], Awaitable[None]]  # one background subagent, by task id
    busy: Callable[[str], AbstractContextManager[None]]  # the spinner, doing this activity
    prefill: Callable[[str], None] = lambda text: None   # text for the next prompt (/rewind)
    shown: Shown = field(default_factory=Shown)          # outputs the screen cut (/expand)


Handler = Callable[[Context, list[str]], Awaitable[None] | None]


@dataclass(frozen=True)
class Command:
    """A slash command: its name, help line, handler, usage and the words its first
    argument completes to."""

    name: str
    help: str
    run: Handler
    usage: str = ""
    words: tuple[str, ...] = ()   # completions of the first argument


class Exit(Exception):
    """``/exit``: leave the REPL."""


# ---------------------------------------------------------------------- the commands

def _help(ctx: Context, args: list[str]) -> None:
    """The commands, each what it does wrapped between words under its own column."""
    width = min(ctx.screen.output.get_size().columns, MAX_WIDTH)
    ctx.screen.line("Commands:", "class:tool")
    for command in COMMANDS.values():
        usage = f"/{command.name}" + (f" {command.usage}" if command.usage else "")
        if len(usage) > 26:
            ctx.screen.line(f"  {usage}")
            usage = ""
        for text, _ in wrapped(command.help, width, indent=" " * 29, first=f"  {usage:<26} "):
            ctx.screen.line(text)
    ctx.screen.lines([
        "@NAME TASK starts that subagent yourself (@explore find X) · Tab completes NAME",
        "Keys: Enter sends · Alt-Enter/Esc-Enter/Ctrl-J new line · Ctrl-R search history",
        "      Shift+Tab next mode (build → accept edits → auto → plan)",
        "      Ctrl-C cancels a turn (twice at an empty prompt: exit) · Ctrl-D exits",
        "      Ctrl-O the model's last thinking · v at a question views it whole"],
        "class:dim")


def _agent(ctx: Context, args: list[str]) -> None:
    sub = args[0] if args else "list"
    if sub == "list":
        current = ctx.loop.agent.name
        for agent in ctx.world.agents.values():
            mark = "*" if agent.name == current else " "
            ctx.screen.line(f" {mark} {agent.name:<10} {agent.mode:<9} {agent.description}")
    elif sub == "switch" and len(args) == 2:
        _switch(ctx, args[1])
    elif sub == "capabilities" and len(args) <= 2:
        _capabilities(ctx, args[1] if len(args) == 2 else None)
    else:
        raise DmccError("usage: /agent list | switch NAME | capabilities [NAME]")


def _capabilities(ctx: Context, name: str | None) -> None:
    """What an agent may do here: the one in charge, or NAME -- a subagent as the
    agent in charge would start it (bounded by it), another as if it were in charge."""
    loop = ctx.loop
    agent = named_agent(loop.rt.agents, name) if name else loop.agent   # as the settings set it
    gate = loop.rights.gate_of(agent)
    how = ("in charge" if agent.name == loop.agent.name else
           f"as {loop.agent.name} would start it" if agent.mode == "subagent" else
           "if it were in charge")
    ctx.screen.line(f"agent {agent.name} ({agent.mode}, {how}): {agent.description}",
                    "class:agent")
    settings = [f"{key} {value}" for key, value in (
        ("model", agent.model), ("temperature", agent.temperature),
        ("max_turns", agent.max_turns)) if value is not None]
    ctx.screen.line(f"  defined at {agent.source}" + (f" · {', '.join(settings)}"
                                                     if settings else ""), "class:dim")
    if agent.prompt:
        summary = " ".join(agent.prompt.split())
        ctx.screen.line("  prompt: " + (summary if len(summary) <= 200 else
                                        summary[:200].rsplit(" ", 1)[0] + " …"), "class:dim")
    column = min(max((len(tool.name) for tool in loop.rt.tools), default=0), 30)
    for tool in loop.rt.tools:   # names in one column, however long an MCP tool's name
        permission = tool.entry.permission
        if gate.denies_outright(permission):
            action, how = "deny", "not offered to the model"
        else:
            verdict = gate.judge(Request(permission, "*"))
            action, how = verdict.action, verdict.rule.describe()
            specific = sum(1 for rule in gate.rules_for(permission, bounds=True)
                           if rule.pattern != "*")
            if specific:
                how = f"by default: {how}; {counted(specific, 'more specific rule')} for " \
                      "particular inputs (/permissions)"
        ctx.screen.line(f"  {action:<5} {tool.name:<{column}} {how}", f"class:{action}")


def _switch_to(name: str) -> Handler:
    def run(ctx: Context, args: list[str]) -> None:
        _switch(ctx, name)
    return run


def _switch(ctx: Context, name: str) -> None:
    if (ctx.loop.next_agent or ctx.loop.agent.name) == name:
        if ctx.loop.rights.accept_edits:    # /build in accept-edits: plain build again
            ctx.loop.accept_edits(False)
            return
        ctx.screen.line(f"already the {name} agent", "class:dim")
        return
    ctx.loop.switch_agent(name)


#: The agent Shift+Tab goes on to accept edits with, before the next agent.
ACCEPTS_EDITS = "build"


def modes(world: World) -> list[tuple[str, bool]]:
    """What Shift+Tab cycles through, in order: each primary agent (build, auto,
    plan, then those of files), build followed by build accepting edits."""
    steps = []
    for agent in world.agents.values():
        if agent.mode != "subagent":
            steps.append((agent.name, False))
            if agent.name == ACCEPTS_EDITS:
                steps.append((agent.name, True))
    return steps


def next_agent(world: World, loop: Loop) -> None:
    """Shift+Tab: the next mode (:func:`modes`): build → build accepting edits →
    auto → plan → … → build."""
    steps = modes(world)
    current = (loop.next_agent or loop.agent.name, loop.rights.accept_edits)
    agent, accept = steps[(steps.index(current) + 1) % len(steps)] \
        if current in steps else steps[0]
    if agent != current[0]:
        loop.switch_agent(agent)        # (which ends accepting edits)
    if accept or (current[1] and agent == current[0]):
        loop.accept_edits(accept)


def _permissions(ctx: Context, args: list[str]) -> None:
    """The rules in force, folded to a screen; a filter; or a change (docs/repl.md)."""
    sub, rest = (args[0], args[1:]) if args else ("", [])
    width = min(ctx.screen.output.get_size().columns, MAX_WIDTH)
    change = PERMISSION_CHANGES.get(sub)
    if change is not None:
        try:
            change(ctx, rest, width)
        except DmccError as exc:   # wrapped to the terminal: file:line messages can be long
            _said(ctx, str(exc), width, "class:error")
        return
    view = view_of(ctx.world, ctx.loop.rights.gate(), ctx.loop.agent.name,
                   ctx.loop.rt.approvals.session)
    shown = focus_lines(view, " ".join(args), width) if args else summary_lines(view, width)
    for text, style in shown:
        ctx.screen.line(text, style)


def _in_force(ctx: Context) -> None:
    """The session decides with the policy as read again (its subagents follow it)."""
    policy = ctx.world.in_force
    ctx.loop.rt.policy = policy
    ctx.loop.rights.policy = policy


def _read_again(ctx: Context, width: int) -> bool:
    """After the trust changed: the policy read again, in force for the session; a file
    that does not load (edited by hand meanwhile) is said, and the session keeps its rules."""
    try:
        ctx.world.reload_policy()
    except DmccError as exc:
        _said(ctx, f"the policy could not be read again ({exc}): this session keeps the rules "
              "it had until that is fixed", width, "class:error")
        return False
    _in_force(ctx)
    return True


def _add_rule(ctx: Context, args: list[str], width: int) -> None:
    changed = None
    try:
        layer, rule = parse_add(args, {name: display_path(ctx.world.rule_file(name))
                                       for name in LAYERS})
        changed = ctx.world.add_rule(layer, rule)
    except DmccError as exc:
        shown = refused_lines(str(exc), width)
    else:
        shown = changed_lines(changed, width)
    if changed is not None and changed.saved:
        _in_force(ctx)
    else:
        ctx.prefill(" ".join(["/permissions", "add", *args]))   # to correct, not to type again
    for text, style in shown:
        ctx.screen.line(text, style)


def _remove_rule(ctx: Context, args: list[str], width: int) -> None:
    if len(args) != 1 or not args[0].isdigit():
        raise DmccError("usage: /permissions remove N (N: a rule's number in /permissions)")
    changed = ctx.world.remove_rule(int(args[0]))
    _in_force(ctx)
    for text, style in changed_lines(changed, width):
        ctx.screen.line(text, style)


def _revoke(ctx: Context, args: list[str], width: int) -> None:
    if len(args) != 1:
        raise DmccError("usage: /permissions revoke ID (apr_…: saved; s1, s2…: this session)")
    approvals = ctx.loop.rt.approvals
    if args[0].startswith("s"):
        agent, rule = session_approval(approvals.session, args[0])
        approvals.session[agent].remove(rule)
        ctx.screen.line(f"revoked {args[0]}: {rule.permission} {rule.pattern!r} (agent {agent}, "
                        "this session)")
        return
    gone = ctx.world.approvals.revoke(args[0])
    approvals.reload()
    ctx.screen.line(f"revoked {gone.id}: {gone.permission} {gone.pattern!r} (agent {gone.agent})")


def _trust_project(ctx: Context, args: list[str], width: int) -> None:
    world = ctx.world
    if not world.trust.pending:   # none, or all trusted already: nothing to do
        ctx.screen.lines(trusted_lines(world))
        return
    shown = trust_lines(world, width)
    count = world.trust_project(note="trusted with /permissions trust")
    ctx.screen.lines(shown)
    now = _read_again(ctx, width)
    _said(ctx, f"trusted {counted(count, 'file')} of {world.root} as they are now: their rules apply "
          + ("from now on (their agents and settings from the next start)" if now
             else "from the next start"), width)


def _untrust_project(ctx: Context, args: list[str], width: int) -> None:
    world = ctx.world
    count = world.untrust_project()
    now = _read_again(ctx, width)
    _said(ctx, f"forgot {counted(count, 'trusted file')} of {world.root}: their allow rules count for "
          "nothing " + ("from now on (their agents and settings from the next start)" if now
                        else "from the next start") if count
          else f"no file of {world.root} was trusted", width)


def _said(ctx: Context, text: str, width: int, style: str = "") -> None:
    for line, how in said_lines(text, width, style):
        ctx.screen.line(line, how)


def _mcp_trust(ctx: Context, args: list[str], width: int) -> None:
    if len(args) != 2 or args[0] not in ("trust", "untrust"):
        raise DmccError("usage: /permissions mcp trust|untrust NAME")
    world = ctx.world
    if args[0] == "untrust":
        ctx.screen.line(unapproved_line(args[1], world.untrust_server(args[1])))
        ctx.screen.line("(a server this session started runs until dm_cc exits)", "class:dim")
        return
    server = world.trust_server(args[1], note="approved with /permissions mcp trust")
    ctx.screen.lines(approved_lines(server))
    if server.origin != "user":
        ctx.screen.line("(it starts with the next session of dm_cc)", "class:dim")


#: ``/permissions WORD …`` that change something (any other word is a filter).
PERMISSION_CHANGES: dict[str, Callable[[Context, list[str], int], None]] = {
    "add": _add_rule, "remove": _remove_rule, "revoke": _revoke, "trust": _trust_project,
    "untrust": _untrust_project, "mcp": _mcp_trust,
}


def _why(ctx: Context, args: list[str]) -> None:
    if ctx.last_decision is None:
        ctx.screen.line("no tool call has been decided yet in this session", "class:dim")
        return
    call, decision = ctx.last_decision
    ctx.screen.line(f"{decision.action}: {call.name} (agent {ctx.loop.agent.name})", "class:tool")
    ctx.screen.lines(list(trace_lines(decision)))


def _sessions(ctx: Context, args: list[str]) -> None:
    tree = session_tree(ctx.world.sessions.list(ctx.world.root))
    for warning in ctx.world.sessions.take_warnings():   # a damaged index, rebuilt
        ctx.screen.line(f"! {warning}", "class:notice")
    roots = [number for number, (depth, _info) in enumerate(tree) if depth == 0]
    current = ctx.loop.session.info.id
    width = ctx.screen.output.get_size().columns - 1
    shown = tree[roots[-SESSIONS] if len(roots) > SESSIONS else 0:]
    if shown:
        head, *rows = session_table(shown, width, current)
        ctx.screen.line(head, "class:dim")
        ctx.screen.lines(rows)
    if all(info.id != current for _depth, info in tree):   # saved with its first message
        ctx.screen.line(f"this session ({current}) has no message yet", "class:dim")
    ctx.screen.line("resume one with: dm_cc --resume ID", "class:dim")


async def _mcp(ctx: Context, args: list[str]) -> None:
    """The servers as they stand once none is starting any more (they start in the
    background as the session loads: each within its timeout)."""
    if args:
        raise DmccError("usage: /mcp")
    world = ctx.world
    servers = world.start_mcp()   # begun while loading
    if servers is not None:
        with ctx.busy("waiting for MCP servers to start"):
            await servers.started()
    rows = server_rows(world, servers, ctx.loop.rights.gate())
    if rows:
        ctx.screen.line(f"MCP servers; each tool with what {ctx.loop.agent.name} decides for "
                        "a call with no arguments (/permissions shows the rules):", "class:tool")
    ctx.screen.lines(list(server_lines(rows)))


def _trust(ctx: Context, args: list[str]) -> None:
    if args:
        raise DmccError("usage: /trust (it only shows: /permissions trust|untrust change it, "
                        "as `dm_cc trust|untrust` do for the next session)")
    width = min(ctx.screen.output.get_size().columns, MAX_WIDTH)
    ctx.screen.lines(session_lines(ctx.world, width))


def _model(ctx: Context, args: list[str]) -> None:
    if len(args) != 1:
        ctx.screen.line(f"model: {ctx.loop.rt.model.name}  (/model NAME to change)")
        return
    ctx.loop.rt.model = ctx.world.make_model(args[0])
    ctx.screen.line(f"model: {args[0]}")


def _cost(ctx: Context, args: list[str]) -> None:
    ctx.screen.line(usage_line(ctx.loop.usage))


async def _clear(ctx: Context, args: list[str]) -> None:
    loop = await ctx.new_session()
    ctx.screen.line(f"new session {loop.session.info.id} (the old one is kept: /sessions)")


async def _compact(ctx: Context, args: list[str]) -> None:
    with ctx.busy("summarising"):
        try:
            done = await ctx.loop.replies.compact()
        except ModelError as exc:
            ctx.screen.line(f"compaction failed, nothing changed: {exc}", "class:error")
            return
    if done is None:
        ctx.screen.line("nothing to compact: the recent turns are kept whole anyway",
                        "class:dim")


def _context(ctx: Context, args: list[str]) -> None:
    loop, screen = ctx.loop, ctx.screen
    parts = loop.replies.report()
    total = sum(part.tokens for part in parts)
    window = loop.rt.model.context_window
    screen.line(f"context for {loop.agent.name}: about {total} tokens"
                + (f" of {window}" if window else "") + " in the next call "
                "(characters / 4, part by part):", "class:tool")
    for group in dict.fromkeys(part.group for part in parts):
        rows = [part for part in parts if part.group == group]
        screen.line(f"  {group:<24} ~{sum(row.tokens for row in rows):>7} tokens")
        for row in rows:
            if row.left_out:
                screen.line(f"    {row.name:<22} not loaded: {row.left_out}", "class:dim")
            elif group != "messages":
                screen.line(f"    {row.name:<22} ~{row.tokens:>7} tokens  ({row.chars} chars)",
                            "class:dim")
            else:
                screen.line(f"    {row.name} (/compact summarises older turns)", "class:dim")
    screen.line(f"  {'total':<24} ~{total:>7} tokens")
    if loop.replies.window.measured:    # the provider's count for the last call, and what came since
        screen.line(f"  as the model counted its last call, with what came since: about "
                    f"{loop.replies.tokens()} tokens (what compaction goes by)", "class:dim")


def _tasks(ctx: Context, args: list[str]) -> Awaitable[None] | None:
    if args[:1] == ["cancel"] and len(args) > 1:
        return _cancel_task(ctx, " ".join(args[1:]))
    if args:
        raise DmccError("usage: /tasks [cancel ID|LABEL]")
    running = list(ctx.loop.subagents.running.values())
    if not running:
        ctx.screen.line("no subagent is running", "class:dim")
        return None
    ctx.screen.line("running subagents (/tasks cancel ID|LABEL stops a background one):",
                    "class:tool")
    for work in running:
        how = "background" if work.background else "this turn"
        ctx.screen.line(f"  [{work.label}] {one_line(work.description, 50)} · {work.agent} · "
                        f"{work.seconds:.1f} s, {tools_text(work.tools)} · {how} · "
                        f"{work.task_id}")
    return None


async def _cancel_task(ctx: Context, wanted: str) -> None:
    work = _running_task(ctx, wanted)
    if not work.background:
        raise DmccError(f"[{work.label}] belongs to the running turn: Ctrl-C cancels it")
    await ctx.cancel_background(work.task_id)
    ctx.screen.line(f"cancelled [{work.label}] ({work.task_id}); the model is told with your "
                    "next message")


def _running_task(ctx: Context, wanted: str) -> Running:
    """The running subagent named by its task id, its label (``explore #2``) or its
    number (``#2``, ``2``)."""
    number = wanted.lstrip("#")
    for work in ctx.loop.subagents.running.values():
        if wanted in (work.task_id, work.label) or work.label.endswith(f" #{number}"):
            return work
    raise DmccError(f"no running subagent {wanted!r} (/tasks lists them)")


def _undo(ctx: Context, args: list[str]) -> None:
    store = ctx.loop.rt.undo
    if store is None:
        raise DmccError("this session keeps no undo steps")
    for problem in store.problems(ctx.loop.session.info.id):
        ctx.screen.line(f"! {problem}", "class:notice")
    if args == ["list"]:
        ctx.screen.lines(step_lines(store.steps(ctx.loop.session.info.id)))
        return
    if len(args) > 1 or (args and not args[0].isdigit()):
        raise DmccError("usage: /undo [list|STEP]")
    result = ctx.loop.undo(int(args[0]) if args else None)
    ctx.screen.lines(result_lines(result), "" if result.ok else "class:error")


def _rewind(ctx: Context, args: list[str]) -> None:
    loop = ctx.loop
    typed = [(index, message) for index, message in enumerate(loop.session.messages)
             if message.role == "user" and not message.synthetic]
    if not args:
        steps = loop.rt.undo.steps(loop.session.info.id) if loop.rt.undo is not None else []
        ctx.screen.lines(rewind_lines(typed, steps))
        return
    if len(args) != 1 or not args[0].isdigit() or not 1 <= int(args[0]) <= len(typed):
        raise DmccError("usage: /rewind [N] (N: one of the messages /rewind lists)")
    if loop.subagents.running:
        raise DmccError("subagents are running: wait for them or cancel them (/tasks) first")
    index, message = typed[int(args[0]) - 1]
    removed = len(loop.session.messages) - index
    result = loop.rewind(index)
    if result is not None:
        ctx.screen.lines(result_lines(result), "" if result.ok else "class:error")
        if not result.ok:
            ctx.screen.line("nothing was rewound", "class:error")
            return
    ctx.screen.line(f"rewound to before your message {args[0]}: {counted(removed, 'message')} removed; "
                    "the message is back at the prompt")
    ctx.prefill(message.content)


def _expand(ctx: Context, args: list[str]) -> Awaitable[None]:
    """An output the screen showed cut (its ``… lines hidden (/expand N)`` line), whole,
    in the pager; the last one cut without N."""
    cut = ctx.shown.cut
    if len(args) > 1 or (args and not args[0].lstrip("#").isdigit()):
        raise DmccError("usage: /expand [N] (N: the number on a cut output's line)")
    if not cut:
        raise DmccError("no output was cut on screen in this session: nothing to expand")
    number = int(args[0].lstrip("#")) if args else max(cut)
    if number not in cut:
        raise DmccError(f"no cut output {number}: the last {len(cut)} are kept "
                        f"({min(cut)}-{max(cut)})")
    title, text = cut[number]
    is_diff = any(line.startswith("@@ ") for line in text.splitlines())   # an edit's
    lines = list(diff_lines(text, None)) if is_diff else [[("", line)] for line in text.splitlines()]
    return page(lines, f"output {number}: {one_line(title, 100)}")


def _thinking(ctx: Context, args: list[str]) -> Awaitable[None]:
    return show_thinking(ctx.loop.session.messages)


def _exit(ctx: Context, args: list[str]) -> None:
    raise Exit


COMMANDS: dict[str, Command] = {command.name: command for command in (
    Command("help", "this list", _help),
    Command("agent", "list agents, switch to one, or show what this one may do", _agent,
            "list|switch NAME|capabilities [NAME]", ("list", "switch", "capabilities")),
    Command("plan", "switch to the read-only plan agent", _switch_to("plan")),
    Command("build", "switch to the build agent", _switch_to("build")),
    Command("permissions", "the rules in force, folded; filter them; add, remove, revoke, trust",
            _permissions, "[FILTER|add|remove N|revoke ID|trust|untrust|mcp]",
            ("add", "remove", "revoke", "trust", "untrust", "mcp", "guardrails", "all")),
    Command("why", "the full trace of the last decision", _why),
    Command("tasks", "running subagents; cancel a background one", _tasks,
            "[cancel ID|LABEL]", ("cancel",)),
    Command("sessions", "this project's recent sessions, subagents' under them", _sessions),
    Command("mcp", "MCP servers: trust, status, tools and their decision", _mcp),
    Command("trust", "whether this project's own dm_cc files are trusted", _trust),
    Command("model", "show or change the model", _model, "[NAME]"),
    Command("cost", "tokens and cost so far", _cost),
    Command("context", "what the next model call holds: system prompt (AGENTS.md …), "
            "tools, messages", _context),
    Command("compact", "summarise older turns to free context", _compact),
    Command("undo", "undo the last file step of this session, or back to before STEP",
            _undo, "[list|STEP]", ("list",)),
    Command("rewind", "go back to before one of your messages: conversation and files",
            _rewind, "[N]"),
    Command("expand", "show an output the screen cut, whole (the last one, or N)", _expand,
            "[N]"),
    Command("thinking", "the model's thinking in the last turn, whole (also Ctrl-O)",
            _thinking),
    Command("clear", "start a new session (the old one is kept)", _clear),
    Command("exit", "leave dm_cc (also Ctrl-D)", _exit),
)}


def parse(line: str) -> tuple[Command, list[str]]:
    """The command a ``/…`` line names and its arguments; DmccError for an unknown one."""
    name, *args = line[1:].split()
    command = COMMANDS.get(name)
    if command is None:
        close = [n for n in COMMANDS if n.startswith(name[:2])] if name else []
        hint = f" (did you mean /{close[0]}?)" if close else ""
        raise DmccError(f"unknown command /{name}{hint}; /help lists them")
    return command, args


class SlashCompleter(Completer):
    """Completes command names after ``/`` and a command's first argument."""

    def get_completions(self, document: Document, event: CompleteEvent) -> Iterator[Completion]:
        text = document.text_before_cursor
        if not text.startswith("/") or "\n" in text:
            return
        words = text[1:].split(" ")
        if len(words) == 1:
            for name, command in COMMANDS.items():
                if name.startswith(words[0]):
                    yield Completion("/" + name, start_position=-len(text),
                                     display_meta=command.help)
        elif len(words) == 2 and (named := COMMANDS.get(words[0])) is not None:
            for word in named.words:
                if word.startswith(words[1]):
                    yield Completion(word, start_position=-len(words[1]))
