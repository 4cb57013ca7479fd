"""What a command did, judged before it lands: the changes of a transaction.

    landed, stops = await land(settle, judged, ctx, output, approved=True)

A confined command ran against a copy-on-write view of the project
(:mod:`dm_cc.sandbox.transaction`). Its changes become requests of the same gate:
``edit PATH`` for a file or directory created or changed (a mode too), ``delete
PATH`` for one removed; a protected path's request says why it is protected --
but the data git writes as it works (objects, refs, the index) is not a protected
change. Each change is then:

* **applied** when its requests are allowed; when an ``edit`` asks only because of
  a rule that names nothing in particular (``* *``, ``edit **``: the person's
  question for the edit tool, not a wall for the commands they allowed), and the
  same for ``delete`` under a catch-all; and when an ``edit`` asks under any rule
  but the person approved the command's text (they saw it);
* **discarded** when a rule denies it (a plan agent's commands change nothing:
  its ceiling denies every edit), and always a FIFO, socket or device;
* **asked** otherwise -- a protected path, a ``delete`` rule, an edit rule that
  names the path (the command was allowed by a rule, not by the person), a change
  to a file that changed since the command started (a *conflict*): ONE question
  for them all, listing every change with a diff of each text file asked about
  (then, for context, of those that land whatever the answer).
  Headless, the question's answer is no: they are discarded. The person's no
  without a word ends the turn, as at every question; with a word (``f``) the
  model is told it and the turn goes on.

What is applied is kept first for undo (``ctx.undo``). The model is told what did
not land and why; the person sees a :class:`~dm_cc.core.events.ChangesLanded`.
"""

from __future__ import annotations

import contextlib
import difflib
import os
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace

from dm_cc.config import counted
from dm_cc.core.approval import RUNNING, Approval
from dm_cc.core.events import ChangesLanded, Notice
from dm_cc.core.settle import Judged, Settle, rule_said
from dm_cc.errors import DmccError
from dm_cc.permissions import (
    DELETE,
    PathContextDirs,
    Request,
    Verdict,
    combine,
    git_data,
    path_requests,
)
from dm_cc.policy import AUTO_LAYER, lifted_for_changes
from dm_cc.sandbox import Change, Conflict, Plan, Transaction
from dm_cc.tools import ToolContext, ToolOutput, UndoRecorder

EDIT = "edit"
SHOWN_CHANGES = 40         # changes listed by name in the question and to the model
DIFF_LINES = 80            # lines of one file's diff in the question
CONTEXT_LINES = 160        # lines of diffs of the changes that land whatever the answer
DIFF_BYTES = 256 * 1024    # a file larger than this is not diffed


@dataclass(frozen=True, slots=True)
class Outcome:
    """What happens to one change: ``apply``, ``ask`` or ``discard``, and why."""

    change: Change
    action: str
    why: str = ""
    verdicts: tuple[Verdict, ...] = ()
    # it lands with no rule allowing it: its asks were no question for a command
    # allowed to run (a catch-all, the person's approval of the command's text)
    lifted: bool = False


async def land(settle: Settle, judged: Judged, ctx: ToolContext, output: ToolOutput, *,
               approved: bool) -> tuple[ToolOutput, bool]:
    """Judge, ask about and apply the changes of ``output``'s transaction; the output
    the model gets says what did not land, and whether the person's answer ends the
    turn (a no without a word). The transaction is gone afterwards."""
    plan = output.landing
    if plan is None or plan.transaction is None:
        return output, False
    told: list[str] = []
    answered: list[str] = []
    stops = False
    try:
        try:
            changes = plan.transaction.changes(ignore=plan.mount_points().__contains__)
        except OSError as exc:     # what cannot be listed cannot be judged: none of it lands
            changes = []
            told = [f"(none of this command's changes to the project landed: they could not "
                    f"be listed: {exc.strerror or exc})"]
            settle.on_event(Notice(f"the changes of {_label(judged)} did not land: they could "
                                   f"not be listed ({exc.strerror or exc})"))
        if changes:
            told, stops = await _land(settle, judged, ctx, plan, changes, approved, answered)
    finally:
        aside = plan.finish(answered)
    text = "\n".join(filter(None, (output.output, *told, aside)))
    # the person reads what did not land in a ChangesLanded, not in the model's words
    shown = "\n".join(filter(None, (output.display or output.output, aside))) \
        if told else output.display
    return replace(output, output=text, display=shown or None, landing=None), stops


async def _land(settle: Settle, judged: Judged, ctx: ToolContext, plan: Plan,
                changes: Sequence[Change], approved: bool,
                answered: list[str]) -> tuple[list[str], bool]:
    """Judge, ask, apply; ``answered`` gets the paths the person said yes to. What
    the model is told, and whether the person's answer ends the turn."""
    transaction = plan.transaction
    assert transaction is not None
    outcomes = await _judge(settle, judged, ctx, plan, changes, approved)
    outcomes = [_with_conflict(o, transaction.conflict(o.change)) for o in outcomes]
    if any(layer.name == AUTO_LAYER and layer.rules for layer in settle.rights.gate().layers):
        outcomes = _covered_by_undo(outcomes, transaction.root, ctx.undo_limit)
    asked = [o for o in outcomes if o.action == "ask"]
    stops = False
    if asked:
        verdicts = tuple(v for o in asked for v in o.verdicts if v.action != "allow") or \
            tuple(v for o in asked for v in o.verdicts)
        question = Judged(judged.call, judged.tool, judged.params, combine(verdicts)._replace(
            action="ask"))
        settled = await settle.settle(question, ctx, changes=_question_text(
            outcomes, transaction.root, transaction.upper.as_posix()))
        yes = settled.answer is not None and settled.answer.answer in RUNNING
        stops = settled.stops
        said = _said(settled.answer)
        outcomes = [replace(o, action="apply" if yes else "discard",
                            why=o.why if yes else f"{o.why}; {said}")
                    if o.action == "ask" else o for o in outcomes]
        if yes:
            answered += [f"{transaction.root}/{o.change.path}" for o in asked]
    denied = tuple(v for o in outcomes if o.action == "discard" for v in o.verdicts
                   if v.action == "deny")
    if denied:   # the audit log has what a rule kept from landing, as any deny
        settle.record(Judged(judged.call, judged.tool, judged.params, combine(denied)))
    settle.durable()   # what was decided about the changes is on disk before they land
    applied, failed, lost = _apply(plan, outcomes, ctx, judged)
    refused = [o for o in outcomes if o.action == "discard"] + failed
    settle.on_event(ChangesLanded(judged.call, tuple(o.change for o in applied),
                                  tuple((o.change, o.why) for o in refused)))
    told = _told(applied, refused)
    if lost is not None and applied:
        told.append(f"(these changes cannot be undone: {lost})")
        settle.on_event(Notice(f"the changes of {_label(judged)} cannot be undone: {lost}"))
    return told, stops


def _covered_by_undo(outcomes: list[Outcome], root: str, limit: int | None) -> list[Outcome]:
    """Auto mode lets changes land because undo takes them back: when what they would
    replace or remove is more than one undo step may keep, those no rule of their own
    allows (they land by auto mode's rules, or as no question for a command) are asked
    about instead (headless: discarded)."""
    if limit is None:
        return outcomes
    kept = 0
    for outcome in outcomes:
        if outcome.action == "apply" and outcome.change.kind in ("modified", "deleted"):
            with contextlib.suppress(OSError):
                kept += os.lstat(os.path.join(root, outcome.change.path)).st_size
    if kept <= limit:
        return outcomes
    why = (f"auto mode lets it land because undo takes it back, but this command's changes "
           f"replace or remove {kept:,} bytes, more than an undo step keeps ({limit:,})")
    return [replace(o, action="ask", why=why) if o.action == "apply" and _by_auto(o) else o
            for o in outcomes]


def _by_auto(outcome: Outcome) -> bool:
    """It lands by auto mode: an auto rule's allow, or no rule at all (lifted)."""
    return outcome.lifted or any(v.layer == AUTO_LAYER and v.action == "allow"
                                 for v in outcome.verdicts)


def _said(answer: Approval | None) -> str:
    """Why asked changes were discarded, as the model is told."""
    if answer is None or answer.by != "person":
        return "nobody could be asked (a headless run), so it was discarded"
    return f"the user said no: {answer.feedback}" if answer.feedback else "the user said no"


async def _judge(settle: Settle, judged: Judged, ctx: ToolContext, plan: Plan,
                 changes: Sequence[Change], approved: bool) -> list[Outcome]:
    """Each change's outcome from its requests' verdicts: the gate's, with the decision
    hooks' answers (a hook on ``delete`` or ``edit`` sees a command's changes)."""
    gate = settle.rights.gate()
    unreadable = {c.path for c in changes if c.kind == "unreadable"}
    held = plan.held_why

    def _left_out(change: Change, unreadable: Collection[str]) -> str | None:
        return held(change.path) or _not_judged(change, unreadable)

    judgeable = [c for c in changes if _left_out(c, unreadable) is None]
    verdicts = [tuple(gate.judge(r) for r in _requests(c, ctx.where)) for c in judgeable]
    flat = [v for found in verdicts for v in found]
    if settle.hooks and flat:
        hooked = (await settle.hooked(judged.call, judged.tool, combine(flat))).verdicts
        at = iter(hooked)
        verdicts = [tuple(next(at) for _ in found) for found in verdicts]
    of = dict(zip(map(id, judgeable), verdicts, strict=True))
    return [Outcome(change, "discard", why) if (why := _left_out(change, unreadable)) is not None
            else _outcome(change, of[id(change)], approved) for change in changes]


def _not_judged(change: Change, unreadable: Collection[str]) -> str | None:
    """Why ``change`` is discarded without being judged, or None: it is judged (a
    transaction's held paths aside: :meth:`~dm_cc.sandbox.Plan.held_why`)."""
    if change.kind == "special":
        return "a FIFO, socket or device is never applied"
    if change.kind == "unreadable":
        return ("the command made this directory unreadable, so nothing in it can be judged "
                "or applied")
    if change.path in unreadable:
        return "the command made it unreadable"
    return None


def _requests(change: Change, where: PathContextDirs) -> list[Request]:
    """The requests a change makes: ``edit`` or ``delete`` of its path; protected as
    for the edit tool, but for the data git itself writes (objects, refs, the index)."""
    permission = DELETE if change.kind == "deleted" else EDIT
    return [r if r.protected is None or not git_data(change.path) else replace(r, protected=None)
            for r in path_requests(permission, f"{where.root.as_posix()}/{change.path}", where,
                                   is_directory=change.what == "directory")]


def _outcome(change: Change, verdicts: tuple[Verdict, ...], approved: bool) -> Outcome:
    decision = combine(verdicts)
    if decision.action == "deny":
        return Outcome(change, "discard", _because(decision.deciding), verdicts)
    asking = [v for v in verdicts if v.action == "ask"]
    if not asking or all(lifted_for_changes(v, approved) for v in asking):
        return Outcome(change, "apply", "", verdicts, lifted=bool(asking))
    return Outcome(change, "ask", _because(tuple(v for v in asking
                                                 if not lifted_for_changes(v, approved))),
                   verdicts)


def _because(verdicts: Sequence[Verdict]) -> str:
    first = verdicts[0]
    if first.request.protected and first.action != "deny":
        return f"protected: {first.request.protected}"
    return f"{'denied' if first.action == 'deny' else 'asked about'} by {rule_said(first.rule)}"


def _with_conflict(outcome: Outcome, conflict: str | None) -> Outcome:
    if conflict is None or outcome.action == "discard":
        return outcome
    return replace(outcome, action="ask", why="; ".join(filter(None, (
        outcome.why, f"conflict: {conflict}"))))


def _apply(plan: Plan, outcomes: Sequence[Outcome], ctx: ToolContext,
           judged: Judged) -> tuple[list[Outcome], list[Outcome], str | None]:
    """Apply what is to be applied, in order (parents first); a change under a
    directory that did not land does not land either. Each path is kept for undo
    first; when that fails (the step would pass the undo store's bound, a path it
    cannot keep), the rest lands without it and the third value says why."""
    transaction = plan.transaction
    assert transaction is not None
    undo = _Undo(ctx.undo(_label(judged)) if ctx.undo is not None else None, transaction)
    applied: list[Outcome] = []
    failed: list[Outcome] = []
    missing: list[str] = [o.change.path + "/" for o in outcomes
                          if o.action != "apply" and o.change.kind == "created"
                          and o.change.what == "directory"]
    try:
        for outcome in outcomes:
            if outcome.action != "apply":
                continue
            change = outcome.change
            if any(change.path.startswith(prefix) for prefix in missing):
                failed.append(replace(outcome, action="discard",
                                      why="its directory did not land"))
                continue
            try:
                transaction.apply(change, keep=undo.keep, landed=undo.landed)
            except (Conflict, OSError) as exc:
                why = str(exc) if isinstance(exc, Conflict) else (exc.strerror or str(exc))
                if change.kind == "deleted" and change.what == "directory":
                    why = "it still holds what did not land"
                failed.append(replace(outcome, action="discard", why=why))
                if change.what == "directory" and change.kind == "created":
                    missing.append(change.path + "/")
                continue
            applied.append(outcome)
    finally:
        undo.close()
    return applied, failed, undo.lost


class _Undo:
    """The undo step of one command's changes; when keeping fails, what follows
    lands without it (``lost`` says why): undo is a convenience, never a gate."""

    def __init__(self, recorder: UndoRecorder | None, transaction: Transaction) -> None:
        self.recorder = recorder
        self.transaction = transaction
        self.lost: str | None = None

    def keep(self, path: str) -> None:
        """Before ``path`` changes: through the directory the transaction holds open
        (reached without following a link), not walking down from the root again."""
        if self.recorder is None or self.lost is not None:
            return
        try:
            self.recorder.keep(path, moving=True, at=self.transaction.parent(path))
        except DmccError as exc:
            self.lost = str(exc)

    def landed(self, path: str, at: int, known: tuple[int, str] | None) -> None:
        if self.recorder is not None and self.lost is None:
            self.recorder.landed(path, at, known=known)

    def close(self) -> None:
        if self.recorder is None:
            return
        try:
            self.recorder.close()
        except DmccError as exc:
            self.lost = self.lost or str(exc)


def _label(judged: Judged) -> str:
    text = judged.tool.entry.main_text(judged.call.arguments or {})
    return f"{judged.call.name}: {text}" if text else judged.call.name


def _told(applied: Sequence[Outcome], refused: Sequence[Outcome]) -> list[str]:
    """What the model is told: how many changes landed, and each that did not."""
    if not refused:
        return []
    lines = [f"(of this command's {counted(len(applied) + len(refused), 'change')} to the project, "
             f"{len(applied)} landed; these did not, and are as before:"]
    lines += [f"- {o.change.describe()}: {o.why}" for o in refused[:SHOWN_CHANGES]]
    if len(refused) > SHOWN_CHANGES:
        lines.append(f"- … and {len(refused) - SHOWN_CHANGES} more")
    lines[-1] += ")"
    return ["\n".join(lines)]


def _question_text(outcomes: Sequence[Outcome], root: str, upper: str) -> str:
    """Every change, marked (those marked first when they are too many to list), then
    a diff of each text file asked about, and -- for context, up to
    :data:`CONTEXT_LINES` -- of each that lands whatever the answer."""
    mark = {"apply": "  ", "ask": "? ", "discard": "✗ "}
    lines = ["The command changed the project; the changes marked ? need your answer "
             "(✗: not applied whatever you answer):"]
    listed = sorted(outcomes, key=lambda o: o.action == "apply") \
        if len(outcomes) > SHOWN_CHANGES else outcomes
    for outcome in listed[:SHOWN_CHANGES]:
        lines.append(f"{mark[outcome.action]}{outcome.change.describe()}"
                     + (f"  ({outcome.why})" if outcome.why else ""))
    if len(outcomes) > SHOWN_CHANGES:
        lines.append(f"  … and {counted(len(outcomes) - SHOWN_CHANGES, 'more change')}")
    for outcome in outcomes:
        if outcome.action == "ask" and _diffable(outcome.change):
            lines += _diff(outcome.change, root, upper)
    context = [o for o in outcomes if o.action == "apply" and _diffable(o.change)]
    shown = 0
    for at, outcome in enumerate(context):
        if shown >= CONTEXT_LINES:
            lines.append(f"(not shown: the diffs of {counted(len(context) - at, 'more change')}, "
                         "landing whatever the answer)")
            break
        if not at:
            lines.append("(the changes below land whatever you answer)")
        diff = _diff(outcome.change, root, upper)
        shown += len(diff)
        lines += diff
    return "\n".join(lines)


def _diffable(change: Change) -> bool:
    return change.what == "file" and change.kind in ("created", "modified", "deleted")


def _diff(change: Change, root: str, upper: str) -> list[str]:
    before = _text(os.path.join(root, change.path)) if change.kind != "created" else ""
    after = _text(os.path.join(upper, change.path)) if change.kind != "deleted" else ""
    if before is None or after is None:
        return [f"(not shown: {change.shown} is binary, larger than {DIFF_BYTES:,} bytes or "
                "unreadable)"]
    diff = list(difflib.unified_diff(before.splitlines(), after.splitlines(),
                                     f"a/{change.shown}" if change.kind != "created" else "/dev/null",
                                     f"b/{change.shown}" if change.kind != "deleted" else "/dev/null",
                                     lineterm=""))
    if len(diff) > DIFF_LINES:
        diff = [*diff[:DIFF_LINES], f"… {counted(len(diff) - DIFF_LINES, 'more diff line')}"]
    return diff


def _text(path: str) -> str | None:
    """The text of ``path``; None when it cannot be shown -- binary, too large, or
    unreadable (a file the command made mode 000 is no empty file)."""
    try:
        if os.path.getsize(path) > DIFF_BYTES:
            return None
        with open(path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        return ""
    except OSError:
        return None
    if b"\0" in data:
        return None
    return data.decode("utf-8", errors="replace")
