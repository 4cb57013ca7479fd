"""The REPL's input line: the prompt (the agent in charge), its keys, Tab
completion of slash commands and ``@`` subagent names, history, and the bottom
toolbar (the agent -- in auto mode, whether that is in effect; whether it accepts
edits --, running subagents, the model, the sandbox's state, the policy files -- a
project's file that is not trusted, and would open something if it were, says so
--, tokens and cost).

    prompt = Prompt(loaded, settled, agent_hint, history_path)
    text = await prompt.read(pre_run)      # KeyboardInterrupt / EOFError as typed
    typed = await prompt.step_aside()      # a question needs the terminal now

What it shows it reads, each time it draws, from ``loaded()``: the world and the
loop in charge (:class:`Loaded`), None while the world loads (then the agent
asked for, ``agent_hint``, names the prompt). ``settled()`` waits until no
question is open or queued.

Keys: Enter sends (or takes the highlighted completion); Alt-Enter, Esc-Enter or
Ctrl-J insert a new line; Ctrl-C clears the line (at an empty one it raises
KeyboardInterrupt); Shift+Tab switches to the next mode (``slash.modes``: build →
build accepting edits → auto → plan → …; the toolbar says ``accept edits``). A large
paste (bracketed paste) shows as a placeholder and is sent whole (``pastes.py``).
Ctrl-O shows the model's last thinking in the pager (the prompt steps aside for it,
keeping its text, as for a question).

A background subagent may ask while the person is typing: ``step_aside`` ends the
prompt, keeping its text, and ``read`` draws it again, with that text, once no
question is open or queued.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from typing import TYPE_CHECKING, NamedTuple

from prompt_toolkit import PromptSession
from prompt_toolkit.application import get_app_or_none
from prompt_toolkit.completion import CompleteEvent, Completer, Completion, merge_completers
from prompt_toolkit.document import Document
from prompt_toolkit.formatted_text import FormattedText
from prompt_toolkit.history import FileHistory, InMemoryHistory
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.key_binding.key_processor import KeyPress, KeyPressEvent
from prompt_toolkit.keys import Keys
from prompt_toolkit.utils import get_cwidth

from dm_cc.ui import slash
from dm_cc.ui.pastes import Pastes
from dm_cc.ui.screen import STYLE, fit
from dm_cc.ui.thinking import show_thinking
from dm_cc.ui.usage_text import count

if TYPE_CHECKING:
    from dm_cc.agents import Agent
    from dm_cc.compose import World
    from dm_cc.core import Loop


class Loaded(NamedTuple):
    """The session the prompt reads for, once its world is loaded."""

    world: World
    loop: Loop                  # the loop in charge
    untrusted: frozenset[str] = frozenset()   # project files trusting would open something by


def _mode(world: World, agent: Agent) -> str:
    """The agent in charge, and whether auto mode is in effect for it: ``auto · effects
    judged``, ``auto (not in effect: why)``; ``build · auto rules, effects judged`` when
    files' ``auto:`` rules apply to another agent."""
    why = world.auto_mode(agent)
    if why is None:
        return agent.name
    rules = "" if agent.auto else "auto rules"
    if world.transactional:
        return f"{agent.name} · {rules + ', ' if rules else ''}effects judged"
    return f"{agent.name} ({rules + ' ' if rules else ''}not in effect: {why})"


class Mentions(Completer):
    """``@`` at the start of a message completes to the subagents' names: ``@explore
    find …`` starts that subagent (``agents.mentioned``)."""

    def __init__(self, loaded: Callable[[], Loaded | None]) -> None:
        self._loaded = loaded

    def get_completions(self, document: Document, event: CompleteEvent) -> Iterator[Completion]:
        text = document.text_before_cursor
        loaded = self._loaded()
        if not text.startswith("@") or any(c.isspace() for c in text) or loaded is None:
            return
        for agent in loaded.world.agents.values():
            if agent.mode != "primary" and agent.name.startswith(text[1:]):
                yield Completion(f"@{agent.name} ", start_position=-len(text),
                                 display=f"@{agent.name}", display_meta=agent.description)


def fit_toolbar(parts: list[tuple[str, float]], width: int) -> str:
    """The toolbar's parts (``text, rank``) joined by `` · `` in one line narrower than
    ``width`` cells: the parts of the highest rank left out first, then the line cut."""
    ranks = sorted({rank for _, rank in parts}, reverse=True)
    for cut in ranks:
        line = " · ".join(text for text, rank in parts if rank <= cut)
        if get_cwidth(line) < width or cut == ranks[-1]:
            break
    return fit(line, width - 1)


class _StepAside(Exception):
    """The prompt leaves the terminal to a question."""


class _Show(Exception):
    """The prompt leaves the terminal to a full-screen view (Ctrl-O), then comes back."""

    def __init__(self, view: Callable[[], Awaitable[None]]) -> None:
        super().__init__()
        self.view = view


class Prompt:
    """The REPL's input line (see the module docstring)."""

    def __init__(self, loaded: Callable[[], Loaded | None], settled: Callable[[], Awaitable[None]],
                 agent_hint: str | None = None, history_path: str | None = None) -> None:
        self._loaded = loaded
        self._settled = settled
        self._agent_hint = agent_hint
        self._history_path = history_path
        self._session: PromptSession[str] | None = None
        self._kept = ""                      # what was typed when a question came
        self._aside = asyncio.Event()        # the prompt has stepped aside
        self._pastes = Pastes()              # large pastes, by their placeholders

    async def read(self, pre_run: Callable[[], None] | None = None) -> str:
        """The next line the person sends; ``pre_run`` runs once it is drawn."""
        session = self._session = self._session or self._new_session()
        while True:
            await self._settled()   # never under an open question
            default, self._kept = self._kept, ""
            try:
                return self._pastes.expand(await session.prompt_async(
                    self._message, default=default, pre_run=pre_run))
            except _StepAside:
                self._aside.set()
                await self._settled()
                self._aside.clear()
                pre_run = None
            except _Show as show:
                session.app.erase_when_done = False
                await show.view()
                pre_run = None

    def type_ahead(self, text: str) -> None:
        """Keys typed before the REPL could read any (``ui/early.py``): the first the
        prompt being drawn reads, before those still in the terminal's queue (from
        its ``pre_run``)."""
        if not text or self._session is None:
            return
        from prompt_toolkit.input.typeahead import store_typeahead
        from prompt_toolkit.input.vt100_parser import Vt100Parser

        keys: list[KeyPress] = []
        parser = Vt100Parser(keys.append)
        parser.feed(text)
        parser.flush()
        store_typeahead(self._session.app.input, keys)

    def prefill(self, text: str) -> None:
        """Start the next prompt with ``text`` (``/rewind`` gives the message back)."""
        self._kept = text

    async def step_aside(self) -> str:
        """Make room for a question: a prompt on screen is erased, keeping its text
        (returned: what the person was typing), and drawn again when no question is
        left (``read``)."""
        app = self._session.app if self._session is not None else None
        if app is None or not app.is_running or app.future is None or app.future.done():
            return ""
        kept = self._kept = app.current_buffer.text
        app.erase_when_done = True     # the question takes its place on screen
        app.exit(exception=_StepAside())
        await self._aside.wait()
        app.erase_when_done = False
        return kept

    def _new_session(self) -> PromptSession[str]:
        history = FileHistory(self._history_path) if self._history_path else InMemoryHistory()
        return PromptSession(
            history=history, multiline=True, key_bindings=self._keys(),
            bottom_toolbar=self._toolbar,
            completer=merge_completers([slash.SlashCompleter(), Mentions(self._loaded)]),
            complete_while_typing=True, style=STYLE, prompt_continuation="… ",
            enable_history_search=False)

    def _message(self) -> FormattedText:
        loaded = self._loaded()
        name = loaded.loop.agent.name if loaded is not None else self._agent_hint or "dm_cc"
        return FormattedText([("class:agent", name), ("", "> ")])

    def _toolbar(self) -> FormattedText:
        loaded = self._loaded()
        if loaded is None:
            return FormattedText([("", " loading policy and session…")])
        world, loop, untrusted = loaded
        files = [str(f.path) + (" (not trusted: /trust)" if f.location in untrusted else "")
                 for f in world.policy.files]
        policy = ", ".join(files[:2]) + (f" +{len(files) - 2}" if len(files) > 2 else "") \
            if files else "built-in defaults"
        usage = loop.usage
        running = len(loop.subagents.running)
        tasks = f" · {running} task{'' if running == 1 else 's'} running (/tasks)" if running else ""
        tasks = (" · accept edits" if loop.rights.accept_edits else "") + tasks
        sandbox = world.sandbox.state()   # bubblewrap was tried while loading
        app = get_app_or_none()
        width = app.output.get_size().columns if app is not None else 200
        # (text, rank): on a narrow terminal the highest ranks go first; what the
        # session may do, what it cost and where its commands run stay longest, an
        # untrusted policy file is said before what it cost
        return FormattedText([("", fit_toolbar([
            (f" {_mode(world, loop.agent)}{tasks}", 0),
            (loop.rt.model.name, 5), (f"sandbox: {sandbox}", 3),
            (f"policy: {policy}", 1 if "(not trusted" in policy else 4),
            (f"{count(usage.prompt_tokens + usage.completion_tokens)} tokens", 2),
            *([(f"{count(usage.cache_read_tokens)} cached", 3.5)] if usage.cache_read_tokens
              else []),     # read from the prompt cache: left out before the sandbox
            (f"${usage.cost:.4f}", 2), ("/help", 6)], width))])

    def _keys(self) -> KeyBindings:
        keys = KeyBindings()

        @keys.add("enter")
        def send(event: KeyPressEvent) -> None:
            buffer = event.current_buffer
            state = buffer.complete_state
            if state is not None and state.current_completion is not None:
                buffer.apply_completion(state.current_completion)
                return
            buffer.validate_and_handle()

        @keys.add("escape", "enter")
        @keys.add("c-j")
        def newline(event: KeyPressEvent) -> None:
            event.current_buffer.insert_text("\n")

        @keys.add(Keys.BracketedPaste)
        def paste(event: KeyPressEvent) -> None:
            text = event.data.replace("\r\n", "\n").replace("\r", "\n")  # as prompt_toolkit's own
            event.current_buffer.insert_text(self._pastes.shown(text))

        @keys.add("c-c")
        def interrupt(event: KeyPressEvent) -> None:
            if event.current_buffer.text:
                event.current_buffer.reset()
            else:
                event.app.exit(exception=KeyboardInterrupt())

        @keys.add("c-o")
        def thinking(event: KeyPressEvent) -> None:
            loaded = self._loaded()
            if loaded is not None:
                self._kept = event.current_buffer.text
                event.app.erase_when_done = True
                event.app.exit(exception=_Show(
                    lambda: show_thinking(loaded.loop.session.messages)))

        @keys.add("s-tab")
        def next_agent(event: KeyPressEvent) -> None:
            loaded = self._loaded()
            if loaded is not None:
                slash.next_agent(loaded.world, loaded.loop)
                event.app.invalidate()

        return keys
