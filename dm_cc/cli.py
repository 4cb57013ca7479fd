"""The command line: ``main(argv=None) -> int`` is the composition root.

Exit status: 0 success (whatever a ``policy check`` decides), 1 a failed
``policy test`` or ``policy lint`` findings, 2 a policy, configuration or usage
error (reported as ``file:line: message``; never a traceback).

Heavy modules (litellm, mcp) are imported only by the commands that need them,
never by ``--help`` or ``policy …``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from dm_cc import __version__
from dm_cc.errors import DmccError


class _Parser(argparse.ArgumentParser):
    """argparse, but usage errors exit 2 through main() rather than sys.exit."""

    def error(self, message: str):  # type: ignore[override]
        self.print_usage(sys.stderr)
        raise SystemExit(2, f"{self.prog}: error: {message}")


def build_parser() -> argparse.ArgumentParser:
    from dm_cc import cli_policy

    parser = _Parser(prog="dm_cc", description=(
        "A terminal coding assistant whose every tool call is judged by an ordered, "
        "explainable rule set."))
    parser.add_argument("--version", action="version", version=f"dm_cc {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    cli_policy.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as stop:
        if len(stop.args) > 1:
            print(stop.args[1], file=sys.stderr)
        code = stop.args[0] if stop.args else 0
        return code if isinstance(code, int) else (0 if code is None else 2)
    if args.command is None:
        parser.print_help()
        return 0
    try:
        return args.handler(args)
    except DmccError as exc:
        print(f"dm_cc: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `dm_cc policy show | head`
        sys.stderr.close()
        return 0
