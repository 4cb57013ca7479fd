"""What a confined command may touch, as data (DESIGN.md §8), and the ``bwrap``
command line that holds it.

    spec = SandboxSpec(cwd="/p", writable=(Mount("/p", "project"),), ...)
    bwrap_argv(spec, ["bash", "-c", "make"], empty_file="/run/…/empty")

Everything is bound read-only (``--ro-bind / /``), then the writable paths on top,
then the read-only paths inside them (``.dm_cc/``, ``.git/hooks`` …), then the
hidden ones (an empty tmpfs or an empty file in their place). Mounts go deepest
last, so a path inside another always lands on top of it. All capabilities are
dropped (as root too: no ``umount`` of a hidden file), the command gets its own
PID, IPC and UTS namespaces, its own network namespace unless the network is on,
and dies with dm_cc. Unless the network is on, a seccomp filter given by the
caller (``seccomp_fd``) keeps it off Unix sockets too (:mod:`dm_cc.sandbox.seccomp`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal, NamedTuple

Kind = Literal["writable", "read-only", "hidden"]
Network = Literal["off", "on", "proxy"]
# Mounts of the same depth: writable first, then read-only, then hidden on top.
_ORDER: dict[str, int] = {"writable": 0, "read-only": 1, "hidden": 2}


class Mount(NamedTuple):
    """One path and why it is so (a rule ``file:line``, ``the project`` …)."""

    path: str
    why: str
    directory: bool = True

    def depth(self) -> int:
        return self.path.rstrip("/").count("/")


@dataclass(frozen=True, slots=True)
class SandboxSpec:
    cwd: str
    writable: tuple[Mount, ...] = ()
    read_only: tuple[Mount, ...] = ()
    hidden: tuple[Mount, ...] = ()
    network: Network = "off"
    network_why: str = "no network rule allows it"
    env: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    unset: tuple[str, ...] = ()          # variables removed from the command's environment
    notes: tuple[str, ...] = ()          # what the spec could not hold, for `sandbox status`

    def mounts(self) -> list[tuple[Kind, Mount]]:
        """Every mount in the order bwrap must apply them."""
        tagged: list[tuple[Kind, Mount]] = [
            *(("writable", m) for m in self.writable),
            *(("read-only", m) for m in self.read_only),
            *(("hidden", m) for m in self.hidden)]
        return sorted(tagged, key=lambda t: (t[1].depth(), _ORDER[t[0]], t[1].path))

    def as_json(self) -> dict[str, object]:
        def paths(mounts: Sequence[Mount]) -> list[dict[str, object]]:
            return [{"path": m.path, "why": m.why, "directory": m.directory} for m in mounts]

        return {"cwd": self.cwd, "writable": paths(self.writable),
                "read_only": paths(self.read_only), "hidden": paths(self.hidden),
                "network": self.network, "network_why": self.network_why,
                "env": dict(self.env), "unset": list(self.unset), "notes": list(self.notes)}


def bwrap_argv(spec: SandboxSpec, command: Sequence[str], *, empty_file: str,
               bwrap: str = "bwrap", seccomp_fd: int | None = None,
               extra: Sequence[str] = (), first: Sequence[str] = ()) -> list[str]:
    """The ``bwrap`` command line running ``command`` confined by ``spec``.
    ``empty_file`` is an empty regular file bound over each hidden file;
    ``seccomp_fd`` an open file bwrap reads a seccomp filter from (``--seccomp``,
    see :mod:`dm_cc.sandbox.seccomp`), passed to bwrap under that number; ``first``
    mounts made before the spec's (a transaction's scratch areas, which hold none
    of the spec's mounts: :mod:`dm_cc.sandbox.outside`)."""
    argv = [bwrap, "--die-with-parent", "--new-session", "--cap-drop", "ALL",
            "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    if spec.network != "on":
        argv.append("--unshare-net")
    argv += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", *first]
    for kind, mount in spec.mounts():
        if kind == "writable":
            argv += ["--bind", mount.path, mount.path]
        elif kind == "read-only":
            argv += ["--ro-bind", mount.path, mount.path]
        elif mount.directory:
            argv += ["--tmpfs", mount.path, "--remount-ro", mount.path]
        else:
            argv += ["--ro-bind", empty_file, mount.path]
    for name in spec.unset:
        argv += ["--unsetenv", name]
    for name, value in spec.env.items():
        argv += ["--setenv", name, value]
    if seccomp_fd is not None:
        argv += ["--seccomp", str(seccomp_fd)]
    argv += [*extra, "--chdir", spec.cwd, "--", *command]
    return argv
