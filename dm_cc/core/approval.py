"""The Approver seam: who answers when a decision is ``ask``, and what the answers
given so far allow.

Implementations: the REPL's prompt (interactive), :class:`HeadlessApprover`
(``dm_cc run --on-ask deny|fail``) and :class:`ScriptedApprover` (tests). An
approver only answers; the loop applies the answer:

    once      run this call
    session   run it, and allow the same again for this agent until the process ends
    always    as session, and save the rules in the approval store (they survive restarts)
    reject    do not run it; with feedback the model is told why and the turn goes
              on, without it the turn stops
    cancel    do not run it, and cancel the turn (Ctrl-C at the question)

What "session" and "always" remember are the request set's *suggestions* (for
shell the narrowest useful rule -- ``bash setup.sh *``, ``git log *``, ``rm -rf
build`` --, the exact path for files), which the person may edit before they are
kept (a rule as broad as a whole interpreter, :meth:`ApprovalRequest.breadth`, is
confirmed first); a permission in ``NEVER_SAVED`` (doom_loop, sandbox_escape) is
never saved, whatever the answer; :class:`Approvals` holds them per agent, so an approval
given to build opens nothing for plan. They sit in the gate's approvals layer,
which never beats a configured deny, a managed rule or a ceiling.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from dm_cc.errors import DmccError
from dm_cc.permissions import NEVER_SAVED, Decision, Request, Rule, too_broad

Answer = Literal["once", "session", "always", "reject", "cancel"]
REMEMBERING: frozenset[str] = frozenset({"session", "always"})
RUNNING: frozenset[str] = frozenset({"once", *REMEMBERING})   # the answers that run the call


def suggested_rules(requests: Iterable[Request], tool: str) -> tuple[Rule, ...]:
    """The rules "always allow" would add for ``requests``: the suggestion for shell
    commands (``Request.always``: ``bash setup.sh *``, ``git log *``, ``rm -rf build``,
    or none for inline code), the exact pattern for everything else and for requests
    with sensitive tokens (a prefix would not name them, and would not stick).

    A request whose text holds the pattern language's wildcards (a literal
    `*.tmp`, a path `.env*`, a URL with `?`) gets no rule: as a pattern it would
    allow more than what was asked."""
    return tuple(suggested_for(requests, tool))


def suggested_for(requests: Iterable[Request], tool: str) -> dict[Rule, list[Request]]:
    """:func:`suggested_rules`, each with the requests it was suggested for (in
    order; one pass): what the question checks it allows, so that checking every
    suggestion costs one judgement per request, not one per request and suggestion."""
    rules: dict[Rule, list[Request]] = {}
    for request in requests:
        if not request.allowable or request.always == "":  # "": nothing names it safely
            continue
        exact = request.pattern if request.sensitive else None
        pattern = exact or request.always or request.pattern
        literal = pattern[:-2] if pattern == request.always and pattern.endswith(" *") \
            else pattern
        if any(ch in literal for ch in _WILDCARDS[request.reading]):
            continue
        rule = Rule(request.permission, pattern, "allow", reason=f"approved for {tool}",
                    source="approval:session")
        rules.setdefault(rule, []).append(request)
    return rules


def asks_a_person(approver: Approver) -> bool:
    """Whether ``approver`` may answer session/always: a headless run's never does
    (nobody reads a question), so nothing "always" would remember is built for it."""
    return not isinstance(approver, HeadlessApprover)


_WILDCARDS = {"path": "*?[]{}", "shell": "*?", "url": "*?", "name": "*?"}


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    """What the person is asked about: who asks, the tool call, why it asks (each
    verdict names its rule, ``file:line`` and reason), what it would do (a diff),
    and what "always" would remember.

    ``suggestions`` are the rules that would make this call allowed next time
    (those that cannot -- a configured deny, a managed rule, a ceiling -- are left
    out); ``covers(rule)`` tells whether an edited rule still allows the request it
    was suggested for."""

    tool: str
    arguments: dict[str, Any]
    decision: Decision
    preview: str | None = None
    agent: str = "build"
    asker: str = ""                 # a subagent's label (explore #2); "" for the session's own
    description: str = ""           # what the call says it does (bash's description)
    main_input: str = ""            # the whole command, path or URL
    suggestions: tuple[Rule, ...] = ()
    covers: Callable[[Rule], bool] = field(default=lambda rule: True, compare=False)
    call_id: str = ""
    # True when the gate now allows the call outright: an answer given while this
    # question waited its turn (an "always" to another subagent) covers it.
    settled: Callable[[], bool] = field(default=lambda: False, compare=False)
    # A sandbox_escape question: what the confined run printed (its end) and why the
    # sandbox looks to have stopped it. "" for every other question.
    stopped: str = ""
    # A command's changes (it ran as a transaction): a header line, every change
    # marked ("? " asked, "✗ " not applied, "  " applied), then the diffs (each line
    # from the first that is not a change's). "" for every other question.
    changes: str = ""

    @property
    def asking(self) -> tuple[Request, ...]:
        """The requests that made this an ask."""
        return tuple(v.request for v in self.decision.verdicts if v.action == "ask")

    def always_rules(self) -> tuple[Rule, ...]:
        return suggested_rules(self.asking, self.tool)

    @property
    def may_save(self) -> bool:
        """Whether "always" is offered: no rule it would keep is of a permission whose
        approvals last one session (``NEVER_SAVED``: doom_loop, sandbox_escape)."""
        return bool(self.suggestions) and not any(
            rule.permission in NEVER_SAVED for rule in self.suggestions)

    def breadth(self, rule: Rule) -> str | None:
        """Why keeping ``rule`` would allow as much as a whole interpreter (``bash *``,
        ``*``), read in the language of the requests it was suggested for; or None."""
        languages = [r.reading for r in self.asking if r.permission == rule.permission]
        return too_broad(rule.pattern, languages[0] if languages else "name")

    def kept(self, approval: Approval) -> tuple[Rule, ...]:
        """What a session/always answer remembers: the (edited) suggestions, and only
        allow rules for a permission that asked -- an edit may narrow or widen a
        pattern, never become another permission or another action."""
        rules = self.suggestions if approval.rules is None else approval.rules
        asked = {request.permission for request in self.asking}
        return tuple(r for r in rules if r.action == "allow" and r.permission in asked)


@dataclass(frozen=True, slots=True)
class Approval:
    """An answer. ``rules``: what session/always remembers when the person edited
    the suggestions (None: the suggestions as they are). ``by``: who answered -- the
    person, a headless run's fixed answer, or an approval given meanwhile that
    covers the call (the audit log's ``decided_by``)."""

    answer: Answer
    feedback: str | None = None
    rules: tuple[Rule, ...] | None = None
    by: Literal["person", "headless", "approval"] = "person"


class Approver(Protocol):
    async def approve(self, request: ApprovalRequest) -> Approval: ...


class SavedApprovals(Protocol):
    """The persisted approval store, as the loop needs it."""

    def rules_for(self, agent: str) -> tuple[Rule, ...]: ...

    def add(self, permission: str, pattern: str, *, agent: str, expires: float | None = None,
            note: str = "") -> Any: ...


class Approvals:
    """What the person has approved: per agent, for this process ("session") and
    from the store ("always"). A store that cannot be read (corrupt) or written is
    reported in ``warnings`` and counts as empty; nothing is silently dropped."""

    def __init__(self, saved: SavedApprovals | None = None) -> None:
        self.saved = saved
        self.session: dict[str, list[Rule]] = {}
        self.warnings: list[str] = []
        self._loaded: dict[str, tuple[Rule, ...]] = {}
        # per agent: the saved and session rules last joined, and the joined tuple
        self._joined: dict[str, tuple[tuple[Rule, ...], tuple[Rule, ...], tuple[Rule, ...]]] = {}

    def rules(self, agent: str) -> tuple[Rule, ...]:
        """The approvals in force for ``agent``: saved first, then this session's.
        The same tuple while neither changes (``session`` is changed in place too, so
        it is compared, and it is short): a gate keyed by it is found again at once
        however many approvals are saved (a tuple compares its items by identity first)."""
        if agent not in self._loaded:
            self._loaded[agent] = self._load(agent)
        saved, session = self._loaded[agent], tuple(self.session.get(agent, ()))
        joined = self._joined.get(agent)
        if joined is None or joined[0] is not saved or joined[1] != session:
            joined = self._joined[agent] = (saved, session, saved + session)
        return joined[2]

    def _load(self, agent: str) -> tuple[Rule, ...]:
        if self.saved is None:
            return ()
        try:
            return tuple(self.saved.rules_for(agent))
        except DmccError as exc:
            self.warnings.append(f"saved approvals not used: {exc}")
            return ()

    def remember(self, agent: str, rules: Sequence[Rule], *, save: bool, note: str) -> None:
        """Keep ``rules`` for ``agent``: in the store when ``save`` (read back from
        it), else -- or when saving fails -- for this session. A rule of a permission
        whose approvals are never saved (``NEVER_SAVED``) is kept for this session,
        whoever answered "always"."""
        if save and (session_only := [r for r in rules if r.permission in NEVER_SAVED]):
            self.warnings += [f"{p} approvals last for this session only: {NEVER_SAVED[p]}"
                              for p in dict.fromkeys(r.permission for r in session_only)]
            self._keep(agent, session_only)
            rules = [r for r in rules if r.permission not in NEVER_SAVED]
            if not rules:
                return
        saved = self.saved
        if save and saved is None:
            self.warnings.append("no approval store: this approval lasts for this session only")
        elif save and saved is not None:
            try:
                for rule in rules:
                    saved.add(rule.permission, rule.pattern, agent=agent, note=note)
            except (DmccError, OSError, ValueError) as exc:
                self.warnings.append(f"approval kept for this session only; saving failed: {exc}")
            else:
                self._loaded.pop(agent, None)  # read back what the store now holds
                return
        self._keep(agent, rules)

    def _keep(self, agent: str, rules: Sequence[Rule]) -> None:
        """Keep ``rules`` for ``agent`` until the process ends."""
        kept = self.session.setdefault(agent, [])
        kept.extend(rule for rule in rules if rule not in kept)

    def reload(self) -> None:
        """Read the store again on next use (after a revoke elsewhere)."""
        self._loaded.clear()

    def drain_warnings(self) -> list[str]:
        warnings, self.warnings = self.warnings, []
        return warnings


class AskFailed(DmccError):
    """``--on-ask fail``: a headless run reached a decision that needs a person."""

    def __init__(self, request: ApprovalRequest) -> None:
        self.request = request
        asking = [v for v in request.decision.verdicts if v.action == "ask"]
        told = [f"{v.request.permission} {_cut(v.request.pattern)!r} ({v.rule.source})"
                for v in asking[:ASKING_SHOWN]]
        if len(asking) > ASKING_SHOWN:   # a command naming thousands of paths
            told.append(f"… and {len(asking) - ASKING_SHOWN} more")
        super().__init__(f"{request.tool} needs approval and this run cannot ask: "
                         + "; ".join(told))


#: The asking requests a failed headless run names (each cut to PATTERN_SHOWN
#: characters); the rest are counted.
ASKING_SHOWN = 10
PATTERN_SHOWN = 200


def _cut(text: str) -> str:
    return text if len(text) <= PATTERN_SHOWN else text[:PATTERN_SHOWN] + "…"


HEADLESS_FEEDBACK = ("This needs the user's approval and this run is headless (--on-ask deny), "
                     "so it was not done. Do not retry it; continue without it or explain.")


@dataclass
class HeadlessApprover:
    """No person to ask: deny every ask (the model is told), or fail the run."""

    on_ask: Literal["deny", "fail"] = "deny"

    async def approve(self, request: ApprovalRequest) -> Approval:
        if self.on_ask == "fail":
            raise AskFailed(request)
        return Approval("reject", HEADLESS_FEEDBACK, by="headless")


@dataclass
class ScriptedApprover:
    """Answers from a script, in order; records what it was asked."""

    answers: list[Approval] = field(default_factory=list)
    asked: list[ApprovalRequest] = field(default_factory=list)

    def __init__(self, answers: Iterable[Approval | Answer] = ()) -> None:
        self.answers = [a if isinstance(a, Approval) else Approval(a) for a in answers]
        self.asked = []

    async def approve(self, request: ApprovalRequest) -> Approval:
        self.asked.append(request)
        if not self.answers:
            raise AssertionError(f"unexpected approval request for {request.tool}")
        return self.answers.pop(0)


def summarize(verdicts: Sequence) -> str:
    return "; ".join(f"{v.request.permission} {v.request.pattern!r}: {v.rule.describe()}"
                     for v in verdicts)
