"""The command line: ``main(argv=None) -> int``. One module per command group
(``run``, ``sessions``, ``approvals``, ``policy``, ``sandbox``, ``trust``, ``mcp``, ``audit``,
``undo``; ``interactive`` when no command is named), each thin: parse, ask the world
(:mod:`dm_cc.compose`), print.

Exit status: 0 success (whatever a ``policy check`` decides), 1 a failed
``policy test``, ``policy lint`` findings, a broken ``audit verify`` or an ``undo``
refused, 2 a policy, configuration, saved-approvals or usage error (reported as
``file:line: message``; never a traceback).

Heavy modules (litellm, mcp) are imported only by the commands that need them,
never by ``--help`` or ``policy …``.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from functools import cache
from typing import Any, NoReturn

from dm_cc import __version__
from dm_cc.errors import DmccError

__all__ = ["main"]


@cache
def _columns() -> int:
    """The terminal's width, as ``shutil.get_terminal_size`` would say (asked once)."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 80
    return columns if columns > 0 else 80


class _Formatter(argparse.HelpFormatter):
    """argparse's help formatter with the width asked once: argparse makes one for
    every argument added, and each would query the terminal (importing shutil)."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog, width=_columns() - 2)


class _Parser(argparse.ArgumentParser):
    """argparse, but usage errors exit 2 through main() rather than sys.exit."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        raise SystemExit(2, f"{self.prog}: error: {message}")


# Subcommands and the module that registers each, in help order. Only the one
# named on the command line is imported and built (and a group builds only its
# subcommand named next, when one is): `dm_cc policy …` stays fast.
COMMANDS = {"run": "dm_cc.cli.run", "sessions": "dm_cc.cli.sessions",
            "approvals": "dm_cc.cli.approvals", "policy": "dm_cc.cli.policy",
            "sandbox": "dm_cc.cli.sandbox", "trust": "dm_cc.cli.trust",
            "untrust": "dm_cc.cli.trust",
            "mcp": "dm_cc.cli.mcp_servers", "audit": "dm_cc.cli.audit", "undo": "dm_cc.cli.undo"}


def _wanted(argv: Sequence[str]) -> str | None:
    """The subcommand named in ``argv``, if any (None: build them all, e.g. for help)."""
    words = [word for word in argv if not word.startswith("-")]
    return words[0] if words and words[0] in COMMANDS and argv[0] == words[0] else None


def build_parser(argv: Sequence[str] = ()) -> argparse.ArgumentParser:
    from dm_cc.cli.options import add_session_options

    parser = _Parser(prog="dm_cc", description=(
        "A terminal coding assistant whose every tool call is judged by an ordered, "
        "explainable rule set."))
    parser.add_argument("--version", action="version", version=f"dm_cc {__version__}")
    add_session_options(parser)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    wanted = _wanted(argv)
    for module in dict.fromkeys(module for name, module in COMMANDS.items()
                                if wanted is None or name == wanted):
        importlib.import_module(module).register(commands, argv[1:] if wanted else ())
    parser.set_defaults(handler=_interactive)
    return parser


def _interactive(args: argparse.Namespace) -> int:
    from dm_cc.cli.interactive import run_interactive

    return run_interactive(args)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command ``argv`` names; None: this process's own (``sys.argv``), and the
    process ends when it returns (:func:`_ending`)."""
    if argv is None:
        try:
            return main(sys.argv[1:])
        finally:
            _ending()
    argv = list(argv)
    for stream in (sys.stdout, sys.stderr):  # a file name in another encoding must not crash
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="replace")
    parser = build_parser(argv)
    try:
        args = parser.parse_args(argv)
    except SystemExit as stop:
        if len(stop.args) > 1:
            print(stop.args[1], file=sys.stderr)
        status = stop.args[0] if stop.args else 0
        return status if isinstance(status, int) else (0 if status is None else 2)
    try:
        code: int = args.handler(args)
        return code
    except DmccError as exc:
        print(f"dm_cc: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `dm_cc policy show | head`
        sys.stderr.close()
        return 0


def _ending() -> None:
    """The process is about to end: its objects need not be collected. Python's
    finalization runs the cycle collector over every object still alive, which
    with litellm loaded (some 300,000, mostly in cycles) takes 0.5 s and more
    after the answer is printed; frozen, they are left to the exit. Everything that
    must be written is closed or flushed by then (stores, the world, ``atexit``)."""
    import gc

    gc.freeze()
