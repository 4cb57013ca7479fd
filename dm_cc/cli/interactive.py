"""``dm_cc`` with no command: the interactive session in the terminal.

The REPL draws its prompt before anything heavy is loaded: it gets a function
that opens the world, and calls it in the background. The session options are
``run``'s (``cli/options.py``): ``--max-turns`` bounds each turn, ``--temperature``
each model call of an agent that sets none, ``--verbose`` writes a debug log.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from dm_cc.cli.options import options_from, start_debug_log

if TYPE_CHECKING:
    from dm_cc.compose import World


def run_interactive(args: argparse.Namespace) -> int:
    from dm_cc.ui import early_prompt

    start_debug_log(args)     # --verbose: its path is printed above the prompt
    drawn = early_prompt()
    from dm_cc.ui import run_repl

    def load_world() -> World:
        from dm_cc.compose import open_world

        return open_world(options_from(args))

    return run_repl(load_world, agent_hint=args.agent, handover=drawn)
