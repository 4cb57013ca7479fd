"""``dm_cc`` with no command: the interactive session (a prompt_toolkit REPL).

    run_repl(load_world, agent_hint) -> exit status

The prompt is drawn first; the world (policy files, agents, the session, the
tools) is loaded in a thread right after, and litellm is imported in another
as soon as the session knows its model (``World.open_loop``): the person can type
at once. A message sent before the
world is there waits for it, a spinner saying so (Ctrl-C: not sent, given back to
the prompt). MCP servers start in the background once it is, and notices from
other threads (a server that fails) are shown on the REPL's loop; after Ctrl-D,
nothing is (a world that finishes loading then is closed by its thread). A policy
that fails to load ends the session with its ``file:line`` error before any turn
runs. When the
project's own files (.dm_cc/) are not trusted and trusting them would open
something, the person is asked once, as the world loads, whether to trust them
(``ui/trust_text.py`` says what they would open): a message sent before the
question waits for the answer, and keys typed as it appears are kept for the
prompt, never taken as the answer (``ReplApprover.trust_project``).

Input: Enter sends; Alt-Enter, Esc-Enter or Ctrl-J insert a new line (a paste
stays one message); Up/Down and Ctrl-R search the history (kept in the state
dir); Tab completes slash commands and ``@`` subagent names; Shift+Tab
switches to the next mode (build → accept edits → auto → plan). A message that
starts with ``@explore`` starts that subagent with the rest as its task. Ctrl-C cancels a running turn;
at the prompt it clears the line, and a second one at an empty prompt exits, as
does Ctrl-D.

A running command's last lines (its output as it comes) are under the spinner;
after Ctrl-C what it printed is kept, on screen and for the model.

Subagents: while a turn runs, each running child has a line under the spinner;
their calls are printed indented under them (``ui/render.py``). Background
children outlive the turn: their lines appear above the prompt, the toolbar
counts them, a question of theirs makes the prompt step aside (what was typed is
kept) until it is answered, and on exit they are cancelled.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import signal
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import TYPE_CHECKING, Any

from prompt_toolkit.application import get_app_or_none

from dm_cc import __version__
from dm_cc.agents import mentioned
from dm_cc.config import state_dir
from dm_cc.core import Event, TaskFinished, TaskStarted, ToolDecided, ToolFinished
from dm_cc.errors import DmccError
from dm_cc.llm import ModelError, ReasoningDelta, Retrying, StreamEvent, TextDelta
from dm_cc.ui import slash
from dm_cc.ui.approval_prompt import ReplApprover
from dm_cc.ui.early import give_back, typed_early
from dm_cc.ui.headless import retry_line
from dm_cc.ui.prompt import Loaded, Prompt
from dm_cc.ui.render import Shown, event_lines, progress_line
from dm_cc.ui.screen import TAIL_LINES, Screen, Tail
from dm_cc.ui.transcript import replay, session_notice
from dm_cc.ui.trust_text import MAX_WIDTH, notice_lines, question_lines, untrusted
from dm_cc.ui.usage_text import usage_line

if TYPE_CHECKING:
    from dm_cc.compose import World
    from dm_cc.config import ServerDefinition
    from dm_cc.core import Loop
    from dm_cc.permissions import Decision
    from dm_cc.session import ToolCall

REPLAY_EXCHANGES = 3
WELCOME = "/help lists commands · Shift+Tab switches mode · Ctrl-D exits"
WAITING = "waiting for the session to load, then sending"   # a message sent early
CANCEL_WAIT = 5.0      # seconds a cancelled subagent gets to end before we go on


class Repl:
    """One interactive session: the prompt, the turns, the slash commands."""

    def __init__(self, load_world: Callable[[], World], agent_hint: str | None = None,
                 history_path: str | None = None) -> None:
        self._load_world = load_world
        self.screen = Screen()
        self.shown = Shown()
        self.prompt = Prompt(loaded=lambda: self.loaded, settled=lambda: self.approver.settled(),
                             agent_hint=agent_hint, history_path=history_path)
        self.approver = ReplApprover(self.screen, self.shown, make_room=self.prompt.step_aside)
        self._world: World | None = None
        self._untrusted: frozenset[str] = frozenset()   # the project's files the toolbar marks
        self._untrusted_of: object = None    # the policy they were found in (/permissions trust)
        self._loop: Loop | None = None
        self._ready: asyncio.Future[None] | None = None
        self._ended = False
        self.last_decision: tuple[ToolCall, Decision] | None = None
        self.tails: dict[str, Tail] = {}   # by call id: what a running command printed

    # ------------------------------------------------------------------ the world, once loaded

    @property
    def world(self) -> World:
        assert self._world is not None, "the world is loaded before any command runs"
        return self._world

    @property
    def loop(self) -> Loop:
        assert self._loop is not None, "the world is loaded before any command runs"
        return self._loop

    @property
    def loaded(self) -> Loaded | None:
        """The world and the loop in charge, or None while the world is loading."""
        if self._world is None or self._loop is None:
            return None
        if self._untrusted_of is not self._world.policy:   # read again since: look again
            self._untrusted, self._untrusted_of = untrusted(self._world), self._world.policy
        return Loaded(self._world, self._loop, self._untrusted)

    def _taken_over(self) -> None:
        """The first prompt is drawn: the terminal is the REPL's (``ui/early.py``
        kept Enter as typed until now; lines typed before it kept that are read
        first), and the world starts loading."""
        give_back()
        self.prompt.type_ahead(typed_early())
        self._start_loading()

    def _start_loading(self) -> None:
        """Load the world in a thread; the prompt is already on screen."""
        aio = asyncio.get_running_loop()
        self._ready = aio.create_future()
        here = contextvars.copy_context()   # the app session: where to print, what to redraw

        def ask_trust(server: ServerDefinition, trust: str, changes: list[str]) -> bool:
            """The MCP server's trust question, asked on the REPL's loop."""
            return ask(lambda: self.approver.trust_server(server, trust, changes))

        main = threading.get_ident()

        def post(callback: Callable[..., object], *args: object) -> bool:
            """Run ``callback`` on the REPL's loop; False once the session has ended
            (Ctrl-D while it loaded): nothing is left to show it."""
            try:
                aio.call_soon_threadsafe(callback, *args, context=here)
            except RuntimeError:   # the loop is closed
                return False
            return True

        def on_event(event: Event) -> None:
            """Events come from the REPL's loop, except notices from other threads
            (the world loading, MCP servers starting or failing in the background):
            those are shown on it too."""
            if threading.get_ident() == main:
                self.on_event(event)
            else:
                post(self.on_event, event)

        def ask(question: Callable[[], Awaitable[bool]]) -> bool:
            """A question asked on the REPL's loop; this thread waits for the answer
            (no, when the session has ended)."""
            answer: concurrent.futures.Future[bool] = concurrent.futures.Future()

            def begin() -> None:
                task = asyncio.ensure_future(question())
                task.add_done_callback(lambda done: answer.set_result(
                    not done.cancelled() and done.exception() is None and done.result()))

            return post(begin) and answer.result()

        def load() -> None:
            try:
                world = self._trusted_world(ask)
                loop = world.open_loop(self.approver, on_event=on_event,
                                       on_stream=self.on_stream, wait_background=False,
                                       ask_trust=ask_trust, on_output=self.on_output,
                                       start_servers=True)
                # these try bubblewrap (and the transactions): here, not in the toolbar
                in_charge = world.agent(loop.next_agent or loop.agent.name)
                warnings = tuple(w for w in (world.sandbox.warning(), world.auto_notice(in_charge))
                                 if w)
            except BaseException as exc:  # noqa: BLE001 - handed to the event loop
                post(self._failed, exc)
                return
            if not post(self._loaded, world, loop, warnings):
                world.close()   # the session ended while it loaded: stop what it started

        threading.Thread(target=load, name="dm_cc-load", daemon=True).start()

    def _trusted_world(self, ask: Callable[[Callable[[], Awaitable[bool]]], bool]) -> World:
        """The world, once the person has said whether they trust what the project's own
        files say now (asked only when there is something new or changed to trust)."""
        world = self._load_world()
        if not world.asks_trust():
            return world
        trusted = ask(lambda: self.approver.trust_project(
            lambda width: question_lines(world, width)))
        try:
            world.answer_trust(trusted)
        except DmccError as exc:
            self.screen.line(f"! the answer was not saved: {exc}", "class:notice")
        return self._load_world() if trusted else world   # read again: now they count

    def _loaded(self, world: World, loop: Loop, warnings: tuple[str, ...] = ()) -> None:
        """The world is here: say where the session is, and, once, that shell
        commands will not be confined, or that auto mode is not in effect (``warnings``)."""
        if self._ended:   # Ctrl-D came first: nobody will use it
            threading.Thread(target=world.close, name="dm_cc-close", daemon=True).start()
            return
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
        for said in (*world.root_warnings, *session.warnings, *warnings):
            self.screen.line(f"! {said}", "class:notice")
        self._untrusted = untrusted(world)   # none: trusting would change nothing, not a word
        self._untrusted_of = world.policy
        width = min(self.screen.output.get_size().columns, MAX_WIDTH)
        self.screen.lines(notice_lines(world, width), "class:notice")
        loop.rights.gate()  # compile the rules now, and report saved approvals that cannot be read
        assert self._ready is not None
        self._ready.set_result(None)
        self._invalidate()

    def _failed(self, exc: BaseException) -> None:
        assert self._ready is not None
        if self._ended:
            return
        self._ready.set_exception(exc)
        self._ready.exception()   # reported here or by ready(): never "never retrieved"
        app = get_app_or_none()
        if app is not None and app.is_running and not app.future.done():  # type: ignore[union-attr]
            app.exit(exception=exc)

    async def ready(self) -> None:
        assert self._ready is not None
        await asyncio.shield(self._ready)

    async def _when_ready(self, text: str) -> bool:
        """Wait for the world before the first message is handled, saying so under it
        (a spinner) when it is not there yet. Ctrl-C while waiting: the message is not
        sent, and goes back to the prompt. False if it was not sent."""
        assert self._ready is not None
        if self._ready.done():
            self._ready.result()    # a world that failed to load raises here
            return True
        waiting = asyncio.ensure_future(self.ready())
        try:
            with self.busy(WAITING), _sigint_cancels(waiting):
                await waiting
        except asyncio.CancelledError:
            if not waiting.cancelled():
                raise
            self.screen.line("not sent: the session was still loading", "class:notice")
            self.prompt.prefill(text)
            return False
        return True

    async def new_session(self) -> Loop:
        """A fresh session with the same model, agent and session approvals (the old
        one's background subagents are cancelled: their results would reach no one);
        its loop is in charge from now on."""
        await self.cancel_background()
        old = self.loop
        loop = self._loop = self.world.open_loop(self.approver, on_event=self.on_event,
                                                 on_stream=self.on_stream, fresh=True,
                                                 wait_background=False,
                                                 on_output=self.on_output)
        loop.rt.model = old.rt.model   # the approvals are the World's, shared
        loop.next_agent = old.agent.name
        loop.rights.accept_edits = old.rights.accept_edits
        return loop

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
        if isinstance(event, TaskStarted | TaskFinished):
            if isinstance(event, TaskFinished) and event.background \
                    and self.screen.busy_since is None and event.status != "cancelled":
                self.screen.line("  its result reaches the model with your next message",
                                 "class:dim")
            self._invalidate()   # the toolbar counts running subagents

    def on_output(self, call: ToolCall, text: str | None) -> None:
        """What a running call prints: its last lines go under the spinner until it
        ends (None)."""
        if text is None:
            self.tails.pop(call.id, None)
        else:
            self.tails.setdefault(call.id, Tail()).add(text)

    def on_stream(self, event: StreamEvent) -> None:
        if isinstance(event, TextDelta):
            self.screen.stream(event.text)
        elif isinstance(event, ReasoningDelta):   # under the spinner, then folded
            self.screen.think(event.text)
        elif isinstance(event, Retrying):   # a notice, and the spinner counts down to it
            self.screen.line(f"! {retry_line(event)}", "class:notice")
            self.screen.wait(event.reason, event.delay)

    def _invalidate(self) -> None:
        app = get_app_or_none()
        if app is not None and app.is_running:
            app.invalidate()

    # ------------------------------------------------------------------ running

    async def run(self) -> int:
        try:
            return await self._run()
        finally:
            self._ended = True   # a world that loads from now on is closed by its thread
            if self._world is not None:  # its MCP servers and network proxy stop with it
                await asyncio.to_thread(self._world.close)

    async def _run(self) -> int:
        interrupted = False
        first = True
        while True:
            try:
                text = await self.prompt.read(self._taken_over if first else None)
            except KeyboardInterrupt:
                if interrupted:
                    return await self._goodbye()
                interrupted = True
                self.screen.line("(Ctrl-C again or Ctrl-D to exit)", "class:dim")
                continue
            except EOFError:
                return await self._goodbye()
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
                if not await self._when_ready(text):
                    continue
            except DmccError as exc:
                self.screen.line(f"dm_cc: {exc}", "class:error")
                return 2
            try:
                if text.startswith("/"):
                    await self._command(text)
                else:
                    await self._turn(text)
            except slash.Exit:
                return await self._goodbye()

    async def _command(self, line: str) -> None:
        try:
            command, args = slash.parse(line)
            context = slash.Context(self.screen, self.world, self.loop, self.last_decision,
                                    self.new_session, self.cancel_background, self.busy,
                                    self.prompt.prefill, shown=self.shown)
            result = command.run(context, args)
            if result is not None:
                await result
        except DmccError as exc:
            self.screen.line(str(exc), "class:error")

    async def _turn(self, text: str) -> None:
        screen = self.screen
        try:    # `@explore find …`: the person starts that subagent (agents.mentioned)
            named = mentioned(self.loop.rt.agents, text)
        except DmccError as exc:
            screen.line(str(exc), "class:error")
            return
        task = asyncio.ensure_future(self.loop.run(text, task=named))
        try:
            with self.busy("thinking"), _sigint_cancels(task):
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
        if result.reason == "cancelled":
            screen.line("turn cancelled", "class:notice")
        elif result.reason == "rejected":
            screen.line("stopped: you said no (tell me what to do instead)", "class:notice")
        elif result.reason != "done":
            screen.line(f"({result.reason}) {result.text}", "class:notice")
        elif not screen.at_line_start:
            screen.line()

    @contextlib.contextmanager
    def busy(self, activity: str) -> Iterator[None]:
        """The spinner, and a line per running subagent under it, while this lasts."""
        screen = self.screen
        screen.busy_since, screen.activity = time.monotonic(), activity
        spinner = asyncio.ensure_future(self._spin())
        try:
            yield
        finally:
            spinner.cancel()
            self.tails.clear()
            screen.busy_since = None
            screen.clear_status()
            screen.fold()       # a reply that only thought

    async def _spin(self) -> None:
        while True:
            running = self._loop.subagents.running.values() if self._loop is not None else ()
            self.screen.tick(time.monotonic(), [*(progress_line(work) for work in running),
                                                *self._tail_lines()])
            await asyncio.sleep(0.1)

    def _tail_lines(self) -> list[str]:
        """The last lines of each running command (fewer each when several run)."""
        count = TAIL_LINES if len(self.tails) <= 1 else 2
        return [f"  │ {line}" for tail in self.tails.values() for line in tail.lines(count)]

    async def cancel_background(self, task_id: str | None = None) -> None:
        """Cancel this loop's background subagents (or the one ``task_id``) and wait
        for them to end: their done lines come first."""
        subagents = self.loop.subagents
        jobs = [work.job for work in subagents.running.values() if work.job is not None
                and task_id in (None, work.task_id)]
        if task_id is None:
            subagents.cancel_all()
        else:
            subagents.cancel(task_id)
        if jobs:
            await asyncio.wait(jobs, timeout=CANCEL_WAIT)

    async def _goodbye(self) -> int:
        if self._loop is not None:
            await self.cancel_background()
            usage, session = self.loop.usage, self.loop.session
            kept = f"resume with dm_cc --resume {session.info.id}" if session.messages \
                else "no message, so the session is not kept"   # saved with its first one
            self.screen.line(f"{usage_line(usage)} · {kept}", "class:dim")
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
    history = state_dir() / "history"
    with contextlib.suppress(OSError):
        history.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    if handover:   # the prompt is drawn again where the early one was (now: prompt_toolkit
        sys.stdout.write("\r")    # writes to the bytes underneath, ahead of a pending \r)
        sys.stdout.flush()
    return asyncio.run(Repl(load_world, agent_hint, str(history)).run())
