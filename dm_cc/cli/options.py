"""The options every session command shares (the interactive session and ``run``)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dm_cc.compose import Options


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
