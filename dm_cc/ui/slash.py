"""Slash commands: an explicit registry, each with its help line and completions.

A line starting with ``/`` is a command, never a message to the model: an unknown
``/word`` is an error shown to the person. ``/help`` lists this registry.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

from dm_cc.errors import DmccError
from dm_cc.llm.base import ModelError
from dm_cc.permissions import Request
from dm_cc.session.store import session_tree
from dm_cc.ui.describe import layer_lines, trace_lines, tree_indent
from dm_cc.ui.headless import one_line, tools_text
from dm_cc.ui.mcp_text import server_lines, server_rows

if TYPE_CHECKING:
    from dm_cc.core.subagents import Running
    from dm_cc.ui.repl import Repl

Handler = Callable[["Repl", list[str]], Awaitable[None] | None]
SESSIONS = 10       # top-level sessions /sessions lists (each with its subagents' below)


@dataclass(frozen=True)
class Command:
    name: str
    help: str
    run: Handler
    usage: str = ""
    words: Callable[[Repl], Iterable[str]] = lambda repl: ()   # completions of the first argument


class Exit(Exception):
    """``/exit``: leave the REPL."""


# ---------------------------------------------------------------------- the commands

def _help(repl: Repl, args: list[str]) -> None:
    repl.screen.line("Commands:", "class:tool")
    for command in COMMANDS.values():
        usage = f"/{command.name}" + (f" {command.usage}" if command.usage else "")
        if len(usage) > 26:
            repl.screen.line(f"  {usage}")
            usage = ""
        repl.screen.line(f"  {usage:<26} {command.help}")
    repl.screen.lines([
        "Keys: Enter sends · Alt-Enter/Esc-Enter/Ctrl-J new line · Shift+Tab next agent · "
        "Ctrl-R search history", "      Ctrl-C cancels a turn (twice at an empty prompt: exit) "
        "· Ctrl-D exits"], "class:dim")


def _agent(repl: Repl, args: list[str]) -> None:
    sub = args[0] if args else "list"
    if sub == "list":
        current = repl.loop.agent.name
        for agent in repl.world.agents.values():
            mark = "*" if agent.name == current else " "
            repl.screen.line(f" {mark} {agent.name:<10} {agent.mode:<9} {agent.description}")
    elif sub == "switch" and len(args) == 2:
        _switch(repl, args[1])
    elif sub == "capabilities":
        _capabilities(repl)
    else:
        raise DmccError("usage: /agent list | switch NAME | capabilities")


def _capabilities(repl: Repl) -> None:
    agent = repl.loop.agent
    gate = repl.loop.rights.gate()
    repl.screen.line(f"agent {agent.name} ({agent.mode}): {agent.description}", "class:agent")
    if agent.prompt:
        summary = " ".join(agent.prompt.split())
        repl.screen.line("  prompt: " + (summary if len(summary) <= 200 else
                                         summary[:200].rsplit(" ", 1)[0] + " …"), "class:dim")
    for tool in repl.loop.rt.tools:
        permission = tool.entry.permission
        if gate.denies_outright(permission):
            action, how = "deny", "not offered to the model"
        else:
            verdict = gate.judge(Request(permission, "*"))
            action, how = verdict.action, verdict.rule.describe()
            specific = sum(1 for ruleset in gate.rulesets for c in ruleset.candidates(permission)
                           if c.rule.pattern != "*")
            if specific:
                how = f"by default: {how}; {specific} more specific rules decide particular " \
                      "inputs (/permissions)"
        repl.screen.line(f"  {action:<5} {tool.name:<11} {how}", f"class:{action}")


def _switch_to(name: str) -> Handler:
    def run(repl: Repl, args: list[str]) -> None:
        _switch(repl, name)
    return run


def _switch(repl: Repl, name: str) -> None:
    if (repl.loop.next_agent or repl.loop.agent.name) == name:
        repl.screen.line(f"already the {name} agent", "class:dim")
        return
    repl.loop.switch_agent(name)


def next_agent(repl: Repl) -> None:
    """Shift+Tab: the next primary agent takes charge."""
    primary = [a.name for a in repl.world.agents.values() if a.mode != "subagent"]
    current = repl.loop.agent.name
    following = primary[(primary.index(current) + 1) % len(primary)] \
        if current in primary else primary[0]
    repl.loop.switch_agent(following)


def _permissions(repl: Repl, args: list[str]) -> None:
    approvals = repl.world.approvals
    if args[:1] == ["revoke"] and len(args) == 2:
        gone = approvals.revoke(args[1])
        repl.loop.rt.approvals.reload()
        repl.screen.line(f"revoked {gone.id}: {gone.permission} {gone.pattern!r} "
                         f"(agent {gone.agent})")
        return
    if args:
        raise DmccError("usage: /permissions [revoke ID]")
    agent = repl.loop.agent.name
    repl.screen.line(f"effective rules for {agent} (last match wins; later layers win):",
                     "class:tool")
    repl.screen.lines(list(layer_lines(repl.loop.rights.gate())))
    saved = approvals.list()
    repl.screen.line("saved approvals (/permissions revoke ID):", "class:tool")
    for item in saved:
        until = time.strftime("%Y-%m-%d %H:%M", time.localtime(item.expires)) \
            if item.expires else "never"
        repl.screen.line(f"  {item.id}  {item.agent:<8} {item.permission} {item.pattern!r}"
                         f"  expires {until}")
    if not saved:
        repl.screen.line("  (none)", "class:dim")
    session = repl.loop.rt.approvals.session.get(agent, [])
    if session:
        repl.screen.line("approved for this session:", "class:tool")
        repl.screen.lines([f"  {r.permission} {r.pattern!r}" for r in session])


def _why(repl: Repl, args: list[str]) -> None:
    if repl.last_decision is None:
        repl.screen.line("no tool call has been decided yet in this session", "class:dim")
        return
    call, decision = repl.last_decision
    repl.screen.line(f"{decision.action}: {call.name} (agent {repl.loop.agent.name})", "class:tool")
    repl.screen.lines(list(trace_lines(decision)))


def _sessions(repl: Repl, args: list[str]) -> None:
    tree = session_tree(repl.world.sessions.list(repl.world.root))
    roots = [number for number, (depth, _info) in enumerate(tree) if depth == 0]
    current = repl.loop.session.info.id
    for depth, info in tree[roots[-SESSIONS] if len(roots) > SESSIONS else 0:]:
        mark = "*" if info.id == current else " "
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(info.updated))
        repl.screen.line(f" {mark} {tree_indent(depth)}{info.id}  {when}  {info.agent:<7} "
                         f"{info.title or '(untitled)'}")
    repl.screen.line("resume one with: dm_cc --resume ID", "class:dim")


def _mcp(repl: Repl, args: list[str]) -> None:
    if args:
        raise DmccError("usage: /mcp")
    world = repl.world
    rows = server_rows(world, world.start_mcp(), repl.loop.rights.gate())  # started while loading
    if rows:
        repl.screen.line(f"MCP servers; each tool with what {repl.loop.agent.name} decides for "
                         "a call with no arguments (/permissions shows the rules):", "class:tool")
    repl.screen.lines(list(server_lines(rows)))


def _model(repl: Repl, args: list[str]) -> None:
    if len(args) != 1:
        repl.screen.line(f"model: {repl.loop.rt.model.name}  (/model NAME to change)")
        return
    repl.loop.rt.model = repl.world.make_model(args[0])
    repl.screen.line(f"model: {args[0]}")


def _cost(repl: Repl, args: list[str]) -> None:
    usage = repl.loop.usage
    repl.screen.line(f"tokens: {usage.prompt_tokens} in, {usage.completion_tokens} out; "
                     f"cost ${usage.cost:.4f}")


async def _clear(repl: Repl, args: list[str]) -> None:
    await repl.new_session()
    repl.screen.line(f"new session {repl.loop.session.info.id} (the old one is kept: /sessions)")


async def _compact(repl: Repl, args: list[str]) -> None:
    with repl.busy("summarising"):
        try:
            done = await repl.loop.compact()
        except ModelError as exc:
            repl.screen.line(f"compaction failed, nothing changed: {exc}", "class:error")
            return
    if done is None:
        repl.screen.line("nothing to compact: the recent turns are kept whole anyway",
                         "class:dim")


def _context(repl: Repl, args: list[str]) -> None:
    from dm_cc.core.prompts import context_report

    loop, screen = repl.loop, repl.screen
    window = loop.rt.model.context_window
    screen.line(f"context for {loop.agent.name}: about {loop.context_tokens()} tokens"
                + (f" of {window}" if window else "") + " in the next call", "class:tool")
    for section in context_report(loop.agent, loop.context()):
        screen.line(f"  {section.name:<16} {section.chars:>7} chars  ~{section.tokens} tokens")
    screen.line("  (the conversation itself: /compact summarises older turns)", "class:dim")


def _tasks(repl: Repl, args: list[str]) -> Awaitable[None] | None:
    if args[:1] == ["cancel"] and len(args) > 1:
        return _cancel_task(repl, " ".join(args[1:]))
    if args:
        raise DmccError("usage: /tasks [cancel ID|LABEL]")
    running = list(repl.loop.subagents.running.values())
    if not running:
        repl.screen.line("no subagent is running", "class:dim")
        return None
    repl.screen.line("running subagents (/tasks cancel ID|LABEL stops a background one):",
                     "class:tool")
    for work in running:
        how = "background" if work.background else "this turn"
        repl.screen.line(f"  [{work.label}] {one_line(work.description, 50)} · {work.agent} · "
                         f"{work.seconds:.1f} s, {tools_text(work.tools)} · {how} · "
                         f"{work.task_id}")
    return None


async def _cancel_task(repl: Repl, wanted: str) -> None:
    work = _running_task(repl, wanted)
    if not work.background:
        raise DmccError(f"[{work.label}] belongs to the running turn: Ctrl-C cancels it")
    await repl.cancel_background(work.task_id)
    repl.screen.line(f"cancelled [{work.label}] ({work.task_id}); the model is told with your "
                     "next message")


def _running_task(repl: Repl, wanted: str) -> Running:
    """The running subagent named by its task id, its label (``explore #2``) or its
    number (``#2``, ``2``)."""
    number = wanted.lstrip("#")
    for work in repl.loop.subagents.running.values():
        if wanted in (work.task_id, work.label) or work.label.endswith(f" #{number}"):
            return work
    raise DmccError(f"no running subagent {wanted!r} (/tasks lists them)")


def _exit(repl: Repl, args: list[str]) -> None:
    raise Exit


def _agent_words(repl: Repl) -> Iterable[str]:
    return ("list", "switch", "capabilities")


COMMANDS: dict[str, Command] = {command.name: command for command in (
    Command("help", "this list", _help),
    Command("agent", "list agents, switch to one, or show what this one may do", _agent,
            "list|switch NAME|capabilities", _agent_words),
    Command("plan", "switch to the read-only plan agent", _switch_to("plan")),
    Command("build", "switch to the build agent", _switch_to("build")),
    Command("permissions", "effective rules with sources, saved approvals (revoke ID)",
            _permissions, "[revoke ID]", lambda repl: ("revoke",)),
    Command("why", "the full trace of the last decision", _why),
    Command("tasks", "running subagents; cancel a background one", _tasks,
            "[cancel ID|LABEL]", lambda repl: ("cancel",)),
    Command("sessions", "this project's recent sessions, subagents' under them", _sessions),
    Command("mcp", "MCP servers: trust, status, tools and their decision", _mcp),
    Command("model", "show or change the model", _model, "[NAME]"),
    Command("cost", "tokens and cost so far", _cost),
    Command("context", "what the system prompt holds (AGENTS.md …)", _context),
    Command("compact", "summarise older turns to free context", _compact),
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

    def __init__(self, repl: Repl) -> None:
        self.repl = repl

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
            for word in named.words(self.repl):
                if word.startswith(words[1]):
                    yield Completion(word, start_position=-len(words[1]))
