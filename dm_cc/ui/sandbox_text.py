"""The sandbox in words: what ``dm_cc sandbox status|run`` print, and how the
REPL and ``dm_cc run`` name a command the sandbox stopped.

    status_lines(sandbox, spec, agent)   bubblewrap, the mode and where it was set,
                                         then the spec: writable, read-only, hidden,
                                         network, environment, notes
    where_line(plan, sandbox)            "confined by bubblewrap (…)" or why not
    shown_path(path, where, tmpdir)      ".env", "src/", "~/.ssh/", "$TMPDIR", "/etc/"

Paths inside the project are shown relative to it, those under the home directory
with ``~``, the session's TMPDIR as ``$TMPDIR`` (a new directory each session);
directories end in ``/``. Paths with the same reason are listed together under it.
Plain text only (no prompt_toolkit): ``dm_cc sandbox status`` is a light command.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from dm_cc.permissions import SANDBOX_ESCAPE, Decision

if TYPE_CHECKING:
    from dm_cc.permissions import PathContextDirs
    from dm_cc.sandbox import Mount, Plan, Sandbox, SandboxSpec

PATH_COLUMN = 34        # the widest path column before reasons move to their own line
GROUP_LIMIT = 12        # paths listed under one reason before "… and N more"
ESCAPE_QUESTION = "The sandbox stopped this command. Run it again outside the sandbox?"


def is_escape(decision: Decision) -> bool:
    """Whether ``decision`` is about running a stopped command outside the sandbox."""
    return any(v.request.permission == SANDBOX_ESCAPE for v in decision.verdicts)


def shown_path(path: str, where: PathContextDirs, tmpdir: str | None = None,
               directory: bool = False) -> str:
    root, home = where.root.as_posix(), where.home.as_posix()
    slash = "/" if directory else ""
    if tmpdir is not None and path == tmpdir:
        return "$TMPDIR"
    if path == root:
        return "./"
    if path.startswith(root + "/"):
        return path[len(root) + 1:] + slash
    if path == home:
        return "~/"
    if path.startswith(home + "/"):
        return "~/" + path[len(home) + 1:] + slash
    return path + slash


def mode_line(sandbox: Sandbox) -> str:
    """``mode: auto (the default)`` or ``mode: required (set at /etc/dm_cc/config.yaml:1)``."""
    where = "the default" if sandbox.why_mode == "default" else f"set at {sandbox.why_mode}"
    return f"mode: {sandbox.mode} ({where})"


def effect_line(sandbox: Sandbox) -> str:
    """What the mode and bubblewrap mean for the bash tool, in one sentence."""
    if sandbox.mode == "off":
        return "shell commands run unconfined (sandbox: off); below is what would hold them"
    if sandbox.confining:
        return "shell commands run confined, as below"
    if sandbox.mode == "required":
        return ("the bash tool refuses to run commands (sandbox: required, and bubblewrap "
                "cannot confine them here); below is what would hold them")
    return ("shell commands run unconfined (bubblewrap cannot confine them here); "
            "below is what would hold them")


def transactions_line(sandbox: Sandbox) -> str:
    """Whether what a command changes is judged before it lands (docs/sandbox.md)."""
    found = sandbox.transactions()
    if found.usable:
        return ("transactions: each command runs against a copy-on-write view of the "
                f"project, and what it changed is judged before it lands ({found.reason})")
    return f"transactions: no, commands' effects are not judged: {found.reason}"


def bubblewrap_line(sandbox: Sandbox) -> str:
    found = sandbox.availability
    if found.usable:
        return f"bubblewrap: {found.bwrap} ({found.reason})"
    return f"bubblewrap: not usable: {found.reason}"


def status_lines(sandbox: Sandbox, spec: SandboxSpec, agent: str) -> Iterator[str]:
    """The whole ``dm_cc sandbox status`` report."""
    where = sandbox.where
    tmpdir = spec.env.get("TMPDIR")
    yield bubblewrap_line(sandbox)
    yield mode_line(sandbox) + ": " + effect_line(sandbox)
    yield transactions_line(sandbox)
    yield f"project: {where.root.as_posix()} · agent: {agent}"
    sections: Sequence[tuple[str, tuple[Mount, ...]]] = (
        ("writable:", spec.writable),
        ("read-only: everything else (your home too), and inside the writable paths:",
         spec.read_only),
        ("hidden (an empty file or directory in its place):", spec.hidden))
    shown = {m.path: shown_path(m.path, where, tmpdir, m.directory)
             for _, mounts in sections for m in mounts}
    column = min(PATH_COLUMN, max((len(s) for s in shown.values()), default=0))
    for title, mounts in sections:
        yield ""
        yield title
        yield from _grouped(mounts, shown, column)
    stores = where.secrets.entries
    # (a store's mount says so first: dm_cc.sandbox.derive.SECRET_STORE; it may land on
    # a link's target, where its path no longer names the store)
    here = sum(1 for m in spec.hidden if m.why.startswith("secret store: "))
    yield (f"  secret stores: {len(stores)} known ({', '.join(e.path for e in stores[:4])} …; "
           f"docs/security.md), {here} here, hidden above unless your own rule opens one")
    yield ""
    yield f"network: {spec.network} ({spec.network_why})"
    for name, value in spec.env.items():
        if value == tmpdir:
            yield (f"environment: {name}=$TMPDIR, a new directory under "
                   f"{posixpath.dirname(posixpath.dirname(value))} each session, removed when "
                   "it ends")
        else:
            yield f"environment: {name}={value}"
    yield "  removed (they may hold secrets): " + (", ".join(spec.unset) or "none")
    if spec.notes:
        yield ""
        yield "notes:"
        for note in spec.notes:
            yield f"  {note}"


def _grouped(mounts: Sequence[Mount], shown: dict[str, str], column: int) -> Iterator[str]:
    """Each reason once, its paths under it: the first beside it, the rest below."""
    if not mounts:
        yield "  (none)"
        return
    groups: dict[str, list[str]] = {}
    for mount in mounts:
        groups.setdefault(mount.why, []).append(shown[mount.path])
    for why, paths in groups.items():
        first, *rest = paths
        if len(first) > column:
            yield f"  {first}"
            yield f"  {'':<{column}}  {why}"
        else:
            yield f"  {first:<{column}}  {why}"
        for path in rest[:GROUP_LIMIT - 1]:
            yield f"  {path}"
        if len(rest) > GROUP_LIMIT - 1:
            yield f"  … and {len(rest) - GROUP_LIMIT + 1} more (--json lists them all)"


def where_line(plan: Plan, sandbox: Sandbox) -> str:
    """Where ``dm_cc sandbox run`` runs the command, for stderr."""
    if plan.confined and plan.spec is not None:
        return (f"confined by bubblewrap (mode {sandbox.mode}; network {plan.spec.network}; "
                "`dm_cc sandbox status` shows what it may touch)")
    if sandbox.mode == "off":
        return f"not confined: the sandbox is off (sandbox: off, set at {sandbox.why_mode})"
    return f"not confined: {sandbox.availability.reason}"
