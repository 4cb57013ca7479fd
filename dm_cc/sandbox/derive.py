"""The sandbox spec from the policy in force: the same gate, held by the kernel.

    spec = spec_for(gate, where, tree, Private(tmpdir="/tmp/dm_cc-1/tmp", own_dir=".dm_cc", hide=(...)),
                    LocalMachine())

A function of its arguments: the gate, the project's file tree
(:class:`~dm_cc.sandbox.tree.Tree`), facts about the session and the machine found
before (:class:`Private`), and what is at a path outside the tree and under a
directory outside the project (a :class:`Machine`: the real one, or one described
as data). Links are resolved only through ``where.fs``, as the gate resolves every
path it judges. It reads nothing else and runs no bubblewrap, so every rule of
DESIGN.md §8 is tested without it (:mod:`dm_cc.sandbox.machine` reads the machine).

* **writable**: the project root (for an MCP server only when an edit rule allows
  editing all of it), the session's TMPDIR, the git directories of a linked
  worktree or a submodule checkout outside the project -- only those verified
  (:mod:`dm_cc.sandbox.repository`; the refused are in the notes), and only with
  the project root: an agent that may edit nothing in the project writes nothing
  of its repository --, and directories outside the project that an edit rule
  opens as a whole (``edit ~/.npm/** allow`` with ``external_directory`` allowed
  there too);
* **read-only** inside them: ``.dm_cc/``, what makes git run commands
  (:mod:`dm_cc.sandbox.git`: the ``config``, ``config.worktree`` and ``hooks/`` of
  every git directory in the project -- its own, a submodule's, a nested
  repository's; a missing ``hooks/`` becomes an empty read-only one --, the other
  worktrees' git files, the top directory of ``core.hooksPath``, a config file the
  repository's config includes from the tree), every existing protected path
  (:mod:`dm_cc.sandbox.protect`: files that make code run later) the gate does not
  let be edited, and
  every existing path whose edit a rule denies, or asks about by naming it (the
  catch-all "edits ask" is not such a rule: it is the person's question for the
  edit tool, not a wall for the commands they allowed);
* **hidden**: every existing path a read rule denies or asks about (project files
  at any depth; outside the project, the paths a rule names from ``/`` or ``~``),
  every existing secret store (:mod:`dm_cc.permissions.secrets`: ``~/.ssh``,
  ``~/.aws`` ..., in the person's home and the other homes in ``Private.homes``)
  the person's own rule does not open whole, and dm_cc's own per-user directories;
* **network**: ``on`` when ``network *`` is allowed and no rule denies or asks
  about a host; ``proxy`` (each connection judged, :mod:`dm_cc.sandbox.proxy`) when
  some host is allowed and the proxy can run here; else ``off``.

A directory all of whose entries are hidden (or read-only), and which a new file
in would be too, is hidden (or made read-only) as a whole -- never one that holds
the project, TMPDIR or another writable path. A mount lands on what a symbolic
link points to, and none is made inside a hidden directory: bubblewrap can always
set the spec up (a mount it cannot make would fail every command). What a read
rule names that the spec cannot hold is said in its ``notes``.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from dm_cc.permissions import (
    NETWORK,
    UNIVERSAL_PATHS,
    Candidate,
    Gate,
    PathContextDirs,
    Request,
    Verdict,
    path_alternatives,
    path_requests,
)
from dm_cc.sandbox.git import ALWAYS_PINNED, GitDirs, hooks_path_notes, protected
from dm_cc.sandbox.protect import RUNS_LATER, protected_paths
from dm_cc.sandbox.screen import NEW_FILE, necessary
from dm_cc.sandbox.spec import Mount, Network, SandboxSpec
from dm_cc.sandbox.tree import Tree, inside

# Variables a confined command does not see (Codex's default exclusions): keys and
# tokens for the model provider and other services, and the SSH agent.
SECRET_VARIABLE = re.compile(r"KEY|SECRET|TOKEN|PASSWORD|PASSWD|CREDENTIAL", re.IGNORECASE)
UNSET_ALWAYS = ("SSH_AUTH_SOCK", "GPG_AGENT_INFO")
OUTSIDE_LIMIT = 2_000     # entries listed under one rule's directory before hiding it whole


class Machine(Protocol):
    """What the spec asks of the machine beyond the project's tree: what is at a path
    (a git directory's files outside the project, a path a rule names, a mount's
    target) and what lies under a directory outside the project that a read rule
    names. :mod:`dm_cc.sandbox.machine` has this machine and one described as data."""

    def exists(self, path: str) -> bool:
        """Whether anything is at ``path`` (absolute), a dangling symbolic link too."""
        ...

    def is_dir(self, path: str) -> bool:
        """Whether ``path`` leads to a directory (symbolic links followed)."""
        ...

    def list_under(self, directory: str, limit: int) -> list[tuple[str, bool]] | None:
        """Every path under ``directory`` (absolute, with whether it is a directory),
        symbolic links not followed; None when there are more than ``limit``."""
        ...


@dataclass(frozen=True)
class Private:
    """Facts about the session and the machine the spec needs, found before: the
    session's TMPDIR; dm_cc's own per-user directories and local sockets to hide
    (those that exist); the git directories of the project, verified (``.git`` or a
    worktree's); the environment."""

    tmpdir: str
    own_dir: str                                    # the project's own dm_cc dir (.dm_cc)
    hide: tuple[tuple[str, str], ...] = ()          # (path, why)
    git: GitDirs = GitDirs()                        # the project's git dirs, verified
    environment: tuple[str, ...] = ()               # names of the variables set now
    network_proxy: bool = False                     # whether per-host filtering is available
    hooks_paths: tuple[str, ...] = ()               # absolute dirs git's core.hooksPath names
    git_config_files: tuple[str, ...] = ()          # what git reads as config (includes)
    server: bool = False                            # for an MCP server (see spec_for)
    forwarder: tuple[str, ...] = ()                 # what the proxy needs visible inside
    # The command runs as a transaction (dm_cc.sandbox.transaction): its writes to the
    # project land in a copy-on-write view and are judged after, so a project no edit
    # rule opens is writable there too (what it writes is discarded); nothing outside.
    transaction: bool = False
    # Home directories other than the person's (dm_cc run as root reads them): the
    # secret stores in each are hidden too (dm_cc.permissions.secrets).
    homes: tuple[str, ...] = ()


def spec_for(gate: Gate, where: PathContextDirs, tree: Tree, private: Private,
             machine: Machine) -> SandboxSpec:
    """The spec for commands ``gate`` judges (see the module docstring)."""
    root = where.root.as_posix()
    notes = [*private.git.notes(), *hooks_path_notes(root, private.hooks_paths)]
    writable = [Mount(root, "the project"), Mount(private.tmpdir, "the session's TMPDIR")]
    writable += _opened_outside(gate, where, machine)
    read_only, no_hooks = protected(root, private.own_dir, tree, private.git,
                                    private.hooks_paths, private.git_config_files,
                                    machine.exists)
    read_only += _marked(gate, where, tree, "edit", _edit_blocks)
    read_only += protected_paths(gate, where, tree, private.own_dir)
    edits_nowhere = any(mount.path == root for mount in read_only)
    if edits_nowhere and private.transaction:   # its writes are judged, and discarded
        read_only = [mount for mount in read_only if mount.path != root]
    elif edits_nowhere:                         # no edit allowed anywhere in it
        writable = [mount for mount in writable if mount.path != root]
    elif private.server and not _edits_everywhere(gate, where):
        writable = [mount for mount in writable if mount.path != root]
        notes.append(SERVER_READ_ONLY)
    if any(mount.path == root for mount in writable) and not edits_nowhere:
        # the repository goes with its project
        writable += [Mount(d, GIT_DIR) for d in private.git.owned() if not inside(d, root)]
    else:  # nothing can be added in it, nor a mount point made
        no_hooks = [m for m in no_hooks if any(inside(m.path, w.path) for w in writable)]
    hidden = _marked(gate, where, tree, "read", _read_blocks) + no_hooks
    hidden += _hidden_outside(gate, where, machine, [m.path for m in writable], notes)
    hidden += _secret_stores(gate, where, machine, private.homes,
                             [m.path for m in writable], notes)
    for path, why in private.hide:
        if inside(root, path) or inside(where.cwd.as_posix(), path):
            notes.append(f"{path} ({why}) holds the project, so it is not hidden")
        elif machine.exists(path):
            hidden.append(Mount(path, why, machine.is_dir(path)))
    read_only = _landed(read_only, where, machine, notes, tree)
    hidden = _landed(hidden, where, machine, notes, tree)
    read_only, hidden = _reachable(read_only, hidden, machine)
    writable += _pinned(read_only, writable, notes)
    network, network_why = _network(gate, private, hidden)
    unset = tuple(sorted(name for name in private.environment
                         if SECRET_VARIABLE.search(name) or name in UNSET_ALWAYS))
    return SandboxSpec(
        cwd=where.cwd.as_posix(), writable=tuple(_unique(writable)),
        read_only=tuple(_unique(read_only)), hidden=tuple(_unique(hidden)), network=network,
        network_why=network_why, env={"TMPDIR": private.tmpdir}, unset=unset, notes=tuple(notes))


# --------------------------------------------------------------------------- read-only

GIT_DIR = "the project's git directory (verified: it names the project back)"
SERVER_READ_ONLY = ("an MCP server's project is read-only: no edit rule allows editing all "
                    "of it (`edit ** allow` would)")


def _edits_everywhere(gate: Gate, where: PathContextDirs) -> bool:
    """Whether an edit rule allows editing any file of the project, a new one at its
    root included: what an MCP server, whose writes no rule sees, needs to write it."""
    probe = path_requests("edit", posixpath.join(where.root.as_posix(), NEW_FILE), where)
    return gate.decide(probe).action == "allow"


PINNED = ("holds a read-only path: bound onto itself, it cannot be renamed, so that path "
          "cannot be moved aside with it and replaced")
PIN_LIMIT = 32      # directories pinned for the paths rules protect (git's and dm_cc's: all)


# --------------------------------------------------------------------------- from rules

def _edit_blocks(verdict: Verdict) -> bool:
    """An edit the sandbox refuses: denied, or asked about by a rule naming the path."""
    if verdict.action == "deny":
        return True
    return (verdict.action == "ask" and verdict.rule.action == "ask"
            and verdict.rule.pattern not in UNIVERSAL_PATHS)


def _read_blocks(verdict: Verdict) -> bool:
    return verdict.action != "allow"


def _gates(gate: Gate) -> Iterator[Gate]:
    """The gate and every ceiling's, recursively."""
    yield gate
    for ceiling in gate.ceilings:
        yield from _gates(ceiling.gate)


def _suspects(gate: Gate, permission: str) -> list[Candidate]:
    """The deny and ask rules for ``permission`` that could decide some project path:
    those after the last configured catch-all rule that does not block are skipped
    over by it... (a catch-all allow, or for edits a catch-all ask)."""
    found: list[Candidate] = []
    for one in _gates(gate):
        stack: list[Candidate] = []
        for rule in one.candidates(permission):
            universal = rule.rule.pattern in UNIVERSAL_PATHS
            passes = rule.rule.action == "allow" or (
                permission == "edit" and rule.rule.action == "ask")
            if universal and passes and not rule.layer.approvals:
                stack.clear()
            elif rule.rule.action != "allow":
                stack.append(rule)
        found += stack
    return found


def _judged(gate: Gate, permission: str, absolute: str, where: PathContextDirs) -> list[Verdict]:
    return [gate.judge(request) for request in path_requests(permission, absolute, where)
            if request.permission == permission]


def _marked(gate: Gate, where: PathContextDirs, tree: Tree, permission: str,
            blocks: Callable[[Verdict], bool]) -> list[Mount]:
    """The project paths whose ``permission`` request ``blocks``: only paths some deny
    or ask rule matches are judged by the gate; a directory whose entries are all
    blocked, as is a new file in it, is one mount."""
    suspects = _suspects(gate, permission)
    if not suspects:
        return []
    root = where.root.as_posix()

    candidates: dict[str, list[Candidate]] = {}
    for rule in suspects:
        for path in necessary(rule, where).paths(tree):
            candidates.setdefault(path, []).append(rule)

    def suspected(relative: str, rules: list[Candidate]) -> bool:
        return any(rule.matches(relative) for rule in rules)

    def verdict(relative: str) -> Verdict | None:
        verdicts = [v for v in _judged(gate, permission, posixpath.join(root, relative), where)
                    if blocks(v)]
        return verdicts[0] if verdicts else None

    blocked: dict[str, Verdict] = {}
    for path, rules in candidates.items():
        if suspected(path, rules):
            found = verdict(path)
            if found is not None:
                blocked[path] = found
    if not blocked:
        return []
    # Whole directories, deepest first: every entry blocked (or none there), and a
    # new file in it too. The project root itself may be read-only as a whole (the
    # plan agent), never hidden whole: the writable paths and pins inside it need it.
    children = tree.children()
    whole: set[str] = set()
    for directory in sorted(children, key=lambda d: -1 if d == "." else d.count("/"),
                            reverse=True):
        kids = children[directory]
        if not all(kid in whole or (kid in blocked and not tree.is_dir(kid)) for kid in kids):
            continue
        if not kids and directory not in blocked:
            continue
        probe = verdict(posixpath.join(directory, NEW_FILE) if directory != "." else NEW_FILE)
        if probe is not None:
            whole.add(directory)
            blocked.setdefault(directory, probe)
    if "." in whole and permission == "edit":
        return [Mount(root, _why(blocked["."]))]
    mounts = []
    for relative, found in sorted(blocked.items()):
        if relative == ".":
            continue
        parent = posixpath.dirname(relative)
        if _under_any(parent, whole) and not (permission == "edit" and tree.is_link(relative)):
            continue  # its directory is one mount (a link in a read-only one still
                      # leads to a writable target: it is mounted, on its target)
        if tree.is_dir(relative) and relative not in whole:
            continue  # some of its entries stay open: they are mounted one by one
        mounts.append(Mount(posixpath.join(root, relative), _why(found),
                            tree.is_dir(relative)))
    return mounts


def _under_any(path: str, directories: set[str]) -> bool:
    while path not in ("", "."):
        if path in directories:
            return True
        path = posixpath.dirname(path)
    return False


def _why(verdict: Verdict) -> str:
    rule = verdict.rule
    return f"{rule.action} {rule.permission} {rule.pattern} ({rule.source})"


# --------------------------------------------------------------------------- outside the project

def _literal_prefix(pattern: str, where: PathContextDirs) -> tuple[str, bool] | None:
    """An absolute or ``~`` pattern's directory before its first wildcard segment,
    and whether the pattern is that path alone; None for project-relative ones."""
    if pattern == "~" or pattern.startswith("~/"):
        pattern = where.home.as_posix() + pattern[1:]
    if not pattern.startswith("/") or "{" in pattern:     # braces: see _alternatives
        return None
    segments = [s for s in pattern.split("/") if s]
    literal: list[str] = []
    for segment in segments:
        if any(ch in segment for ch in "*?["):
            break
        literal.append(segment)
    return "/" + "/".join(literal), len(literal) == len(segments)


def _alternatives(rules: Iterable[Candidate]) -> Iterator[tuple[Candidate, str]]:
    """Each rule with each pattern it stands for: ``~/{.ssh,.aws}/**`` names
    ``~/.ssh`` and ``~/.aws`` (a rule with braces was once passed over whole, and
    what it denied stayed readable to confined commands)."""
    for rule in rules:
        for pattern in path_alternatives(rule.rule.pattern):
            yield rule, pattern


def _outside_rules(gate: Gate, permission: str,
                   actions: frozenset[str]) -> Iterator[Candidate]:
    for one in _gates(gate):
        for rule in one.candidates(permission):
            if rule.rule.action in actions:
                yield rule


def _hidden_outside(gate: Gate, where: PathContextDirs, machine: Machine,
                    kept: list[str], notes: list[str]) -> list[Mount]:
    """Paths outside the project that read rules deny or ask about, by name."""
    root = where.root.as_posix()
    mounts: list[Mount] = []
    seen: set[str] = set()
    for rule, pattern in _alternatives(_outside_rules(gate, "read", frozenset({"deny", "ask"}))):
        found = _literal_prefix(pattern, where)
        if found is None:
            continue
        prefix = found[0]
        if prefix == "/":
            notes.append(f"{_why_rule(rule)}: a pattern with a wildcard right after / is "
                         "held by the gate only, not by the sandbox")
            continue
        if prefix in seen or inside(prefix, root) or not machine.exists(prefix):
            continue
        seen.add(prefix)
        if not machine.is_dir(prefix):
            verdict = _first_block(_judged(gate, "read", prefix, where))
            if verdict is not None:
                mounts.append(Mount(prefix, _why(verdict), False))
            continue
        # A directory: what is read is its files (a rule naming the directory alone
        # decides listing it, not reading what is in it), so its entries are judged.
        probe = _first_block(_judged(gate, "read", posixpath.join(prefix, NEW_FILE), where))
        # A directory holding the project (or TMPDIR, any writable path) is never
        # hidden whole: that path is mounted inside it.
        holds_project = any(inside(path, prefix) for path in kept)
        listed = machine.list_under(prefix, OUTSIDE_LIMIT)
        if listed is None:
            if probe is not None and not holds_project:
                mounts.append(Mount(prefix, _why(probe)))
                notes.append(f"{prefix}: over {OUTSIDE_LIMIT:,} entries; hidden as a whole")
            else:
                notes.append(f"{_why_rule(rule)}: {prefix} has over {OUTSIDE_LIMIT:,} entries"
                             f"{' and holds a writable path' if holds_project else ''}; the rule "
                             "is held by the gate only, not by the sandbox")
            continue
        blocked = [(path, is_dir, v) for path, is_dir in listed
                   if (v := _first_block(_judged(gate, "read", path, where))) is not None]
        if probe is not None and len(blocked) == len(listed) and not holds_project:
            mounts.append(Mount(prefix, _why(blocked[0][2] if blocked else probe)))
            continue
        mounts += _collapsed(prefix, listed, {path: v for path, _, v in blocked}, kept)
    return mounts


def _collapsed(prefix: str, listed: Sequence[tuple[str, bool]],
               blocked: dict[str, Verdict], kept: list[str]) -> list[Mount]:
    """Blocked paths under ``prefix``: a directory whose entries are all blocked is one
    mount (unless it holds one of the ``kept`` paths); the rest one by one."""
    open_dirs = {d for path in kept for d in (path, *_ancestors(path)) if inside(d, prefix)}
    for path, _ in listed:
        if path not in blocked:
            parent = posixpath.dirname(path)
            while parent != prefix and parent not in open_dirs:
                open_dirs.add(parent)
                parent = posixpath.dirname(parent)
    is_dir = dict(listed)
    mounts: list[Mount] = []
    for path, verdict in sorted(blocked.items()):
        if is_dir[path] and path in open_dirs:
            continue
        parent = posixpath.dirname(path)
        if parent != prefix and parent in blocked and parent not in open_dirs:
            continue  # inside a directory hidden as a whole
        mounts.append(Mount(path, _why(verdict), is_dir[path]))
    return mounts


def _ancestors(path: str) -> Iterator[str]:
    while path not in ("/", ""):
        path = posixpath.dirname(path)
        yield path


def _why_rule(rule: Candidate) -> str:
    return f"{rule.rule.action} {rule.rule.permission} {rule.rule.pattern} ({rule.rule.source})"


def _first_block(verdicts: Sequence[Verdict]) -> Verdict | None:
    return next((v for v in verdicts if v.action != "allow"), None)


def _opened_outside(gate: Gate, where: PathContextDirs, machine: Machine) -> list[Mount]:
    """Directories outside the project that edit rules open as a whole: ``PREFIX/**``
    allowed, with a new file in it allowed (external_directory too)."""
    root = where.root.as_posix()
    mounts = []
    for rule in _outside_rules(gate, "edit", frozenset({"allow"})):
        found = _literal_prefix(rule.rule.pattern, where)
        if found is None or found[1]:
            continue
        prefix = found[0]
        rest = rule.rule.pattern.rstrip("/").rsplit("/", 1)[-1]
        if rest != "**" or _literal_prefix(rule.rule.pattern[:-3], where) != (prefix, True):
            continue
        if prefix == "/" or inside(root, prefix) or not machine.is_dir(prefix):
            continue
        probe = path_requests("edit", posixpath.join(prefix, NEW_FILE), where)
        if gate.decide(probe).action == "allow":
            mounts.append(Mount(prefix, _why(gate.judge(probe[0]))))
    return mounts


# --------------------------------------------------------------------------- secret stores

SECRET_STORE = "secret store: "   # every mount for one has this why first


def _secret_stores(gate: Gate, where: PathContextDirs, machine: Machine,
                   homes: Sequence[str], kept: list[str], notes: list[str]) -> list[Mount]:
    """Every existing secret store (in the person's home and in ``homes``) hidden, but
    what the person's own rule opens (the gate withholds every other allow): a store
    opened whole stays, one with files opened by name is hidden entry by entry, those
    files left; one holding the project or another writable path is said in the notes."""
    opened = [prefix for _, pattern in _alternatives(_outside_rules(gate, "read",
                                                                    frozenset({"allow"})))
              if (found := _literal_prefix(pattern, where)) is not None
              for prefix in (found[0],) if prefix != "/"]
    mounts: list[Mount] = []
    for path, entry in where.secrets.places([where.home.as_posix(), *homes]):
        if not machine.exists(path):
            continue
        if any(inside(k, path) for k in kept):
            notes.append(f"{path} ({SECRET_STORE}{entry.why}) holds the project or another "
                         "writable path, so it is not hidden")
            continue
        is_dir = machine.is_dir(path)
        why = f"{SECRET_STORE}{entry.why} ({entry.path})"
        # the read itself (external_directory is the tools' question, not a wall for
        # what a confined command reads)
        probe = _first_block(_judged(gate, "read", posixpath.join(path, NEW_FILE)
                                     if is_dir else path, where))
        within = is_dir and any(inside(p, path) for p in opened)
        listed = machine.list_under(path, OUTSIDE_LIMIT) if within else None
        if listed is None:
            # a file, or a store no rule opens: hidden whole unless readable. One a
            # rule opens but too large to check file by file: hidden whole (said)
            if probe is not None or within:
                mounts.append(Mount(path, why, is_dir))
            if probe is None and within:
                notes.append(f"{path} ({why}) has over {OUTSIDE_LIMIT} entries to check "
                             "against your rules one by one, so it is hidden whole")
            continue
        # opened in part: every existing file the gate does not allow reading stays
        # hidden, even when a new file in the store would be readable (``~/.ssh/**
        # allow`` then ``~/.ssh/id* allow``: the later wildcard is withheld)
        blocked = {p: verdict for p, _ in listed
                   if (verdict := _first_block(_judged(gate, "read", p, where))) is not None}
        if probe is not None and len(blocked) == len(listed):
            mounts.append(Mount(path, why, True))
        else:
            mounts += [m._replace(why=why) for m in _collapsed(path, listed, blocked, kept)]
    return mounts


# --------------------------------------------------------------------------- network

def _network(gate: Gate, private: Private, hidden: Sequence[Mount] = ()) -> tuple[Network, str]:
    """``on`` when every host is allowed; ``proxy`` when some are (each connection
    then judged by :mod:`dm_cc.sandbox.proxy`), unless a hidden path holds what the
    proxy needs inside (the Python that runs its forwarder); ``off`` otherwise. A
    host rule counts by the verdict on its own pattern, so a rule a later one
    overrides does not."""
    everything = gate.judge(Request(NETWORK, "*"))
    named = {rule.rule.pattern: gate.judge(Request(NETWORK, rule.rule.pattern))
             for rule in _outside_rules(gate, NETWORK, frozenset({"allow", "deny", "ask"}))
             if rule.rule.pattern != "*"}
    closed = [verdict for verdict in named.values() if verdict.action != "allow"]
    if everything.action == "allow" and not closed:
        return "on", _why(everything)
    opened = [verdict for verdict in named.values() if verdict.action == "allow"]
    if everything.action == "allow" or opened:
        if everything.action == "allow":
            allowed = "every host but those rules deny or ask about"
        else:
            allowed = "only " + ", ".join(sorted(v.request.pattern for v in opened))
        covered = next(((path, mount) for path in private.forwarder for mount in hidden
                        if inside(path, mount.path)), None)
        if private.network_proxy and covered is not None:
            return "off", (f"rules name hosts ({allowed}), but the proxy needs {covered[0]}, "
                           f"which the sandbox hides: {covered[1].why}")
        if private.network_proxy:
            return "proxy", f"{allowed}, each connection judged by the policy through a proxy"
        return "off", f"rules name hosts ({allowed}), and per-host filtering is not available here"
    return "off", (_why(everything) if everything.rule.permission == NETWORK
                   else "no network rule allows it")


# --------------------------------------------------------------------------- helpers

def _pinned(read_only: list[Mount], writable: list[Mount], notes: list[str]) -> list[Mount]:
    """The directories between a writable mount and a read-only path inside it,
    each bound onto itself (still writable): the kernel refuses to rename a mount
    point, so ``mv .git .git2 && mkdir -p .git/hooks`` can no longer move the
    protected hooks aside with their directory and put new ones in their place.
    Each mount slows every command's start (bwrap's cost grows faster than their
    number): those for what git and dm_cc run, and for protected paths, come first,
    then the paths rules protect, up to :data:`PIN_LIMIT` more."""
    roots = [m.path for m in writable]
    walls = {m.path for m in read_only if m.directory}
    pins: dict[str, Mount] = {}
    left_out = for_rules = 0
    for mount in read_only:
        wanted = []
        for directory in _ancestors(mount.path):
            if directory in roots or not any(inside(directory, r) for r in roots):
                break
            if _within(directory, walls):
                break       # in a read-only directory (or one): renaming it fails anyway
            if directory not in pins:
                wanted.append(directory)
        if not mount.why.startswith((*ALWAYS_PINNED, RUNS_LATER)):
            if for_rules + len(wanted) > PIN_LIMIT:
                left_out += 1
                continue
            for_rules += len(wanted)
        pins.update((d, Mount(d, PINNED)) for d in wanted)
    if left_out:
        notes.append(f"{left_out} read-only paths could be moved aside with their directory "
                     f"and replaced (over {PIN_LIMIT} directories to pin)")
    return list(pins.values())


def _within(path: str, directories: set[str]) -> bool:
    """``path`` (absolute) is one of ``directories`` or under one: a lookup per
    segment, however many directories there are."""
    while True:
        if path in directories:
            return True
        if path in ("/", ""):
            return "/" in directories
        path = posixpath.dirname(path)


def _reachable(read_only: list[Mount], hidden: list[Mount],
               machine: Machine) -> tuple[list[Mount], list[Mount]]:
    """Without the mounts inside a hidden directory (empty, and read-only: bwrap
    could not make their mount points, and every command would fail), nor a mount
    on a missing path (no ``hooks/``) inside a read-only one."""
    empty = {m.path.rstrip("/") or "/" for m in hidden if m.directory}
    walls = empty | {m.path.rstrip("/") or "/" for m in read_only if m.directory}

    def inside(mount: Mount, directories: set[str]) -> bool:     # strictly inside
        path = mount.path.rstrip("/")
        return path not in ("", "/") and _within(posixpath.dirname(path), directories)

    read_only = [m for m in read_only if not inside(m, empty)]
    hidden = [m for m in hidden if not inside(m, empty)
              and (machine.exists(m.path) or not inside(m, walls))]
    return read_only, hidden


def _landed(mounts: list[Mount], where: PathContextDirs, machine: Machine,
            notes: list[str], tree: Tree | None = None) -> list[Mount]:
    """Each mount on the path it lands on: a symbolic link (``.env -> /srv/app/env``,
    a linked ``.dm_cc``) is replaced by what it points to, so the target is hidden
    or read-only however it is reached, and bwrap never mounts on a link (it
    follows it in its own new root, where an absolute link leads nowhere and every
    command would fail, or makes the target of a dangling one on the host). A
    dangling link holds nothing to protect: it is left as it is."""
    landed = []
    resolved = _unlinked(where, tree) if tree is not None else None
    for mount in mounts:
        real = where.fs.realpath(mount.path) if resolved is None else resolved(mount.path)
        if real == mount.path:
            landed.append(mount)
        elif machine.exists(real):
            landed.append(Mount(real, f"{mount.why}, through {mount.path}", machine.is_dir(real)))
        else:
            notes.append(f"{mount.path} ({mount.why}) leads to {real}, which does not "
                         "exist: nothing is mounted there")
    return landed


def _unlinked(where: PathContextDirs, tree: Tree) -> Callable[[str], str]:
    """``realpath`` as the gate resolves it, but a path inside the project none of
    whose segments the tree lists as a link is its own real path (the root being
    its own): a lookup per segment, not a ``lstat`` each -- a thousand hidden files."""
    root = where.root.as_posix().rstrip("/")
    real_root = where.fs.realpath(root) == root
    links = tree.links()

    def resolved(path: str) -> str:
        if real_root and path.startswith(root + "/"):
            relative = path[len(root) + 1:]
            if relative and not any(part in ("", ".", "..") for part in relative.split("/")):
                probe = relative
                while probe and probe not in links:
                    probe = probe.rpartition("/")[0]
                if not probe:
                    return path
        return where.fs.realpath(path)

    return resolved


def _unique(mounts: Iterable[Mount]) -> Iterator[Mount]:
    seen: set[str] = set()
    for mount in mounts:
        if mount.path not in seen:
            seen.add(mount.path)
            yield mount


__all__ = ["Machine", "Private", "spec_for"]
