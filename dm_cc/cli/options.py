"""The options every session command shares (the interactive session and ``run``),
and what every command that judges says first about where it runs."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from dm_cc import __version__

if TYPE_CHECKING:
    from dm_cc.compose import Options, World


POLICY_AFTER = "policy_after_command"   # ``run --policy F``: after those before ``run``
THINKING_BUDGET = 8000     # tokens: ``--thinking`` with no number


def add_session_options(parser: argparse.ArgumentParser, *, command: bool = False) -> None:
    """The session options, on ``dm_cc`` itself and on a ``command`` (``run``): there
    they default to nothing (``SUPPRESS``), so that ``dm_cc --model M run …`` keeps
    the option given before the command (argparse lets a subcommand's defaults
    overwrite it), and ``--policy`` given in both places counts both (``POLICY_AFTER``)."""
    if command:
        parser.argument_default = argparse.SUPPRESS
    parser.add_argument("--agent", help="primary agent: build (default), plan, or a custom one")
    parser.add_argument("--model", help="litellm model string, 'offline', or 'scripted:FILE.yaml' "
                        "(replies played from a file: dm_cc/llm/scripted.py) (env DM_CC_MODEL)")
    parser.add_argument("--api-base", help="OpenAI-compatible server URL (env DM_CC_API_BASE)")
    parser.add_argument("--policy", action="append", default=[], metavar="FILE",
                        dest=POLICY_AFTER if command else "policy",
                        help="extra policy file, after the user policy (repeatable); "
                             "builtin:NAME names a shipped one (dm_cc policy builtin)")
    parser.add_argument("--continue", dest="continue_last", action="store_true",
                        help="continue the latest session of this project")
    parser.add_argument("--resume", metavar="ID", help="resume the session with this id")
    parser.add_argument("--trust-project", action="store_true",
                        help="trust the project's own .dm_cc/ files as they are, for this run "
                             "only (dm_cc trust saves it)")
    parser.add_argument("--max-turns", type=_positive, metavar="N",
                        help="stop a turn after this many model calls (default 50, or the "
                             "agent's max_turns)")
    parser.add_argument("--temperature", type=_temperature, metavar="T",
                        help="sampling temperature, 0 to 2, for agents that set none")
    parser.add_argument("--thinking", nargs="?", const=THINKING_BUDGET, type=_thinking,
                        metavar="BUDGET",
                        help=f"extended thinking, up to BUDGET tokens a reply (alone: "
                             f"{THINKING_BUDGET}; off: none), where the model has it: Claude, "
                             "Gemini, OpenAI reasoning models (env DM_CC_THINKING, config "
                             "thinking:; docs/models.md)")
    parser.add_argument("--verbose", action="store_true",
                        help="write a debug log (model calls, decisions, events); its path is "
                             "printed at the start")
    parser.argument_default = None   # the command's own options have their defaults


def _positive(text: str) -> int:
    try:
        number = int(text)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, not {text!r}")
    return number


def _temperature(text: str) -> float:
    try:
        number = float(text)
    except ValueError:
        number = -1.0
    if not 0 <= number <= 2:
        raise argparse.ArgumentTypeError(f"expected a number from 0 to 2, not {text!r}")
    return number


def _thinking(text: str) -> int:
    from dm_cc.config import thinking_budget

    try:
        return thinking_budget(text)
    except ValueError as exc:   # e.g. `run --thinking "fix it"`: the prompt taken for it
        raise argparse.ArgumentTypeError(f"{exc} (a prompt goes after the budget: "
                                         f"--thinking {THINKING_BUDGET} PROMPT)") from None


def options_from(args: argparse.Namespace) -> Options:
    from dm_cc.compose import Options

    return Options(agent=args.agent, model=args.model, api_base=args.api_base,
                   policies=(*args.policy, *getattr(args, POLICY_AFTER, ())),
                   continue_last=args.continue_last,
                   resume=args.resume, max_turns=args.max_turns,
                   trust_project=args.trust_project, temperature=args.temperature,
                   thinking=args.thinking)


def start_debug_log(args: argparse.Namespace) -> Path | None:
    """``--verbose``: dm_cc's loggers write everything (DEBUG) to a new file in the
    state dir's ``logs/``, readable by the user only (it holds prompts and code), and
    its path is printed on stderr; None without ``--verbose``."""
    if not args.verbose:
        return None
    import logging
    import os
    import time

    from dm_cc.config import state_dir

    directory = state_dir() / "logs"
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = directory / f"{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.log"
    path.touch(mode=0o600)
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logger = logging.getLogger("dm_cc")
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    logger.debug("dm_cc %s, argv %s", __version__, sys.argv[1:])
    print(f"dm_cc: debug log: {path}", file=sys.stderr, flush=True)
    return path


def with_root_warnings(world: World) -> World:
    """``world``, once each ``.dm_cc/`` that is not its project's was named on stderr
    (``dm_cc: warning: …``): every command that judges opens its world through here
    (the REPL shows them as notices)."""
    for warning in world.root_warnings:
        print(f"dm_cc: warning: {warning}", file=sys.stderr)
    return world
