"""``dm_cc sandbox status|run`` — where shell commands run, and what holds them.

``status`` says whether bubblewrap works here, the mode and where it was set, and
the spec the policy gives an agent's commands in this project (writable,
read-only and hidden paths, each with its reason; the network; the environment).
It is shown when bubblewrap is missing too: what it would hold. ``run`` runs a
command as the bash tool would (the same plan, the same runner) and exits with its
status. ``status`` imports none of litellm, mcp, prompt_toolkit (docs/sandbox.md).
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from dm_cc.errors import DmccError, UsageError

if TYPE_CHECKING:
    from dm_cc.compose import World
    from dm_cc.permissions import Gate

EXIT_REFUSED = 126        # as a shell does for a command it cannot execute
EXIT_TIMED_OUT = 124      # as timeout(1)
RUN_HELP = """\
Run CMD as the bash tool would: `bash -c CMD` in this directory, confined by the
sandbox the policy gives --agent (or not, as the mode and bubblewrap say), with the
bash tool's timeout and output cap; its output is printed and its exit status is
dm_cc's. One word after -- is taken as the whole command line ('make test | tee
log'); several are quoted and joined. The command is yours: the policy does not
judge it (no allow, deny or ask), only the sandbox it derives holds it. Exit 126
when the sandbox is required and cannot confine it here, 124 on a timeout."""


def _world(args: argparse.Namespace) -> World:
    from dm_cc.cli.options import with_root_warnings
    from dm_cc.compose import Options, open_world

    return with_root_warnings(open_world(Options(policies=tuple(args.policy))))


def _gate(world: World, agent_name: str) -> Gate:
    """The gate the bash tool confines with: the agent's rules and its saved
    approvals (an unreadable approvals file is reported and left out, as a session does)."""
    agent = world.agent(agent_name)
    try:
        approvals = world.approvals.rules_for(agent.name)
    except DmccError as exc:
        print(f"dm_cc: warning: saved approvals not used: {exc}", file=sys.stderr)
        approvals = ()
    return world.gate(agent, approvals)


def _status(args: argparse.Namespace) -> int:
    world = _world(args)
    sandbox = world.sandbox
    spec = sandbox.spec(_gate(world, args.agent))
    if args.json:
        import json

        found = sandbox.availability
        print(json.dumps({
            "bubblewrap": {"usable": found.usable, "path": found.bwrap, "reason": found.reason},
            "mode": sandbox.mode, "mode_source": sandbox.why_mode, "state": sandbox.state(),
            "confining": sandbox.confining, "transactions": {
                "usable": sandbox.transactional, "reason": sandbox.transactions().reason},
            "agent": args.agent, **spec.as_json()}, indent=2))
        return 0
    from dm_cc.ui import status_lines

    for line in status_lines(sandbox, spec, args.agent):
        print(line)
    return 0


def _command_line(words: Sequence[str]) -> str:
    if words and words[0] == "--":
        words = words[1:]
    if not words:
        raise UsageError("sandbox run: no command; give it after --: "
                         "dm_cc sandbox run -- make test")
    return words[0] if len(words) == 1 else shlex.join(words)


def _run(args: argparse.Namespace) -> int:
    import asyncio

    from dm_cc.tools import DEFAULT_TIMEOUT, run_plan
    from dm_cc.ui import where_line

    command = _command_line(args.command)
    world = _world(args)
    sandbox = world.sandbox
    plan = sandbox.confine(_gate(world, args.agent), ["bash", "-c", command])
    if plan.refusal is not None:
        print(f"dm_cc: sandbox: {plan.refusal}", file=sys.stderr)
        return EXIT_REFUSED
    print(f"dm_cc: sandbox: {where_line(plan, sandbox)}", file=sys.stderr, flush=True)
    timeout = args.timeout or DEFAULT_TIMEOUT
    ran = asyncio.run(run_plan(plan, world.cwd, timeout))
    sys.stdout.write(ran.text)
    sys.stdout.flush()
    if ran.timed_out:
        print(f"dm_cc: sandbox: timed out after {timeout:g} s: the command and its "
              "process group were killed", file=sys.stderr)
        return EXIT_TIMED_OUT
    code = ran.code if ran.code is not None else 1
    stopped = plan.stopped(ran.text, code) if plan.confined else None
    if stopped is not None:
        said = "stopped" if stopped.seen else "may have stopped"
        print(f"dm_cc: sandbox: the sandbox {said} this: {stopped.why}", file=sys.stderr)
    return 128 - code if code < 0 else code


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0
    if value <= 0:
        raise argparse.ArgumentTypeError(f"not a number of seconds above 0: {text!r}")
    return value


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--agent", default="build",
                        help="the agent whose policy the sandbox holds (default build)")
    parser.add_argument("--policy", action="append", default=[], metavar="FILE",
                        help="extra policy file, after the user policy (repeatable); "
                             "builtin:NAME names a shipped one (dm_cc policy builtin)")


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser],
             rest: Sequence[str] = ()) -> None:
    group = commands.add_parser(
        "sandbox", help="where shell commands run: bubblewrap, the mode, what it holds",
        description="The sandbox the policy derives for shell commands (docs/sandbox.md).")
    sub = group.add_subparsers(dest="sandbox_command", metavar="SUBCOMMAND", required=True)
    status = sub.add_parser(
        "status", help="is bubblewrap usable; the mode; what a command may write, read, reach",
        description="Whether bubblewrap works here, the mode and where it was set, and what "
                    "a confined command of --agent may write, read and reach in this project.")
    _common(status)
    status.add_argument("--json", action="store_true", help="machine-readable output")
    status.set_defaults(handler=_status)
    run = sub.add_parser("run", help="run a command as the bash tool would",
                         description=RUN_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    _common(run)
    run.add_argument("--timeout", type=_positive, metavar="S",
                     help="seconds before it is killed (default: the bash tool's)")
    run.add_argument("command", nargs=argparse.REMAINDER, metavar="-- CMD",
                     help="the command line")
    run.set_defaults(handler=_run)
