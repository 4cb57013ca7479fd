"""The options every session command shares (the interactive session and ``run``),
and what every command that judges says first about where it runs."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dm_cc.compose import Options, World


def add_session_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--agent", help="primary agent: build (default), plan, or a custom one")
    parser.add_argument("--model", help="litellm model string, or 'offline' (env DM_CC_MODEL)")
    parser.add_argument("--api-base", help="OpenAI-compatible server URL (env DM_CC_API_BASE)")
    parser.add_argument("--policy", action="append", default=[], metavar="FILE",
                        help="extra policy file, after the user policy (repeatable); "
                             "builtin:NAME names a shipped one (dm_cc policy builtin)")
    parser.add_argument("--continue", dest="continue_last", action="store_true",
                        help="continue the latest session of this project")
    parser.add_argument("--resume", metavar="ID", help="resume the session with this id")
    parser.add_argument("--trust-project", action="store_true",
                        help="trust the project's own .dm_cc/ files as they are, for this run "
                             "only (dm_cc trust saves it)")


def options_from(args: argparse.Namespace) -> Options:
    from dm_cc.compose import Options

    return Options(agent=args.agent, model=args.model, api_base=args.api_base,
                   policies=tuple(args.policy), continue_last=args.continue_last,
                   resume=args.resume, max_turns=getattr(args, "max_turns", None),
                   trust_project=args.trust_project)


def with_root_warnings(world: World) -> World:
    """``world``, once each ``.dm_cc/`` that is not its project's was named on stderr
    (``dm_cc: warning: …``): every command that judges opens its world through here
    (the REPL shows them as notices)."""
    for warning in world.root_warnings:
        print(f"dm_cc: warning: {warning}", file=sys.stderr)
    return world
