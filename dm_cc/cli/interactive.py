"""``dm_cc`` with no command: an interactive session in the terminal."""

from __future__ import annotations

import argparse

from dm_cc.cli.options import options_from


def run_interactive(args: argparse.Namespace) -> int:
    from dm_cc.compose import open_world
    from dm_cc.ui.console import ConsoleApprover, on_event, on_stream, run_console

    world = open_world(options_from(args))
    loop = world.open_loop(ConsoleApprover(), on_event=on_event, on_stream=on_stream)
    return run_console(loop)
