"""The decision: what an ordered stack of rule layers decides about a tool call.

    Gate(layers, context[, ceilings]).decide(requests) -> Decision

This is the one module that turns matches (:mod:`engine`) into decisions, and
the product and the public ``decide()`` both go through it:

* **last match wins** over the layers concatenated in order; no match → ``ask``;
* a request with several **names** (a symlink and its target) is judged under
  each; the strictest verdict wins;
* a command's **other names** (``npm publ`` is ``npm publish``, ``RM`` is ``rm``:
  ``Request.other_names``) count through a deny or ask rule that matches one and
  comes later in the stack than the rule deciding the written name: a deny on a
  program holds for all its names, an allow is never widened by one;
* an ``allow`` is **withheld** (becomes ``ask``) from a request that is not
  allowable (a shell command that cannot be known statically) or whose sensitive
  tokens the allowing rule does not spell out; a **speculative** request (a
  guessed inner command) counts only when a rule denies it, and a deny of ``*``
  (every command) does not count;
* an **approval only turns an ask into an allow**, never beats a configured deny
  nor a managed rule: when the deciding rule comes from a layer marked
  ``approvals`` (the person's answers; auto mode's rules), the verdict without
  those layers is taken unless it asks and was not decided by a ``binding`` layer
  (where it allows already, the approval has nothing to turn: an allow it could
  not give, withheld, never undoes one the configured rules give);
* **ceilings** (other gates) bound the result: where a ceiling is stricter, its
  verdict wins, with the ceiling's reason in its note -- all of its verdicts, or
  only those decided by a rule of the ceiling layers named. A subagent's ceiling
  is its parent's gate (bounded in turn by the grandparent's, so every ancestor
  bounds it); an agent a cloned repository defines gets the stack without its
  own rules;
* a **repository's** rules (a layer whose ``origin`` is ``repository``: project
  files the person trusts; ``untrusted``: those they do not, which hold no allow)
  may always tighten, never loosen beyond what they may: where a verdict decided by
  one is looser than the verdict without the repository's layers, the latter stands
  when the files are untrusted, when it was decided by a rule of the person's own
  (or the organisation's), or when the request reaches beyond the project (a path
  outside it, a permission in ``reaching``: the network, running unconfined);
* an allow of a **protected** path's edit (``Request.protected``: a file that makes
  code run later) is withheld unless its rule names the path exactly (no wildcard)
  and is not a repository's;
* an allow of a request naming a path in a **secret store** (``Request.secret``: the
  person's credentials outside the project, :mod:`dm_cc.permissions.secrets`) is
  withheld unless its rule names the path exactly or the store itself, and is not a
  repository's;
* a request **set** is decided as: any deny → deny, else any ask → ask, else allow.

Pure: no I/O; everything it needs is passed in.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal, NamedTuple

from dm_cc.permissions.engine import (
    NO_CONTEXT,
    CompiledRule,
    Ruleset,
    RulesetLike,
    Searched,
    compiled,
    language_for,
    last_match_in,
    prepared,
    searched,
    subject,
)
from dm_cc.permissions.patterns import PathContext, is_literal, spoofable
from dm_cc.permissions.rules import (
    EXTERNAL_DIRECTORY,
    NETWORK,
    SANDBOX_ESCAPE,
    STRICTNESS,
    Action,
    Language,
    Request,
    Rule,
    default_rule,
    is_mcp_permission,
)

#: Who wrote a layer's rules: dm_cc itself, the person (their files, answers, the
#: organisation's managed files), a repository's files the person trusts, or ones
#: they do not (which may only tighten).
Origin = Literal["builtin", "person", "repository", "untrusted"]
REPOSITORY: frozenset[Origin] = frozenset({"repository", "untrusted"})
#: The permissions whose every request reaches beyond the project (a repository's
#: allow never opens them); a policy adds those of tools with such effects.
REACHING = frozenset({NETWORK, SANDBOX_ESCAPE, EXTERNAL_DIRECTORY})

UNTRUSTED = ("the project's files are not trusted, so they may tighten, never loosen: "
             "`dm_cc trust` after reading them")
OVERRULED = "a project's rules cannot overrule your own files or the managed policy"
BEYOND = ("a project's rules never open anything beyond the project (a path outside it, "
          "the network, running unconfined)")


class Layer(NamedTuple):
    """A named, ordered slice of the stack. ``approvals``: rules that may only turn
    an ask into an allow, never a configured deny (the person's approvals, auto
    mode's rules). ``binding``: an approval never overrides a verdict this layer's
    rules decide (a managed rule). ``origin``: who wrote its rules (a repository's
    only tighten, see the module)."""

    name: str
    rules: tuple[Rule, ...]
    approvals: bool = False
    binding: bool = False
    origin: Origin = "person"


@dataclass(frozen=True, slots=True)
class Verdict:
    """How one request was decided: the deciding rule and the resulting action.

    ``action`` differs from ``rule.action`` when an allow was withheld, or when a
    guessed (speculative) command met no deny (``note`` says which); ``name`` is the
    request name that decided it; ``layer`` the layer of the deciding rule (None:
    the default) -- a trace, not part of what was decided.
    """

    request: Request
    rule: Rule
    action: Action
    name: str
    note: str | None = None
    layer: str | None = field(default=None, compare=False)
    origin: Origin | None = field(default=None, compare=False)
    #: The deciding rule's position in its layer (None: the default).
    index: int | None = field(default=None, compare=False)


class Decision(NamedTuple):
    """A request set's outcome: any deny → deny; else any ask → ask; else allow."""

    action: Action
    verdicts: tuple[Verdict, ...]

    @property
    def deciding(self) -> tuple[Verdict, ...]:
        """The verdicts that made the decision what it is (the strictest ones)."""
        return tuple(v for v in self.verdicts if v.action == self.action)


class Ceiling(NamedTuple):
    """A gate whose stricter verdicts win: all of them (``layers`` None), or only
    those decided by a rule of one of ``layers``; for every request, or only for
    requests of ``permissions``. ``why`` is told with a verdict the ceiling decided."""

    gate: Gate
    layers: frozenset[str] | None = None
    why: str = "a ceiling applies"
    permissions: frozenset[str] | None = None

    def limits(self, verdict: Verdict) -> Verdict:
        if verdict.action == "deny":  # (nothing is stricter: the ceiling need not judge)
            return verdict
        if self.permissions is not None and verdict.request.permission not in self.permissions:
            return verdict
        # whether a protected path's (or a secret store's) allow names it exactly is
        # the bounded stack's business: a ceiling says what may be opened at all
        request = verdict.request
        limit = self.gate.judge(request if request.protected is None and request.secret is None
                                else replace(request, protected=None, secret=None))
        counts = self.layers is None or limit.layer in self.layers
        if not counts or STRICTNESS[limit.action] <= STRICTNESS[verdict.action]:
            return verdict
        return replace(limit, note="; ".join(n for n in (self.why, limit.note) if n))


@dataclass(frozen=True)
class Candidate:
    """A rule of one of a gate's layers that could decide a request of ``permission``,
    with its layer and the path context its patterns are anchored at; :meth:`matches`
    tests a request name against it as the gate does (a deny or ask path rule
    ignoring case, ...)."""

    permission: str
    rule: Rule
    layer: Layer
    compiled: CompiledRule = field(repr=False, compare=False)

    @property
    def context(self) -> PathContext:
        return self.compiled.context

    def matches(self, name: str, language: Language = "path") -> bool:
        """Whether the rule matches the request name ``name``, read in ``language`` (a
        path: project-relative or absolute, as requests name them)."""
        return self.compiled.matches(subject(self.permission, name, None, self.compiled.context,
                                             language))


class Gate:
    """The compiled layers for one agent: decides requests and request sets."""

    def __init__(self, layers: Sequence[Layer], context: PathContext | None = None,
                 ceilings: Sequence[Ceiling] = (), reaching: frozenset[str] = REACHING) -> None:
        context = context if context is not None else NO_CONTEXT
        self._build(tuple(layers), [compiled(layer.rules, context) for layer in layers],
                    context, tuple(ceilings), reaching)

    def _build(self, layers: tuple[Layer, ...], rulesets: list[Ruleset], context: PathContext,
               ceilings: tuple[Ceiling, ...], reaching: frozenset[str] = REACHING) -> None:
        self.layers = layers
        self.context = context
        self.ceilings = ceilings
        self.reaching = reaching
        self._rulesets = rulesets
        self._all = _Stack(rulesets, layers)
        self._approvals = {layer.name for layer in layers if layer.approvals}
        self._binding = {layer.name for layer in layers if layer.binding}
        kept = [i for i, layer in enumerate(layers) if not layer.approvals]
        self._configured = _Stack([rulesets[i] for i in kept], [layers[i] for i in kept])
        self._denied: dict[str, bool] = {}   # denies_outright, per permission (a gate never changes)

    @classmethod
    def over(cls, rulesets: Iterable[RulesetLike]) -> Gate:
        """A gate over already-ordered rulesets, one layer each (each keeps its own
        path context): what the public :func:`decide` uses."""
        gate = cls.__new__(cls)
        given, sets = prepared(rulesets)
        layers = tuple(Layer(f"rules:{i}", tuple(rules)) for i, rules in enumerate(given, 1))
        gate._build(layers, sets, NO_CONTEXT, ())
        return gate

    def candidates(self, permission: str) -> tuple[Candidate, ...]:
        """Every rule of this gate's layers (not its ceilings') whose permission covers
        ``permission``, layer by layer in order: the rules that could decide one of its
        requests, the last match winning."""
        return tuple(Candidate(permission, layer.rules[rule.index], layer, rule)
                     for layer, ruleset in zip(self.layers, self._rulesets, strict=True)
                     for rule in ruleset.candidates(permission))

    def within(self, ceiling: Ceiling) -> Gate:
        """This gate bounded by ``ceiling`` too (the ceilings it had still hold)."""
        gate = Gate.__new__(Gate)
        gate._build(self.layers, self._rulesets, self.context, (*self.ceilings, ceiling),
                    self.reaching)
        return gate

    def judge(self, request: Request) -> Verdict:
        """The request under each of its names (a symlink and its target), the
        approval rule applied name by name, the strictest verdict; then the ceilings."""
        verdict = self._judge_name(request, request.pattern) if not request.aliases else \
            _strictest(self._judge_name(request, name) for name in request.names)
        if request.other_names:
            verdict = self._other_names(request, verdict)
        for ceiling in self.ceilings:
            verdict = ceiling.limits(verdict)
        return verdict

    def _judge_name(self, request: Request, name: str) -> Verdict:
        verdict = self._all.judge(request, name, self.reaching)
        if verdict.layer in self._approvals and verdict.action != "deny":
            configured = self._configured.judge(request, name, self.reaching)
            if configured.action != "ask" or configured.layer in self._binding:
                verdict = configured
        return verdict

    def _other_names(self, request: Request, verdict: Verdict) -> Verdict:
        """A command's other names (``npm publ`` is ``npm publish``): a deny or ask
        rule matching one decides when it is stricter and later in the stack than the
        rule that decided the name as written -- later, so that ``deny python *`` then
        ``allow python3 *`` still allows ``python3`` (the person's last word), and the
        catch-all ``deny *`` of a deny-by-default policy does not deny ``npm i`` that
        ``allow npm i *`` allows; a rule's own deny or ask, never a withheld allow or
        the default."""
        for words in request.other_names:
            text = " ".join(words)
            alone = replace(request, pattern=text, aliases=(), words=words, other_names=())
            other = self._judge_name(alone, text)
            if other.layer is None or other.action == "allow" or other.action != other.rule.action \
                    or STRICTNESS[other.action] <= STRICTNESS[verdict.action] \
                    or self._place(other) <= self._place(verdict):
                continue
            why = f"{text} is another name of {request.pattern}"
            verdict = replace(other, request=request,
                              note="; ".join(n for n in (why, other.note) if n))
        return verdict

    def _place(self, verdict: Verdict) -> tuple[int, int]:
        """Where the verdict's rule stands in the stack (the default: before all)."""
        if verdict.layer is None or verdict.index is None:
            return (-1, -1)
        where = next(i for i, layer in enumerate(self.layers) if layer.name == verdict.layer)
        return (where, verdict.index)

    def decide(self, requests: Iterable[Request]) -> Decision:
        # A request met again (`cat f; cat f`) is judged once: judging is pure, and
        # ``always``, which equality ignores, is part of the key so the verdict carries
        # a request exactly like the one met.
        judged: dict[tuple[Request, str | None], Verdict] = {}
        verdicts = []
        for request in requests:
            try:
                key = (request, request.always)
                verdict = judged.get(key)
            except TypeError:  # a field made unhashable (a list of words): judged alone
                verdicts.append(self.judge(request))
                continue
            if verdict is None:
                verdict = judged[key] = self.judge(request)
            verdicts.append(verdict)
        return combine(verdicts)

    def denies_outright(self, permission: str) -> bool:
        """True when the last rule for ``permission`` with the universal pattern
        ``*`` denies and no later rule for it does anything but deny: no request of
        this permission can be allowed or asked about, so its tool is not offered.
        Asked for every tool before each model request: answered once per permission."""
        known = self._denied.get(permission)
        if known is None:
            known = self._denied[permission] = self._denies_outright(permission)
        return known

    def _denies_outright(self, permission: str) -> bool:
        if any(ceiling.layers is None and ceiling.gate.denies_outright(permission)
               for ceiling in self.ceilings):
            return True
        denied = False
        for rule in self.rules_for(permission):
            if rule.pattern == "*":
                denied = rule.action == "deny"
            elif rule.action != "deny":
                denied = False
        return denied

    def considered(self, request: Request) -> list[tuple[Rule, tuple[str, ...]]]:
        """Every rule of this gate's layers (not its ceilings') whose permission covers
        the request's, layer by layer in order, with the request names it matches:
        what ``dm_cc policy explain`` shows, the last match winning."""
        return [(layer.rules[index], hits)
                for layer, ruleset in zip(self.layers, self._rulesets, strict=True)
                for index, hits in ruleset.considered(request)]

    def bounds(self) -> list[tuple[Layer, str]]:
        """The bounds of this gate that are rules of their own (what an agent may do at
        all, its ``may``), each with why it bounds: a stricter verdict of theirs wins
        over every layer. (A subagent's parent's gate, also a bound, is not one of these.)"""
        return [(ceiling.gate.layers[0], ceiling.why) for ceiling in self.ceilings
                if self._bounds_by(ceiling)]

    @staticmethod
    def _bounds_by(ceiling: Ceiling) -> bool:
        return ceiling.layers is None and ceiling.permissions is None \
            and len(ceiling.gate.layers) == 1 and not ceiling.gate.ceilings

    def rules_for(self, permission: str, *, bounds: bool = False) -> tuple[Rule, ...]:
        """Every rule of this gate's layers whose permission covers ``permission``,
        layer by layer in order: the rules that could decide one of its requests, the
        last match winning (the ceilings' rules are not among them); ``bounds``: then
        those of its :meth:`bounds`."""
        own = tuple(candidate.rule for ruleset in self._rulesets
                    for candidate in ruleset.candidates(permission))
        if not bounds:
            return own
        return own + tuple(rule for ceiling in self.ceilings if self._bounds_by(ceiling)
                           for rule in ceiling.gate.rules_for(permission))


class _Stack:
    """Compiled rulesets and the layers they were compiled from, in order."""

    def __init__(self, rulesets: Sequence[Ruleset], layers: Sequence[Layer]) -> None:
        self.rulesets = rulesets
        self.layers = layers
        ours = [i for i, layer in enumerate(layers) if layer.origin not in REPOSITORY]
        # the same stack without a repository's layers: what it may not loosen
        self.ours = None if len(ours) == len(layers) else \
            _Stack([rulesets[i] for i in ours], [layers[i] for i in ours])
        self._searched: dict[tuple[str, Language | None], tuple[Language, Searched]] = {}

    def judge(self, request: Request, name: str, reaching: frozenset[str]) -> Verdict:
        """One request under one of its names, a repository's verdict held within
        what it may decide (see the module docstring)."""
        verdict = self.judge_name(request, name)
        if verdict.origin not in REPOSITORY or self.ours is None:
            return verdict
        without = self.ours.judge_name(request, name)
        if STRICTNESS[without.action] <= STRICTNESS[verdict.action]:
            return verdict
        if verdict.origin == "untrusted":
            why = UNTRUSTED
        elif without.origin == "person":
            why = OVERRULED
        elif request.permission in reaching or (request.reading == "path" and name.startswith("/")):
            why = BEYOND
        else:
            return verdict
        return replace(without, note="; ".join(n for n in (why, without.note) if n))

    def judge_name(self, request: Request, name: str) -> Verdict:
        """One request under one of its names."""
        key = (request.permission, request.language)
        where = self._searched.get(key)
        if where is None:  # (the rulesets never change)
            language = language_for(*key)
            where = self._searched[key] = (language, searched(self.rulesets, key[0], language))
        hit = last_match_in(request.permission, name, request.words, where[1], where[0])
        if hit is None:
            rule, layer, index = default_rule(request.permission), None, None
            origin: Origin = "builtin"
        else:
            found = self.layers[hit[0]]
            rule, layer, origin, index = found.rules[hit[1]], found.name, found.origin, hit[1]
        action: Action = rule.action
        note = None
        # A guessed command is decided only by a deny that names what it denies: the
        # catch-all `*` of a deny-by-default policy would deny every unknown program
        # with arguments (`ruff check .` guessed as `check .`) that an allow names.
        if request.speculative and (action != "deny" or rule.pattern == "*"):
            action = "allow"
            note = (f"{request.note or 'a guessed inner command'}: only a deny rule that "
                    "names it decides it")
        elif action == "allow":
            note = (_withheld(request, rule) or _protected(request, rule, origin)
                    or _secret(request, rule, origin))
            if note is not None:
                action = "ask"
        return Verdict(request, rule, action, name, note, layer, origin, index)


def _strictest(verdicts: Iterable[Verdict]) -> Verdict:
    """The first of the strictest verdicts (a request has at least one name)."""
    worst: Verdict | None = None
    for verdict in verdicts:
        if worst is None or STRICTNESS[verdict.action] > STRICTNESS[worst.action]:
            worst = verdict
    assert worst is not None, "a request has at least one name"
    return worst


_NAME_ENDS = frozenset(" =*/:")


def _names(pattern: str, token: str) -> bool:
    """Does ``pattern`` spell ``token`` out as a word of its own (``-exec`` in
    ``find * -exec *``, ``--output`` in ``--output=*``, not ``--pre`` in ``--pretty``)?"""
    start = pattern.find(token)
    while start >= 0:
        end = start + len(token)
        if (start == 0 or pattern[start - 1] == " ") and \
                (end == len(pattern) or pattern[end] in _NAME_ENDS or token[-1] in "/= "):
            return True
        start = pattern.find(token, start + 1)
    return False


def _withheld(request: Request, rule: Rule) -> str | None:
    if not request.allowable:
        return request.note or "this cannot be judged statically, so no rule may allow it"
    if is_mcp_permission(request.permission) and spoofable(rule.pattern):
        return ("the rule is a wildcard over the arguments' JSON text, which a nested value "
                "can meet: only conditions over top-level keys (repo=myorg/*) allow")
    missing = [token for token in request.sensitive if not _names(rule.pattern, token)] \
        if request.sensitive else None
    if missing:
        return (f"{', '.join(missing)} can run, write or reveal more than the rule says: "
                "only an allow rule that names it explicitly can allow this")
    return None


def _protected(request: Request, rule: Rule, origin: Origin) -> str | None:
    """Why an allow of a protected path's edit is withheld: only an exact rule that is
    not a repository's opens one."""
    if request.protected is None:
        return None
    exact = is_literal(rule.pattern) and not any(c in rule.pattern for c in "[{")
    if origin not in REPOSITORY and exact:
        return None
    return (f"{request.pattern} is protected ({request.protected}): only a rule of your own "
            "naming it exactly allows editing it")


def _secret(request: Request, rule: Rule, origin: Origin) -> str | None:
    """Why an allow of a path in a secret store is withheld: only a rule that is not a
    repository's and names the path exactly, or the store itself, opens one."""
    secret = request.secret
    if secret is None:
        return None
    exact = is_literal(rule.pattern) and not any(c in rule.pattern for c in "[{")
    if origin not in REPOSITORY and (exact or rule.pattern in secret.openers):
        return None
    return (f"{request.pattern} is in a secret store, {secret.store} ({secret.why}): only "
            f"a rule of your own naming it exactly, or {secret.store}/**, allows it")


def combine(verdicts: Iterable[Verdict]) -> Decision:
    """Any deny → deny; else any ask → ask; else allow. No verdicts → ask (nothing
    vouches for the call)."""
    collected = tuple(verdicts)
    if not collected:
        return Decision("ask", ())
    action = max((v.action for v in collected), key=STRICTNESS.__getitem__)
    return Decision(action, collected)


def decide(requests: Iterable[Request], *rulesets: RulesetLike) -> Decision:
    """Judge every request under the rulesets (in order, last match wins) and combine."""
    return Gate.over(rulesets).decide(requests)


def stricter(first: Action, second: Action) -> Action:
    """The stricter of two actions (deny > ask > allow)."""
    return first if STRICTNESS[first] >= STRICTNESS[second] else second
