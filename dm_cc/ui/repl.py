"""``dm_cc`` with no command: the interactive session (a prompt_toolkit REPL).

    run_repl(load_world, agent_hint) -> exit status

The prompt is drawn first; the world (policy files, agents, the session, the
tools) is loaded in a thread right after, and litellm is imported in the
background once it is: the person can type at once. A policy that fails to load
ends the session with its ``file:line`` error before any turn runs.

Input: Enter sends; Alt-Enter, Esc-Enter or Ctrl-J insert a new line (a paste
stays one message); Up/Down and Ctrl-R search the history (kept in the state
dir); Tab completes slash commands; Shift+Tab switches to the next primary
agent (a synthetic message, as plan_enter does). Ctrl-C cancels a running turn;
at the prompt it clears the line, and a second one at an empty prompt exits, as
does Ctrl-D.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from prompt_toolkit import PromptSession
from prompt_toolkit.application import get_app_or_none
from prompt_toolkit.formatted_text import FormattedText
from prompt_toolkit.history import FileHistory, InMemoryHistory
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.key_binding.key_processor import KeyPressEvent

from dm_cc import __version__
from dm_cc.config import dirs
from dm_cc.core.events import Event, ToolDecided, ToolFinished
from dm_cc.errors import DmccError
from dm_cc.llm.base import ModelError, StreamEvent, TextDelta, WarmsUp
from dm_cc.ui import slash
from dm_cc.ui.approval_prompt import ReplApprover
from dm_cc.ui.render import Shown, event_lines
from dm_cc.ui.screen import STYLE, Screen
from dm_cc.ui.transcript import replay, session_notice

if TYPE_CHECKING:
    from dm_cc.compose import World
    from dm_cc.core.loop import Loop
    from dm_cc.permissions import Decision
    from dm_cc.session.messages import ToolCall

REPLAY_EXCHANGES = 3
WELCOME = "/help lists commands · Shift+Tab switches agent · Ctrl-D exits"


class Repl:
    """One interactive session: the prompt, the turns, the slash commands."""

    def __init__(self, load_world: Callable[[], World], agent_hint: str | None = None,
                 history_path: str | None = None) -> None:
        self._load_world = load_world
        self._agent_hint = agent_hint
        self._history_path = history_path
        self.screen = Screen()
        self.shown = Shown()
        self.approver = ReplApprover(self.screen, self.shown)
        self._world: World | None = None
        self._loop: Loop | None = None
        self._ready: asyncio.Future[None] | None = None
        self.last_decision: tuple[ToolCall, Decision] | None = None
        self._prompt: PromptSession[str] | None = None

    # ------------------------------------------------------------------ the world, once loaded

    @property
    def world(self) -> World:
        assert self._world is not None, "the world is loaded before any command runs"
        return self._world

    @property
    def loop(self) -> Loop:
        assert self._loop is not None, "the world is loaded before any command runs"
        return self._loop

    def _start_loading(self) -> None:
        """Load the world in a thread; the prompt is already on screen."""
        aio = asyncio.get_running_loop()
        self._ready = aio.create_future()
        here = contextvars.copy_context()   # the app session: where to print, what to redraw

        def load() -> None:
            try:
                world = self._load_world()
                loop = world.open_loop(self.approver, on_event=self.on_event,
                                       on_stream=self.on_stream, wait_background=False)
            except BaseException as exc:  # noqa: BLE001 - handed to the event loop
                aio.call_soon_threadsafe(self._failed, exc, context=here)
                return
            aio.call_soon_threadsafe(self._loaded, world, loop, context=here)

        threading.Thread(target=load, name="dm_cc-load", daemon=True).start()

    def _loaded(self, world: World, loop: Loop) -> None:
        self._world, self._loop = world, loop
        session = loop.session
        self.screen.line(f"dm_cc {__version__} · session {session.info.id} · {world.root}",
                         "class:dim")
        self.screen.line(f"{WELCOME}", "class:dim")
        notice = session_notice(session, world.root, continue_last=world.options.continue_last,
                                resume=world.options.resume)
        if notice:
            self.screen.line(notice, "class:notice")
        if session.messages:
            self.screen.lines(replay(session.messages, last=REPLAY_EXCHANGES), "class:dim")
        for warning in session.warnings:
            self.screen.line(f"! {warning}", "class:notice")
        loop.gate()  # compile the rules now, and report saved approvals that cannot be read
        model = loop.rt.model
        if isinstance(model, WarmsUp):
            threading.Thread(target=model.warm_up, name="dm_cc-warm-up", daemon=True).start()
        assert self._ready is not None
        self._ready.set_result(None)
        self._invalidate()

    def _failed(self, exc: BaseException) -> None:
        assert self._ready is not None
        self._ready.set_exception(exc)
        self._ready.exception()   # reported here or by ready(): never "never retrieved"
        app = get_app_or_none()
        if app is not None and app.is_running and not app.future.done():  # type: ignore[union-attr]
            app.exit(exception=exc)

    async def ready(self) -> None:
        assert self._ready is not None
        await asyncio.shield(self._ready)

    def new_session(self) -> None:
        """A fresh session with the same model, agent and session approvals."""
        old = self.loop
        self._loop = self.world.open_loop(self.approver, on_event=self.on_event,
                                          on_stream=self.on_stream, fresh=True,
                                          wait_background=False)
        self._loop.rt.model, self._loop.rt.approvals = old.rt.model, old.rt.approvals
        self._loop.next_agent = old.agent.name

    # ------------------------------------------------------------------ what the core tells us

    def on_event(self, event: Event) -> None:
        if isinstance(event, ToolDecided):
            self.last_decision = (event.call, event.decision)
            if event.decision.action == "allow":
                self.screen.activity = f"running {event.call.name}"
        elif isinstance(event, ToolFinished):
            self.screen.activity = "thinking"
        for line in event_lines(event, self.shown):
            self.screen.line(line)

    def on_stream(self, event: StreamEvent) -> None:
        if isinstance(event, TextDelta):
            self.screen.stream(event.text)

    # ------------------------------------------------------------------ the prompt

    def _message(self) -> FormattedText:
        name = self._loop.agent.name if self._loop is not None else self._agent_hint or "dm_cc"
        return FormattedText([("class:agent", name), ("", "> ")])

    def _toolbar(self) -> FormattedText:
        if self._loop is None:
            return FormattedText([("", " loading policy and session…")])
        loop, world = self._loop, self.world
        files = [str(f.path) for f in world.policy.files]
        policy = ", ".join(files[:2]) + (f" +{len(files) - 2}" if len(files) > 2 else "") \
            if files else "built-in defaults"
        usage = loop.usage
        return FormattedText([("", f" {loop.agent.name} · {loop.rt.model.name} · policy: {policy}"
                                   f" · sandbox: none · {usage.prompt_tokens + usage.completion_tokens}"
                                   f" tokens · ${usage.cost:.4f} · /help")])

    def _invalidate(self) -> None:
        app = get_app_or_none()
        if app is not None and app.is_running:
            app.invalidate()

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

        @keys.add("c-c")
        def interrupt(event: KeyPressEvent) -> None:
            if event.current_buffer.text:
                event.current_buffer.reset()
            else:
                event.app.exit(exception=KeyboardInterrupt())

        @keys.add("s-tab")
        def next_agent(event: KeyPressEvent) -> None:
            if self._loop is None:
                return
            primary = [a.name for a in self.world.agents.values() if a.mode != "subagent"]
            current = self.loop.agent.name
            following = primary[(primary.index(current) + 1) % len(primary)] \
                if current in primary else primary[0]
            self.loop.switch_agent(following)
            event.app.invalidate()

        return keys

    def _session(self) -> PromptSession[str]:
        history = FileHistory(self._history_path) if self._history_path else InMemoryHistory()
        return PromptSession(
            history=history, multiline=True, key_bindings=self._keys(),
            bottom_toolbar=self._toolbar, completer=slash.SlashCompleter(self),
            complete_while_typing=True, style=STYLE, prompt_continuation="… ",
            enable_history_search=False)

    # ------------------------------------------------------------------ running

    async def run(self) -> int:
        self._prompt = self._session()
        interrupted = False
        first = True
        while True:
            try:
                text = await self._prompt.prompt_async(
                    self._message, pre_run=self._start_loading if first else None)
            except KeyboardInterrupt:
                if interrupted:
                    return self._goodbye()
                interrupted = True
                self.screen.line("(Ctrl-C again or Ctrl-D to exit)", "class:dim")
                continue
            except EOFError:
                return self._goodbye()
            except DmccError as exc:   # the world failed to load
                self.screen.line(f"dm_cc: {exc}", "class:error")
                return 2
            finally:
                first = False
            interrupted = False
            text = text.strip()
            if not text:
                continue
            try:
                await self.ready()
            except DmccError as exc:
                self.screen.line(f"dm_cc: {exc}", "class:error")
                return 2
            try:
                if text.startswith("/"):
                    await self._command(text)
                else:
                    await self._turn(text)
            except slash.Exit:
                return self._goodbye()

    async def _command(self, line: str) -> None:
        try:
            command, args = slash.parse(line)
            result = command.run(self, args)
            if result is not None:
                await result
        except DmccError as exc:
            self.screen.line(str(exc), "class:error")

    async def _turn(self, text: str) -> None:
        screen = self.screen
        screen.busy_since, screen.activity = time.monotonic(), "thinking"
        task = asyncio.ensure_future(self.loop.run(text))
        spinner = asyncio.ensure_future(self._spin())
        try:
            with _sigint_cancels(task):
                result = await task
        except asyncio.CancelledError:
            if not task.cancelled():
                raise
            screen.line("turn cancelled", "class:notice")
            return
        except ModelError as exc:
            screen.line(f"model error: {exc}", "class:error")
            return
        except DmccError as exc:
            screen.line(str(exc), "class:error")
            return
        finally:
            spinner.cancel()
            screen.busy_since = None
            screen.clear_status()
        if result.reason == "cancelled":
            screen.line("turn cancelled", "class:notice")
        elif result.reason == "rejected":
            screen.line("stopped: you said no (tell me what to do instead)", "class:notice")
        elif result.reason != "done":
            screen.line(f"({result.reason}) {result.text}", "class:notice")
        elif not screen.at_line_start:
            screen.line()

    async def _spin(self) -> None:
        while True:
            self.screen.tick(time.monotonic())
            await asyncio.sleep(0.1)

    async def compact(self) -> None:
        self.screen.busy_since, self.screen.activity = time.monotonic(), "summarising"
        spinner = asyncio.ensure_future(self._spin())
        try:
            done = await self.loop.compact()
        except ModelError as exc:
            self.screen.line(f"compaction failed, nothing changed: {exc}", "class:error")
            return
        finally:
            spinner.cancel()
            self.screen.busy_since = None
            self.screen.clear_status()
        if done is None:
            self.screen.line("nothing to compact: the recent turns are kept whole anyway",
                             "class:dim")

    def show_context(self) -> None:
        from dm_cc.core.prompts import context_report

        loop = self.loop
        window = loop.rt.model.context_window
        self.screen.line(f"context for {loop.agent.name}: about {loop.context_tokens()} tokens"
                         + (f" of {window}" if window else "") + " in the next call", "class:tool")
        for section in context_report(loop.agent, loop.context()):
            self.screen.line(f"  {section.name:<16} {section.chars:>7} chars  "
                             f"~{section.tokens} tokens")
        self.screen.line("  (the conversation itself: /compact summarises older turns)",
                         "class:dim")

    def _goodbye(self) -> int:
        if self._loop is not None:
            usage = self.loop.usage
            self.screen.line(f"tokens: {usage.prompt_tokens} in, {usage.completion_tokens} out; "
                             f"cost ${usage.cost:.4f} · resume with dm_cc --resume "
                             f"{self.loop.session.info.id}", "class:dim")
        return 0


@contextlib.contextmanager
def _sigint_cancels(task: asyncio.Future[Any]) -> Iterator[None]:
    """While a turn runs the terminal is not in raw mode: Ctrl-C is SIGINT, and it
    cancels the turn (not the process)."""
    aio = asyncio.get_running_loop()
    try:
        aio.add_signal_handler(signal.SIGINT, task.cancel)
    except (ValueError, RuntimeError, NotImplementedError):  # not the main thread
        yield
        return
    try:
        yield
    finally:
        aio.remove_signal_handler(signal.SIGINT)


def run_repl(load_world: Callable[[], World], agent_hint: str | None = None, *,
             handover: bool = False) -> int:
    """The interactive session until /exit, Ctrl-D or a second Ctrl-C. ``handover``:
    :func:`dm_cc.ui.early.early_prompt` drew the first prompt; draw over its line."""
    history = dirs.state_dir() / "history"
    with contextlib.suppress(OSError):
        history.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    if handover:
        sys.stdout.write("\r")    # the prompt is drawn again where the early one was
    return asyncio.run(Repl(load_world, agent_hint, str(history)).run())
