"""``dm_cc policy check|explain|show|test|lint|schema|import|export`` — the engine from the shell.

``check``, ``explain``, ``show`` and ``test`` decide as a session does: with the
project's saved approvals of each agent (``--no-approvals``: the policy alone), and
say so, and which approval decided. None of these import litellm or mcp.
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from dm_cc.config import counted

if TYPE_CHECKING:  # annotations only: `dm_cc --help` does not load the engine
    from dm_cc.agents import Agent
    from dm_cc.compose import World
    from dm_cc.permissions import Decision, Rule
    from dm_cc.policy import InlineTestEntry


def _world(args: argparse.Namespace) -> World:
    from dm_cc.cli.options import with_root_warnings
    from dm_cc.compose import Options, open_world

    # decisions as they will be where commands run as transactions (no bubblewrap tried)
    return with_root_warnings(open_world(Options(policies=tuple(args.policy), transactions=True)))


def _answers(world: World, args: argparse.Namespace,
             names: Sequence[str]) -> dict[str, tuple[Rule, ...]]:
    """The project's saved approvals of each agent named, as a session starts with them
    (the REPL decides with them: so does ``policy``); none with ``--no-approvals``, or
    when the store cannot be read (said on stderr, as the REPL says it)."""
    import sys

    from dm_cc.errors import DmccError

    if args.no_approvals:
        return {}
    try:
        return {name: world.approvals.rules_for(name) for name in dict.fromkeys(names)}
    except DmccError as exc:
        print(f"dm_cc: saved approvals not counted: {exc}", file=sys.stderr)
        return {}


def _counted(answers: Mapping[str, Sequence[Rule]], agent: str) -> str | None:
    """What ``policy`` says of the saved approvals it counted for ``agent``; None when
    there are none."""
    count = len(answers.get(agent, ()))
    if not count:
        return None
    them = "it" if count == 1 else "them"
    return (f"counted {count} saved approval{'' if count == 1 else 's'} of agent {agent}: "
            f"dm_cc approvals list shows {them}; --no-approvals judges the policy alone")


def _approval_id(rule: Rule) -> str | None:
    """The saved approval a rule is (``approval:apr_…``), or None."""
    source = rule.source.removeprefix("approval:")
    return source if source != rule.source and source.startswith("apr_") else None


def _print_json(value: object) -> None:
    import json  # only --json and schema print it: not paid by every check

    print(json.dumps(value, indent=2))


def _rule_json(rule: Rule) -> dict:
    return {"permission": rule.permission, "pattern": rule.pattern, "action": rule.action,
            "source": rule.source, "reason": rule.reason}


class AutoMode(NamedTuple):
    """Auto mode allowed a call: what its allow means, and the decision where commands
    do not run as transactions (the auto layer empty)."""

    means: str
    otherwise: str
    as_build: bool      # the agent runs in auto mode: otherwise it decides as build

    def __str__(self) -> str:
        return (f"where commands run as transactions; otherwise {self.otherwise}"
                + (", as in build" if self.as_build else ""))


def _auto_mode(world: World, args: argparse.Namespace, decision: Decision) -> AutoMode | None:
    """Whether auto mode is all that allows ``decision`` (judged, as every ``policy``
    command judges, as where commands run as transactions)."""
    from dm_cc.policy import AUTO_LAYER

    if not any(v.layer == AUTO_LAYER for v in decision.verdicts):
        return None
    from dm_cc.ui import auto_mode_text  # said only when auto mode allowed the call

    _, without = world.decide(args.tool, args.input, args.agent, args.under, transactional=False,
                              answers=_answers(world, args, [args.agent, *args.under]))
    means = auto_mode_text(decision, without)
    return None if means is None else AutoMode(means, without.action, world.agent(args.agent).auto)


def _check(args: argparse.Namespace) -> int:
    world = _world(args)
    answers = _answers(world, args, [args.agent, *args.under])
    gate, decision = world.decide(args.tool, args.input, args.agent, args.under, answers=answers)
    hooks = [] if args.no_hooks else world.policy.hooks
    if hooks:
        decision = world.consult_hooks(gate, decision, args.tool, args.input, args.agent)
    auto = _auto_mode(world, args, decision)
    landing = _as_a_change(decision)
    if args.json:
        from dm_cc.policy import HOOK_LAYER

        _print_json({
            "decision": decision.action,
            "agent": args.agent,
            **({"under": args.under} if args.under else {}),
            "approvals": "left out" if args.no_approvals
            else len(answers.get(args.agent, ())),
            "requests": [{
                "permission": v.request.permission, "pattern": v.request.pattern,
                "decision": v.action, "rule": _rule_json(v.rule),
                **({"note": v.note} if v.note else {}),
                **({"aliases": list(v.request.aliases)} if v.request.aliases else {}),
                **({"decided_by": "hook"} if v.layer == HOOK_LAYER else {}),
                **({"decided_by": "approval", "approval": found}
                   if (found := _approval_id(v.rule)) else {}),
            } for v in decision.verdicts],
            **({"hooks": [{"command": list(h.command), "source": h.source, "layer": h.layer}
                          for h in hooks]} if hooks else {}),
            **({"auto_mode": {"means": auto.means, "without_transactions": auto.otherwise}}
               if auto else {}),
            **({"as_a_command_change": "allow"} if landing else {}),
        })
        return 0
    from dm_cc.ui import hooks_lines, trace_lines

    # a command's removal is the only delete there is: its decision as it will happen
    shown = "allow" if landing and args.tool == "delete" else _headline(decision, auto)
    print(f"{shown}: {args.tool} {args.input!r} (agent {_who(args)})")
    if landing:
        print(f"  ({'the rules say ask, but ' if args.tool == 'delete' else ''}{landing})")
    if auto:
        print(f"  ({auto})")
    if counted := _counted(answers, args.agent):
        print(f"  ({counted})")
    for line in trace_lines(decision):
        print(line)
    for line in _approval_lines(decision):
        print(line)
    for line in hooks_lines(hooks):
        print(line)
    return 0


def _as_a_change(decision: Decision) -> str | None:
    """What an ``edit`` or ``delete`` ask means for a command's change of the path (a
    command allowed to run, docs/sandbox.md): when only a catch-all asks, the change
    lands without a question -- said so, as it will happen; None otherwise."""
    from dm_cc.policy import lifted_for_changes

    asking = [v for v in decision.verdicts if v.action == "ask"]
    if decision.action != "ask" or not all(
            v.request.permission in ("edit", "delete") and lifted_for_changes(v, False)
            for v in asking):
        return None
    what = "removal" if asking[0].request.permission == "delete" else "change"
    return (f"only a catch-all rule asks: a command's {what} of it lands without a "
            "question, as its other changes do")


def _approval_lines(decision: Decision) -> list[str]:
    """Which saved approvals decided a request (and how to take one back)."""
    found = dict.fromkeys(i for v in decision.verdicts if (i := _approval_id(v.rule)))
    return [f"  ← saved approval {i} decided: dm_cc approvals revoke {i} takes it back"
            for i in found]


def _headline(decision: Decision, auto: AutoMode | None) -> str:
    """``allow``, or ``allow — runs confined, effects judged`` when auto mode allows."""
    return decision.action + (f" — {auto.means}" if auto else "")


def _explain(args: argparse.Namespace) -> int:
    world = _world(args)
    answers = _answers(world, args, [args.agent, *args.under])
    gate, decision = world.decide(args.tool, args.input, args.agent, args.under, answers=answers)
    auto = _auto_mode(world, args, decision)
    print(f"{args.tool} {args.input!r} under agent {_who(args)}: {_headline(decision, auto)}"
          + (f" ({auto})" if auto else ""))
    if counted := _counted(answers, args.agent):
        print(f"({counted})")
    for v in decision.verdicts:
        request = v.request
        print(f"\nrequest {request.permission} {request.pattern!r}"
              + (f" (also {', '.join(request.aliases)})" if request.aliases else ""))
        if request.other_names:  # judged by deny and ask rules too (Request.other_names)
            print("  other names: " + ", ".join(repr(" ".join(w)) for w in request.other_names))
        if request.note:
            print(f"  {request.note}")
        print("  rules for this permission, in order (last match wins):")
        found = False
        for rule, hits in gate.considered(request):
            mark = "match" if hits else "  -  "
            winner = "  <- decides" if rule is v.rule else ""
            found = found or rule is v.rule
            print(f"   {mark} {rule.action:<5} {rule.permission} {rule.pattern!r} "
                  f"[{rule.source}]{winner}")
        if not found and v.rule.source != "default":  # a bound of the stack decided it
            print(f"  bounded by: {v.rule.action} {v.rule.permission} {v.rule.pattern!r} "
                  f"[{v.rule.source}]  <- decides")
        if v.rule.source == "default":
            print("   no rule matched: the default is ask")
        print(f"  => {v.action}" + (f" ({v.note})" if v.note else ""))
    return 0


def _show(args: argparse.Namespace) -> int:
    world = _world(args)
    answers = _answers(world, args, [args.agent, *args.under])
    gate = world.gate(world.agent(args.agent), under=args.under, answers=answers)
    if args.json:
        layers = [*gate.layers, *(layer for layer, _why in gate.bounds())]
        _print_json({"agent": args.agent, "rules": [
            {"layer": layer.name, **_rule_json(rule)}
            for layer in layers for rule in layer.rules],
            "managed_from_url": [d.as_json() for d in world.policy.delivered]})
        return 0
    from dm_cc.ui import layer_lines

    print(f"effective rules for agent {_who(args)} (last match wins; later layers win):")
    if counted := _counted(answers, args.agent):
        print(f"({counted}; the [approvals] layer holds them)")
    for line in layer_lines(gate):
        print(("\n" if line.startswith("[") else "") + line)
    if args.under:
        print(f"\nand every decision is bounded by what {' > '.join(args.under)} would decide "
              "(a subagent never gets more than the agents that started it)")
    if origins := world.policy.managed_origins():
        print("\nmanaged files (the organisation's):", *origins, sep="\n  ")
    return 0


def _who(args: argparse.Namespace) -> str:
    """``general`` or ``general, started by plan``."""
    return args.agent + (f", started by {' > '.join(args.under)}" if args.under else "")


def _test(args: argparse.Namespace) -> int:
    from dm_cc.compose import DEFAULT_AGENT
    from dm_cc.policy import run_inline_tests

    world = _world(args)
    answers = _answers(world, args, [t.agent or DEFAULT_AGENT
                                     for f in world.policy.files for t in f.tests])
    results = run_inline_tests(world.policy.files, lambda test: world.decide(
        test.tool, test.input, test.agent or DEFAULT_AGENT, answers=answers)[1])
    failed = [r for r in results if not r.passed]
    for result in results:
        test = result.test
        status = "PASS" if result.passed else "FAIL"
        what = f"{test.tool} {test.input!r}" + (f" (agent {test.agent})" if test.agent else "")
        detail = result.error or f"expected {test.expect}, got {result.actual}"
        print(f"{status} {test.source}: {what}" + ("" if result.passed else f": {detail}"))
        if not result.passed and result.decision is not None:
            for v in result.decision.deciding:
                print(f"       {v.request.permission} {v.request.pattern!r}: {v.rule.describe()}")
    print(f"{len(results) - len(failed)} passed, {len(failed)} failed")
    approved = [r for r in failed if r.decision is not None
                and any(_approval_id(v.rule) for v in r.decision.deciding)]
    if approved:
        print(f"{len(approved)} failed as decided by saved approvals of this project "
              "(dm_cc approvals list); --no-approvals tests the policy alone")
    return 1 if failed else 0


def _lint(args: argparse.Namespace) -> int:
    from dm_cc.config import PROJECT_DIR, config_dir, managed_dir
    from dm_cc.policy import lint_files, load_policy_arg

    world = _world(args)
    files = [load_policy_arg(f) for f in args.files] if args.files \
        else list(world.policy.files)
    findings = lint_files(files, known_agents=world.agents)
    for finding in findings:
        print(finding)
    if not files:
        print(f"no policy files found (project {PROJECT_DIR}/, user config "
              f"{config_dir()}, managed {managed_dir()})")
    elif not findings:
        print(f"{counted(len(files), 'file')}, no findings")
    return 1 if findings else 0


#: What the policies of a sub-directory of policies/ are, said above them in the list.
BUILTIN_GROUPS = {"examples": "Example team policies for common stacks: copy one to "
                              ".dm_cc/policy.yaml and adapt it"}


def _builtin(args: argparse.Namespace) -> int:
    """The shipped policies with what each is for, then each sub-directory's (the
    examples) under a heading; with a name, that file's text (to read, or to copy
    and adapt: ``dm_cc policy builtin team-strict > FILE``)."""
    from dm_cc.policy import SHIPPED_PREFIX, shipped_names, shipped_summary, shipped_text

    if args.name is None:
        names = shipped_names()
        width = max(map(len, names), default=0)
        group = ""
        for name in names:
            if (directory := name.rpartition("/")[0]) != group:
                group = directory
                print(f"\n{BUILTIN_GROUPS.get(group, group + '/')}:")
            print(f"{SHIPPED_PREFIX}{name:<{width}}   {shipped_summary(name)}")
        return 0
    print(shipped_text(args.name.removeprefix(SHIPPED_PREFIX)), end="")
    return 0


def _policy_name(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", nargs="?", metavar="NAME", help="print this shipped policy")


def _schema(args: argparse.Namespace) -> int:
    from dm_cc.policy import policy_json_schema

    _print_json(policy_json_schema())
    return 0


def _import(args: argparse.Namespace) -> int:
    """Rewrite another assistant's permission settings as a dm_cc policy file."""
    import sys

    from dm_cc.policy import (
        IMPORTERS,
        InvalidSource,
        lint_files,
        parse_policy,
        render_policy,
        settle_tests,
    )

    try:
        imported = IMPORTERS[args.source][1](Path(args.file))
    except InvalidSource as exc:   # its own tool would load none of it: exit 1
        print(f"dm_cc: import: {exc}\ndm_cc: import: nothing written: the source tool "
              "refuses this file, so no rule of it holds there", file=sys.stderr)
        return 1
    if imported.refused and not args.lossy:
        for line in imported.refused:
            print(f"dm_cc: import: {imported.source}: cannot import without loosening the "
                  f"policy: {line}", file=sys.stderr)
        print("dm_cc: import: nothing written: an importer may be stricter than its source, "
              "never looser. Rewrite these rules, or pass --lossy to import the rest "
              "without them", file=sys.stderr)
        return 1
    with _imported_decides(render_policy(imported)) as decide:
        settled = settle_tests(imported, decide)
    if settled.looser:
        for line in settled.looser:
            print(f"dm_cc: import: {imported.source}: the imported policy decides its own "
                  f"{line}: looser than its source, a bug of the importer", file=sys.stderr)
        print("dm_cc: import: nothing written: an importer may be stricter than its source, "
              "never looser", file=sys.stderr)
        return 1
    text = render_policy(imported)
    shown = args.output or "<stdout>"
    policy = parse_policy(text, shown)   # the output must load; a failure here is a bug
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    for line in imported.dropped:
        print(f"dm_cc: import: {imported.source}: {line}", file=sys.stderr)
    for line in settled.stricter:
        print(f"dm_cc: import: {imported.source}: stricter than its source, so the test "
              f"expects dm_cc's decision: {line}", file=sys.stderr)
    for line in imported.refused:
        print(f"dm_cc: import: {imported.source}: left out (--lossy), a loosening: {line}",
              file=sys.stderr)
    for finding in lint_files([policy], known_agents=_known_agents()):
        print(f"dm_cc: lint: {finding}", file=sys.stderr)
    if args.output:
        print(f"wrote {args.output}: {counted(len(policy.rules), 'rule')}, "
              f"{counted(len(policy.agents), 'agent override')}, "
              f"{counted(len(policy.tests), 'test')}; "
              f"{len(imported.dropped) + len(imported.refused)} not imported", file=sys.stderr)
    return 0


@contextlib.contextmanager
def _imported_decides(text: str) -> Iterator[Callable[[InlineTestEntry], tuple[str, str]]]:
    """How the policy ``text`` decides an inline test on dm_cc's defaults alone, as
    ``dm_cc policy test --policy FILE`` decides it in a project with no policy of its
    own, no user or managed policy and no saved approvals: a world opened over a
    temporary project, configuration and managed directory (the text written there)."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="dm_cc-import-") as temporary:
        yield _decider(text, Path(temporary))


def _decider(text: str, base: Path) -> Callable[[InlineTestEntry], tuple[str, str]]:
    """:func:`_imported_decides` in the directory ``base``."""
    import os

    from dm_cc.compose import DEFAULT_AGENT, Options, open_world

    project, policy = base / "project", base / "imported.yaml"
    (project / ".git").mkdir(parents=True)
    policy.write_text(text, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("DM_CC_")}
    env |= {"DM_CC_HOME": str(base / "home"), "DM_CC_MANAGED_DIR": str(base / "managed")}
    world = open_world(Options(policies=(str(policy),), transactions=True), cwd=project,
                       env=env)

    def decide(test: InlineTestEntry) -> tuple[str, str]:
        decision = world.decide(test.tool, test.input, test.agent or DEFAULT_AGENT)[1]
        why = "; ".join(dict.fromkeys(_deciding_rule(v.rule, str(policy))
                                      for v in decision.deciding
                                      if v.action == decision.action))
        return decision.action, why or "dm_cc's defaults"
    return decide


def _deciding_rule(rule: Rule, imported: str) -> str:
    """A rule that decided a test of an import, as its file will show it: an imported
    rule without the temporary file's name."""
    if rule.source.startswith(imported):
        return f"the rule {rule.action} {rule.permission} {rule.pattern!r}"
    return rule.describe()


def _export(args: argparse.Namespace) -> int:
    """Write the policy in force (or the files named) as another assistant's settings."""
    import sys

    from dm_cc.policy import EXPORTERS, file_rules, load_policy_arg, stack_rules

    refused: list[str] = []
    if args.files:
        rules, notes = file_rules([load_policy_arg(f) for f in args.files])
    else:
        world = _world(args)
        rules, notes, refused = stack_rules(world.gate(world.agent(args.agent)))
    exported = EXPORTERS[args.target][1](rules)
    notes += exported.notes
    refused += exported.refused
    if refused and not args.lossy:
        for line in refused:
            print(f"dm_cc: export: cannot export without loosening the policy: {line}",
                  file=sys.stderr)
        print("dm_cc: export: nothing written: an export may be stricter than the policy, "
              "never looser. Rewrite these rules, or pass --lossy to export the rest "
              "without them", file=sys.stderr)
        return 1
    if args.output:
        Path(args.output).write_text(exported.text, encoding="utf-8")
    else:
        sys.stdout.write(exported.text)
    for line in notes:
        print(f"dm_cc: export: {line}", file=sys.stderr)
    for line in refused:
        print(f"dm_cc: export: left out (--lossy), a loosening: {line}", file=sys.stderr)
    if args.output:
        print(f"wrote {args.output} ({args.target}); {counted(len(notes), 'note')}, "
              f"{len(refused)} left out", file=sys.stderr)
    return 0


def _export_args(parser: argparse.ArgumentParser) -> None:
    from dm_cc.policy import EXPORTERS

    parser.add_argument("target", choices=tuple(EXPORTERS), metavar="FORMAT",
                        help="; ".join(f"{name}: {text}" for name, (text, _) in EXPORTERS.items()))
    parser.add_argument("files", nargs="*", metavar="FILE",
                        help="policy files (or builtin:NAME) to export on dm_cc's defaults "
                             "(default: the layers in force for --agent, without saved approvals)")
    parser.add_argument("-o", "--output", metavar="FILE",
                        help="the file to write (default: standard output)")
    parser.add_argument("--lossy", action="store_true",
                        help="export even when a deny or ask rule can be neither said nor "
                             "widened: leave it out (a loosening, reported) instead of failing")


def _known_agents() -> Mapping[str, Agent] | None:
    """The agents dm_cc knows here, for lint; None when this project does not load
    (its own files are not what is being imported)."""
    from dm_cc.compose import open_world
    from dm_cc.errors import DmccError

    try:
        return open_world().agents
    except DmccError:
        return None


def _import_args(parser: argparse.ArgumentParser) -> None:
    from dm_cc.policy import IMPORTERS

    parser.add_argument("source", choices=tuple(IMPORTERS), metavar="FORMAT",
                        help="; ".join(f"{name}: {text}" for name, (text, _) in IMPORTERS.items()))
    parser.add_argument("file", metavar="FILE", help="the file to import")
    parser.add_argument("-o", "--output", metavar="FILE",
                        help="the dm_cc policy file to write (default: standard output)")
    parser.add_argument("--lossy", action="store_true",
                        help="import even when a deny or ask rule can be neither expressed nor "
                             "widened: leave it out (a loosening, reported) instead of failing")


def _common(parser: argparse.ArgumentParser, *, agent: bool = True, json_: bool = True) -> None:
    parser.add_argument("--policy", action="append", default=[], metavar="FILE",
                        help="extra policy file, after the user policy (repeatable); "
                             "builtin:NAME names a shipped one (dm_cc policy builtin)")
    if agent:
        parser.add_argument("--agent", default="build", help="agent to judge as (default build)")
        parser.add_argument("--under", action="append", default=[], metavar="AGENT",
                            help="judge --agent as a subagent started by AGENT (repeat for "
                                 "its ancestors, outermost first)")
    if json_:
        parser.add_argument("--json", action="store_true", help="machine-readable output")


def _tool_call(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("tool", metavar="TOOL", help="tool name: bash, read, edit, …")
    parser.add_argument("input", metavar="INPUT", help="its main input (command, path, URL …)")


def _no_approvals(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--no-approvals", action="store_true",
                        help="leave out the project's saved approvals (dm_cc approvals list): "
                             "the policy alone; by default they count, as in a session")


def _check_arguments(parser: argparse.ArgumentParser) -> None:
    _explain_arguments(parser)
    parser.add_argument("--no-hooks", action="store_true",
                        help="do not run the policy's decision hooks (they run by default)")


def _explain_arguments(parser: argparse.ArgumentParser) -> None:
    _tool_call(parser)
    _no_approvals(parser)


def _files(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="*", metavar="FILE",
                        help="files (or builtin:NAME) to lint (default: loaded)")


# name: (help, handler, common options (agent, json), more arguments), in help order
SUBCOMMANDS: dict[str, tuple[str, Callable[[argparse.Namespace], int],
                             tuple[bool, bool] | None,
                             Callable[[argparse.ArgumentParser], None] | None]] = {
    "check": ("decide one tool call (running the policy's hooks)", _check, (True, True),
              _check_arguments),
    "explain": ("show every rule considered", _explain, (True, False), _explain_arguments),
    "show": ("the effective ordered rules with sources", _show, (True, True), _no_approvals),
    "test": ("run the inline tests of every loaded policy file", _test, (False, False),
             _no_approvals),
    "lint": ("find shadowed, unknown and never-matching rules", _lint, (False, False), _files),
    "builtin": ("list the shipped policies (builtin:NAME), or print one", _builtin, None,
                _policy_name),
    "schema": ("JSON Schema of the policy file format", _schema, None, None),
    "import": ("rewrite Claude Code, opencode, Codex or Gemini CLI permissions as a policy file", _import, None,
               _import_args),
    "export": ("write the policy as Claude Code, opencode, Codex or Gemini CLI permissions",
               _export, (True, False), _export_args),
}


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser],
             rest: Sequence[str] = ()) -> None:
    """The ``policy`` group; only the subcommand named first in ``rest`` is built
    when there is one (all of them for help and for a misspelt name)."""
    policy = commands.add_parser("policy", help="check, explain, show, test, lint, import and export policies",
                                 description="Work with dm_cc's permission policy.")
    sub = policy.add_subparsers(dest="policy_command", metavar="SUBCOMMAND", required=True)
    named = rest[0] if rest and rest[0] in SUBCOMMANDS else None
    for name, (text, handler, common, more) in SUBCOMMANDS.items():
        if named is not None and name != named:
            continue
        parser = sub.add_parser(name, help=text, description=text)
        if common is not None:
            _common(parser, agent=common[0], json_=common[1])
        if more is not None:
            more(parser)
        parser.set_defaults(handler=handler)
