"""A session's sandbox: the mode, whether bubblewrap works here, the session's
private directory, and the spec for a gate (kept while the policy and the tree
hold).

    sandbox = Sandbox("auto", where, env)
    plan = sandbox.confine(gate, ["bash", "-c", "make"])
    plan.argv          # bwrap … -- bash -c make (or the command itself, unconfined)
    plan.refusal       # why it must not run at all (mode required, no bubblewrap)

Modes (DESIGN.md §8): ``auto`` confines where bubblewrap works and otherwise runs
unconfined (the front end says so once, and the toolbar shows it); ``required``
refuses to run unconfined; ``off`` never confines. The mode comes from the user's
config or the managed config, never from a project or the model.

When rules allow some hosts (network ``proxy``), the command runs behind the
in-sandbox forwarder (:mod:`dm_cc.sandbox.inside`), which hands its connections
over the plan's own channel (an inherited Unix socket, one per plan) to the
session's proxy (:mod:`dm_cc.sandbox.proxy`), started on first use and stopped by
:meth:`Sandbox.close` (or when dm_cc exits).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import weakref
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, Literal, NamedTuple

from dm_cc.config import PROJECT_DIR, cache_dir, config_dir, data_dir, project_dir, state_dir
from dm_cc.permissions import Gate, PathContextDirs
from dm_cc.sandbox import machine
from dm_cc.sandbox.aside import Watch, watch
from dm_cc.sandbox.derive import Private, spec_for
from dm_cc.sandbox.machine import LocalMachine, TreeLister
from dm_cc.sandbox.mask import Held, split
from dm_cc.sandbox.outside import binds, caches, discarded, mount_points, scratch_areas, summary
from dm_cc.sandbox.repository import git_config, verified_git_dirs
from dm_cc.sandbox.seccomp import filter_file, unix_socket_filter, unsupported_note
from dm_cc.sandbox.spec import SandboxSpec, bwrap_argv
from dm_cc.sandbox.transaction import Support, Transaction, support
from dm_cc.sandbox.tree import Tree

if TYPE_CHECKING:
    from dm_cc.sandbox.proxy import Proxy, Refusals

# The in-sandbox end of the network proxy (a script: it imports nothing of dm_cc).
FORWARDER = Path(__file__).with_name("inside.py")

Mode = Literal["auto", "required", "off"]
KEPT_SPECS = 8
# Mounts bubblewrap makes for a command that does not run as a transaction: its
# start grows with the square of their number (it reads its mount table again for
# each; about 80 ms at 256 on the 2-core VM dm_cc is tested on, seconds at 1,000).
# Beyond it the command is not run confined (:func:`too_many_mounts`).
MOUNT_LIMIT = 256
MODES: tuple[Mode, ...] = ("auto", "required", "off")
DEFAULT_MODE: Mode = "auto"

INSTALL_HINT = ("install bubblewrap (Debian/Ubuntu: `sudo apt install bubblewrap`; Fedora: "
                "`sudo dnf install bubblewrap`)")
USERNS_HINT = ("unprivileged user namespaces are blocked; on Ubuntu 24.04 allow them for bwrap "
               "with an AppArmor profile (see README, \"The sandbox\") or `sudo sysctl "
               "kernel.apparmor_restrict_unprivileged_userns=0`")


@dataclass(frozen=True)
class Availability:
    usable: bool
    reason: str              # what was found, or why it does not work
    bwrap: str | None = None


@cache
def availability(program: str = "bwrap") -> Availability:
    """Whether bubblewrap can confine a command here: found and tried once."""
    found = shutil.which(program)
    if found is None:
        return Availability(False, f"bubblewrap ({program}) is not installed: {INSTALL_HINT}")
    try:
        done = subprocess.run(
            [found, "--die-with-parent", "--cap-drop", "ALL", "--unshare-pid", "--unshare-net",
             "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--", "true"],
            capture_output=True, text=True, timeout=10, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Availability(False, f"{found} could not be run: {exc}")
    if done.returncode != 0:
        error = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "no message"
        hint = USERNS_HINT if ("permission" in error.lower() or "uid map" in error) else ""
        return Availability(False, f"{found} fails here: {error}" + (f"; {hint}" if hint else ""))
    version = subprocess.run([found, "--version"], capture_output=True, text=True).stdout.strip()
    return Availability(True, version or found, found)


# What a command prints when the sandbox stopped it: (text, what it means); the
# network ones only when the network is off.
WRITE_SYMPTOMS = ("Read-only file system", "EROFS")
NETWORK_SYMPTOMS = ("Network is unreachable", "Could not resolve host",
                    "Temporary failure in name resolution", "Name or service not known",
                    "getaddrinfo", "ENETUNREACH", "EAI_AGAIN", "ENOTFOUND",
                    "Failed to establish a new connection", "No address associated with hostname")
# Without the network, or through the proxy for a program that ignores the proxy
# variables, a connection to this machine finds the sandbox's own loopback, where
# nothing listens.
LOOPBACK_SYMPTOMS = ("Connection refused", "Couldn't connect to server", "ECONNREFUSED")


def stopped_by_sandbox(output: str, spec: SandboxSpec) -> str | None:
    """Why a failed confined command looks stopped by the sandbox, from what it
    printed, or None (what the sandbox itself saw comes first: :meth:`Plan.stopped`)."""
    if any(symptom in output for symptom in WRITE_SYMPTOMS):
        return ("it wrote outside the writable paths (the project and $TMPDIR) or to a "
                f"read-only one ({PROJECT_DIR}/, git config and hooks, paths edit rules protect)")
    if spec.network == "proxy":
        return _stopped_by_proxy(output, spec)
    if spec.network != "on" and any(symptom in output
                                    for symptom in NETWORK_SYMPTOMS + LOOPBACK_SYMPTOMS):
        return f"the network is {spec.network} in the sandbox ({spec.network_why})"
    return None


def _stopped_by_proxy(output: str, spec: SandboxSpec) -> str | None:
    """The proxy refused a host (its refusal says so; curl and git print only the
    status), or a program that ignores the proxy variables found no network."""
    from dm_cc.sandbox.proxy import MARK, REFUSED

    if REFUSED in output or MARK + " network access" in output or (
            "tunnel failed, response 403" in output):
        return ("the sandbox's proxy refused a host that no network rule allows (only the "
                "hosts network rules allow are reachable from inside)")
    if any(symptom in output for symptom in NETWORK_SYMPTOMS + LOOPBACK_SYMPTOMS):
        return ("in the sandbox only programs that use the proxy variables (http_proxy, "
                f"https_proxy) reach the network, and only the hosts rules allow "
                f"({spec.network_why})")
    return None


class Stopped(NamedTuple):
    """Why the sandbox stopped a command; ``seen``: from what the sandbox kept from
    happening (not a guess from what the command printed)."""

    why: str
    seen: bool


@dataclass(frozen=True)
class Plan:
    """How to run one command: ``argv`` (confined or not), or a refusal.

    ``pass_files`` are open files ``argv`` names by number (``bwrap --seccomp N``,
    the proxy's channel): the runner passes them to the child under the same numbers
    and closes them once it started. A plan runs once. ``escapable``: a command the
    sandbox stopped may be offered to run again outside it (never in mode
    ``required``)."""

    argv: list[str]
    confined: bool
    refusal: str | None = None
    spec: SandboxSpec | None = None
    pass_files: tuple[BinaryIO, ...] = ()
    escapable: bool = True
    # What no mount can hold (a new repository, a missing commondir), checked after.
    after: Watch | None = None
    # The command's copy-on-write view of the project, when it runs as a transaction:
    # its changes land only when the caller applies them (then it settles ``after``).
    transaction: Transaction | None = None
    # What it writes in its transaction's scratch areas outside the project is not
    # kept (:mod:`dm_cc.sandbox.outside`); but for these caches, :meth:`stopped`
    # says so. ``home`` names paths in it ``~/…``.
    caches: tuple[str, ...] = ()
    home: str = ""
    # The hosts the network proxy kept out, and why (filled while it runs).
    refused: list[tuple[str, str]] = field(default_factory=list)
    # A transaction's hidden and read-only paths inside the project, held by its view
    # and by discarding what it changes there (:mod:`dm_cc.sandbox.mask`), not by mounts.
    held: Held | None = None
    # The refusal may be answered by running the command outside the sandbox (the
    # sandbox cannot hold this project here, not: the sandbox is required).
    refusal_escapable: bool = False

    def stopped(self, output: str, code: int | None) -> Stopped | None:
        """Why the sandbox stopped the command, or None: what it wrote outside the
        project and the sandbox discarded, a host the proxy refused -- whatever the
        command printed, and whether it failed or not (a push to a local remote
        "succeeds" in the view) --; else, when it failed, what it printed
        (:func:`stopped_by_sandbox`). Before the transaction is finished."""
        seen = [*self._discarded(), *self._held(),
                *(f"the sandbox's proxy refused {host} ({why})"
                                      for host, why in dict(self.refused).items())]
        if seen:
            return Stopped("; ".join(seen), True)
        why = stopped_by_sandbox(output, self.spec) if code and self.spec is not None else None
        return Stopped(why, False) if why is not None else None

    def held_why(self, relative: str) -> str | None:
        """Why a change of this command's transaction at ``relative`` never lands: it is
        at or under a path the spec hides or keeps read-only; None otherwise."""
        return self.held.why(relative) if self.held else None

    def _held(self) -> list[str]:
        """What the command wrote where the spec keeps no write (a transaction holds
        those paths by discarding the change, where a mount made the write fail)."""
        if self.transaction is None or not self.held:
            return []
        try:
            changes = self.transaction.changes(ignore=self.mount_points().__contains__)
        except OSError:
            return []
        found = [change.shown for change in changes if self.held_why(change.path)]
        if not found:
            return []
        more = f" and {len(found) - 5} more" if len(found) > 5 else ""
        return [f"it wrote where the sandbox keeps no write (hidden or read-only paths): "
                f"{', '.join(found[:5])}{more}; none of it will land"]

    def _discarded(self) -> list[str]:
        transaction = self.transaction
        if transaction is None or not transaction.outside or self.spec is None:
            return []
        mounted = {m.path for _, m in self.spec.mounts()} | set(mount_points())
        try:
            found = discarded(transaction.outside_changes(ignore=mounted.__contains__),
                              self.caches)
        except OSError as exc:
            return [f"what it wrote outside the project could not be listed "
                    f"({exc.strerror or exc}); none of it was kept"]
        if not found:
            return []
        return [f"it wrote outside the project, where the sandbox keeps no write: "
                f"{summary(found, self.home)}; none of it happened"]

    def settle(self) -> str | None:
        """After the command: set aside what it made that no mount could stop and git
        would run outside the sandbox (:mod:`dm_cc.sandbox.aside`); say so. A
        transaction's plan settles after its changes landed (:meth:`finish`)."""
        if self.transaction is not None:
            return None
        return self.after.settle() if self.after is not None else None

    def finish(self, answered: Collection[str] = ()) -> str | None:
        """After a transaction's changes were applied (or not): remove what is left of
        it, then settle as :meth:`settle` would have -- but for the paths the person
        saw and let land (``answered``, absolute)."""
        if self.transaction is not None:
            self.transaction.close()
        return self.after.settle(answered) if self.after is not None else None

    def abandon(self) -> str | None:
        """After a cancelled command: what it changed in the project is dropped (a
        transaction's changes are judged only for a command that ended: the person
        who stopped it is not asked about what it left half done), what no mount
        could hold settled as after any command; says so."""
        if self.transaction is None:
            return self.settle()
        try:
            count = len(self.transaction.changes(ignore=self.mount_points().__contains__))
        except OSError:
            count = 0
        aside = self.finish()
        dropped = (f"(none of its {count} change{'' if count == 1 else 's'} to the project "
                   "landed: a cancelled command's changes are discarded)") if count else None
        return "\n".join(filter(None, (dropped, aside))) or None

    def mount_points(self) -> frozenset[str]:
        """The project-relative paths the spec mounts on (bubblewrap may make an empty
        one in the command's view: no change of the command's)."""
        if self.spec is None or self.transaction is None:
            return frozenset()
        root = self.transaction.root.rstrip("/") + "/"
        return frozenset(m.path[len(root):] for _, m in self.spec.mounts()
                         if m.path.startswith(root))


def too_many_mounts(spec: SandboxSpec, why_no_transactions: str) -> str:
    """Why a command is not run confined when its spec needs more mounts than
    bubblewrap can make quickly, and commands cannot run as transactions here."""
    inside = len(spec.hidden) + len(spec.read_only)
    return (f"Not run confined: the sandbox would need {len(spec.mounts()):,} mounts for this "
            f"project ({len(spec.hidden):,} hidden and {len(spec.read_only):,} read-only paths; "
            f"over {MOUNT_LIMIT}), and bubblewrap's start grows with the square of their "
            f"number (seconds a command, failing beyond a few thousand). Where commands run "
            f"as transactions the sandbox holds the {inside:,} paths without mounts, but not "
            f"here: {why_no_transactions}. Hide fewer paths (narrower read rules), or run it "
            "outside the sandbox if you allow it.")


def private_paths(env: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """What a confined command never sees: dm_cc's per-user directories (saved
    approvals, sessions, audit, history, undo store, settings) and local sockets that
    act for the user (the session bus, keyrings and agents in /run/user, Docker's
    socket)."""
    own = "dm_cc's own per-user directory"
    found = [(str(config_dir(env)), own + " (settings, policy)"),
             (str(data_dir(env)), own + " (approvals, sessions, audit)"),
             (str(state_dir(env)), own + " (history, undo store)"),
             (str(cache_dir(env)), own + " (cache)"),
             (f"/run/user/{os.getuid()}", "the user's session sockets (dbus, agents, keyrings)"),
             ("/run/docker.sock", "Docker's socket (root on this machine)"),
             ("/var/run/docker.sock", "Docker's socket (root on this machine)")]
    agent = env.get("SSH_AUTH_SOCK")
    if agent:
        found.append((agent, "the SSH agent's socket (signs with your keys)"))
    return tuple((os.path.realpath(path), why) for path, why in found)


class Sandbox:
    """One session's sandbox (see the module docstring)."""

    def __init__(self, mode: Mode, where: PathContextDirs, env: Mapping[str, str] = os.environ,
                 *, probe: Availability | None = None, why_mode: str = "default") -> None:
        self.mode = mode
        self.why_mode = why_mode
        self.where = where
        self.env = env
        self._probe = probe
        self._lister = TreeLister()
        self._private: Path | None = None
        # The last specs, by gate (a parent and its subagents take turns), whether for
        # an MCP server and whether for a transaction: (gate, (server, transaction),
        # key, spec, what it was derived from).
        self._specs: list[tuple[Gate, tuple[bool, bool], int, SandboxSpec, Private]] = []
        self._proxy: Proxy | None = None
        self._last_split: tuple[SandboxSpec, SandboxSpec, Held] | None = None
        self._watch: Watch | None = None     # the last command's (reused while the tree holds)
        self._cache_dirs: tuple[str, tuple[str, ...]] | None = None

    @property
    def availability(self) -> Availability:
        if self._probe is None:
            self._probe = availability()
        return self._probe

    @property
    def confining(self) -> bool:
        return self.mode != "off" and self.availability.usable

    def transactions(self) -> Support:
        """Whether confined commands run as transactions here (:mod:`dm_cc.sandbox.
        transaction`): confining, and an overlay works in a user namespace with its
        upper directory in dm_cc's state directory. Tried once per directory."""
        if not self.confining:
            return Support(False, "commands are not confined (" + self.state() + ")")
        if self.transactions_dir.is_relative_to(self.where.root):
            return Support(False, "dm_cc's state directory is inside the project")
        found = support(str(self.transactions_dir))
        if found.usable and os.stat(self.transactions_dir).st_dev != _device(self.where.root):
            return Support(True, found.reason + "; on another file system than the project, "
                           "so applying a change copies it")
        return found

    @property
    def transactional(self) -> bool:
        return self.transactions().usable

    @property
    def masks_dir(self) -> Path:
        """Where the transactions' masks are kept (:mod:`dm_cc.sandbox.mask`; hidden
        from commands, as all of dm_cc's state directory)."""
        return state_dir(self.env) / "masks"

    @property
    def transactions_dir(self) -> Path:
        """Where each command's upper directory lives (hidden from commands)."""
        return state_dir(self.env) / "transactions"

    def state(self) -> str:
        """One word or two for the toolbar and ``sandbox status`` (and when commands
        do not run as transactions, that their effects are not judged)."""
        if self.mode == "off":
            return "off"
        if self.availability.usable:
            state = "bwrap" if self.mode == "auto" else "bwrap (required)"
            return state if self.transactional else f"{state}, effects not judged"
        return "none (bubblewrap missing)" if self.mode == "auto" else "required: unavailable"

    def warning(self) -> str | None:
        """What to say once at start when commands will not be confined, or their
        effects not judged (tries bubblewrap and the overlay: at start, not later)."""
        if self.mode == "off":
            return None
        if self.availability.usable:
            found = self.transactions()
            return None if found.usable else (
                f"sandbox: commands run confined, but what they change is not judged before "
                f"it lands (no transactions here: {found.reason})")
        if self.mode == "required":
            return ("sandbox: required, but bubblewrap cannot confine commands here, so the "
                    f"bash tool will refuse to run: {self.availability.reason}")
        return (f"sandbox: commands run unconfined: {self.availability.reason}. Set `sandbox: "
                "off` in your config.yaml to silence this, or `required` to refuse instead.")

    # ------------------------------------------------------------------ the spec

    def private_dir(self) -> Path:
        """The session's own directory: ``tmp/`` (TMPDIR, writable inside) and an empty
        file bound over hidden files; removed when the sandbox is collected or dm_cc exits."""
        if self._private is None:
            base = Path(tempfile.mkdtemp(prefix="dm_cc-sandbox-"))
            (base / "tmp").mkdir(mode=0o700)
            (base / "empty").touch(mode=0o444)
            self._private = base
            weakref.finalize(self, shutil.rmtree, base, True)
        return self._private

    def spec(self, gate: Gate, *, server: bool = False,
             transaction: bool = False) -> SandboxSpec:
        """The spec for ``gate``, derived again only when the gate, the project's
        tree or its git directories changed. ``server``: an MCP server's, where the
        project is writable only if an edit rule allows editing all of it;
        ``transaction``: a command run as a transaction's (the project writable in its
        view even where no edit is allowed: what it writes there is judged)."""
        return self._derived(gate, server, transaction)[0]

    def _derived(self, gate: Gate, server: bool,
                 transaction: bool = False) -> tuple[SandboxSpec, Tree, Private]:
        """The spec, and the tree and facts it was derived from."""
        root = self.where.root.as_posix()
        hide = private_paths(self.env)
        tree = self._lister.list(root)
        git = verified_git_dirs(self.where.root, self.where.home)
        homes = machine.other_homes(self.where.home.as_posix())
        # a secret store made meanwhile (`aws configure` in another terminal) is hidden
        # from the next command on: which exist is part of the key (a stat each)
        stores = self.where.secrets.places([self.where.home.as_posix(), *homes])
        key = hash((tree.signature, tuple(os.path.lexists(path) for path, _ in hide), git,
                    homes, tuple(os.path.lexists(path) for path, _ in stores)))
        kind = (server, transaction)
        for known, known_kind, known_key, spec, private in self._specs:
            if known is gate and known_kind == kind and known_key == key:
                return spec, tree, private
        config = git_config(self.where.root, git)
        private = Private(
            tmpdir=str(self.private_dir() / "tmp"), own_dir=PROJECT_DIR, hide=hide,
            git=git, environment=tuple(self.env), hooks_paths=config.hooks_paths,
            git_config_files=config.files, network_proxy=self._proxy_possible(),
            forwarder=self._forwarder_paths(), server=server, transaction=transaction,
            homes=homes)
        spec = with_unix_socket_note(spec_for(gate, self.where, tree, private, LocalMachine()))
        kept = [entry for entry in self._specs if not (entry[0] is gate and entry[1] == kind)]
        self._specs = [*kept[-(KEPT_SPECS - 1):], (gate, kind, key, spec, private)]
        return spec, tree, private

    def _caches(self, home: str) -> tuple[str, ...]:
        """The cache directories whose writes are dropped without a word
        (:func:`~dm_cc.sandbox.outside.caches`), resolved once a session: they only
        decide what a stopped command's message leaves out (no write outside the
        project is kept either way), so a link changed meanwhile weakens nothing."""
        if self._cache_dirs is None or self._cache_dirs[0] != home:
            self._cache_dirs = (home, caches(home, self.env))
        return self._cache_dirs[1]

    def _split(self, spec: SandboxSpec) -> tuple[SandboxSpec, Held]:
        """A transaction's spec without its mounts inside the project, and what its
        view holds instead (:func:`~dm_cc.sandbox.mask.split`): kept for the last
        spec, so a command's start does not depend on how many paths are held."""
        if self._last_split is None or self._last_split[0] is not spec:
            self._last_split = (spec, *split(spec, self.where.root.as_posix()))
        return self._last_split[1], self._last_split[2]

    def confine(self, gate: Gate, command: Sequence[str], *, cwd: str | None = None,
                server: bool = False, transaction: bool = False) -> Plan:
        """How to run ``command`` under ``gate`` in this mode (in ``cwd``, else the
        working directory; ``server``: an MCP server, see :meth:`spec`).
        ``transaction``: run it against a copy-on-write view of the project, where
        transactions work here (the plan's ``transaction``; else as before)."""
        if self.mode == "off":
            return Plan(list(command), confined=False)
        if not self.availability.usable:
            if self.mode == "required":
                return Plan(list(command), confined=False, refusal=(
                    "Not run: the sandbox is required (sandbox: required) but bubblewrap "
                    f"cannot confine commands here: {self.availability.reason}"))
            return Plan(list(command), confined=False)
        # .dm_cc/ is a mount point, kept read-only; where it cannot be made, neither
        # can the command make it (it runs as the same user)
        with contextlib.suppress(OSError):
            project_dir(self.where.root).mkdir(exist_ok=True)
        transaction = transaction and not server and self.transactional
        spec, tree, private = self._derived(gate, server, transaction)
        held = Held(self.where.root.as_posix())
        if transaction:
            # inside the project the view holds the hidden and read-only paths: no
            # mount each (:mod:`dm_cc.sandbox.mask`)
            spec, held = self._split(spec)
        elif not server and len(spec.mounts()) > MOUNT_LIMIT:   # a server starts once
            return Plan(list(command), confined=False, refusal=too_many_mounts(
                spec, self.transactions().reason), escapable=self.mode != "required",
                refusal_escapable=True)
        if cwd is not None:
            spec = replace(spec, cwd=cwd)
        try:
            guard = unix_socket_file(spec)
        except OSError as exc:
            return Plan(list(command), confined=False, refusal=(
                f"Not run: the sandbox's seccomp filter could not be prepared: {exc}"))
        passed = [guard] if guard is not None else []
        refused: list[tuple[str, str]] = []
        if spec.network == "proxy":
            channel = self._channel(gate, lambda host, why: refused.append((host, why)))
            passed.append(channel)
            # run by the Python running dm_cc, isolated from the project's and the
            # user's packages (-I -S)
            command = [sys.executable, "-I", "-S", str(FORWARDER), str(channel.fileno()),
                       "--", *command]
        began: Transaction | None = None
        if transaction:
            try:
                began = Transaction.begin(self.where.root.as_posix(), self.transactions_dir,
                                          scratch_areas(spec, self.where, self.transactions_dir),
                                          held.layer(self.masks_dir))
            except OSError as exc:
                return Plan(list(command), confined=False, refusal=(
                    f"Not run: the command's copy-on-write view could not be prepared: {exc}"))
        # in a transaction bubblewrap runs as root of the unshared namespace: a user
        # namespace of its own gives the command back the person's ids
        ids = ("--unshare-user", "--uid", str(os.getuid()), "--gid", str(os.getgid())) \
            if began is not None else ()
        first = binds(began.outside, began.outside_views(), spec) if began is not None else ()
        argv = bwrap_argv(spec, command, empty_file=str(self.private_dir() / "empty"),
                          bwrap=self.availability.bwrap or "bwrap",
                          seccomp_fd=guard.fileno() if guard is not None else None, extra=ids,
                          first=first)
        if began is not None:
            argv = began.wrap(argv)
        home = str(self.where.home)
        self._watch = after = watch(
            self.where.root.as_posix(), self._lister, tree, private.git, private.hooks_paths,
            private.git_config_files, self.where.protected,
            str(state_dir(self.env) / "set-aside"), previous=self._watch)
        return Plan(argv, confined=True, spec=spec, pass_files=tuple(passed),
                    escapable=self.mode != "required", transaction=began, held=held,
                    caches=self._caches(home), home=home, refused=refused, after=after)

    # ------------------------------------------------------------------ the network proxy

    def _proxy_possible(self) -> bool:
        """Per-host network rules can be held here: there is a Python to run the
        in-sandbox forwarder with."""
        return bool(sys.executable)

    def _forwarder_paths(self) -> tuple[str, ...]:
        """What the in-sandbox forwarder needs to see: the Python, its standard
        library and the forwarder's file."""
        return tuple(os.path.realpath(path) for path in (
            sys.executable, sys.base_prefix, FORWARDER))

    def proxy(self) -> Proxy:
        """The session's network proxy, started on first use (DESIGN.md §8)."""
        if self._proxy is None:
            from dm_cc.sandbox.proxy import Proxy

            self._proxy = Proxy()
            weakref.finalize(self, self._proxy.close)
        return self._proxy

    def _channel(self, gate: Gate, refused: Refusals) -> BinaryIO:
        """A new channel to the proxy whose connections are judged by ``gate`` (each
        host kept out told to ``refused``): its inside end, as a file to pass (the
        runner closes it once the command started; the proxy's end closes when the
        command and everything it left have gone)."""
        inside = self.proxy().channel(gate, refused)
        return open(inside.detach(), "rb", buffering=0)  # noqa: SIM115 - the plan's to close

    def close(self) -> None:
        """Stop the network proxy, if it ran (the private directory goes when the
        sandbox is collected or dm_cc exits)."""
        if self._proxy is not None:
            self._proxy.close()
            self._proxy = None


def _device(path: Path) -> int:
    return os.stat(path).st_dev


# ------------------------------------------------------------------ Unix sockets

def guards_unix_sockets(spec: SandboxSpec) -> bool:
    """Whether ``spec``'s command is kept off Unix sockets (:mod:`dm_cc.sandbox.seccomp`):
    whenever the network is not on. With the network on (a rule allows any host) the
    command shares the host's network namespace, so it reaches the loopback services
    and abstract sockets anyway, and the sockets on the file system go with them.
    Behind the proxy (``proxy``) too: the in-sandbox forwarder reaches the proxy over
    a channel it inherits, and makes no Unix socket."""
    return spec.network != "on"


def with_unix_socket_note(spec: SandboxSpec) -> SandboxSpec:
    """``spec``, with a note when it should keep Unix sockets out but this host's
    architecture has no filter (the command then runs without it)."""
    if not guards_unix_sockets(spec) or _filter() is not None:
        return spec
    return replace(spec, notes=(*spec.notes, unsupported_note()))


def unix_socket_file(spec: SandboxSpec) -> BinaryIO | None:
    """A fresh file holding the filter for ``spec``'s command (for ``--seccomp``), or
    None: the network is on, or there is no filter for this architecture."""
    program = _filter() if guards_unix_sockets(spec) else None
    return filter_file(program) if program is not None else None


@cache
def _filter() -> bytes | None:
    return unix_socket_filter()
