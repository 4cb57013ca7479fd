"""A real project for the sandbox tests: its tree, its user's home, dm_cc's
per-user directories, a policy file, and the gate and spec dm_cc builds for it."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path

from dm_cc.compose import Options, World, open_world
from dm_cc.permissions import Gate, Rule
from dm_cc.sandbox.host import Availability, Sandbox
from dm_cc.sandbox.spec import Mount, SandboxSpec
from dm_cc.tools.bash import Ran, run_plan
from support.as_user import as_user

WORKS = Availability(True, "bwrap (assumed: the spec is derived without running it)", "bwrap")


class Project:
    """A real project tree, its user's home and dm_cc's per-user directories."""

    def __init__(self, tmp: Path, root: Path | None = None) -> None:
        """``tmp/project`` with a stand-in ``.git`` (config and hooks), or ``root`` as
        it is (a worktree made by git, say)."""
        self.tmp = tmp
        self.root = root or tmp / "project"
        self.home = tmp / "home"
        self.dm_home = tmp / "dmhome"
        if root is None:
            (self.root / ".git" / "hooks").mkdir(parents=True)
            (self.root / ".git" / "config").write_text("[core]\n")
        self.root.mkdir(parents=True, exist_ok=True)
        self.home.mkdir(exist_ok=True)
        self.env = {"HOME": str(self.home), "DM_CC_HOME": str(self.dm_home),
                    "DM_CC_MANAGED_DIR": str(tmp / "managed"), "PATH": os.environ["PATH"]}

    def files(self, *names: str) -> Project:
        for name in names:
            path = self.root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(name)
        return self

    def policy(self, text: str) -> Project:
        (self.tmp / "policy.yaml").write_text(text)
        return self

    def gate(self, agent: str = "build", approvals: tuple[Rule, ...] = (),
             under: tuple[str, ...] = ()) -> Gate:
        world = self.world()
        return world.gate(world.agent(agent), approvals, under=under)

    def world(self) -> World:
        policies = (str(self.tmp / "policy.yaml"),) if (self.tmp / "policy.yaml").exists() else ()
        return open_world(Options(policies=policies), cwd=self.root, env=self.env)

    def spec(self, gate: Gate | None = None, env: dict[str, str] | None = None) -> SandboxSpec:
        """The spec derived for ``gate`` (bubblewrap assumed to work, never run)."""
        world = self.world()
        sandbox = Sandbox("auto", world.where, env or self.env, probe=WORKS)
        return sandbox.spec(gate or self.gate())

    def run(self, command: str, gate: Gate | None = None, *, timeout: float = 30,
            sandbox: Sandbox | None = None, user: str | None = None) -> Ran:
        """``command`` run as the bash tool runs it, confined by the real bubblewrap
        (as ``user``, who is given the project's files first: see support.as_user)."""
        sandbox = sandbox or self.sandbox()
        plan = sandbox.confine(gate or self.gate(), ["bash", "-c", command])
        assert plan.confined, plan
        plan = as_user(plan, user, self.tmp, sandbox.private_dir())
        return asyncio.run(run_plan(plan, self.root, timeout))

    def git(self, *args: str, cwd: Path | None = None) -> str:
        """git run on the host (as whoever runs the tests, whoever owns the files)."""
        return subprocess.run(
            ["git", "-c", "safe.directory=*", "-c", "user.name=t", "-c", "user.email=t@t",
             "-c", "protocol.file.allow=always", *args], cwd=cwd or self.root,
            capture_output=True, text=True, check=True).stdout

    def sandbox(self) -> Sandbox:
        return Sandbox("required", self.world().where, self.env)

    def path(self, name: str) -> str:
        return (self.root / name).as_posix()


def paths(mounts: tuple[Mount, ...]) -> set[str]:
    return {m.path for m in mounts}


def covered(path: str, mounts: tuple[Mount, ...]) -> bool:
    """``path`` is one of ``mounts`` or inside a directory one."""
    return any(m.path == path or (m.directory and path.startswith(m.path + "/"))
               for m in mounts)


def RULES(lines: list[str]) -> str:  # noqa: N802 - reads as the YAML key it writes
    return "rules:\n" + "".join(lines)


def rule(permission: str, pattern: str, action: str) -> str:
    return f"  - {{permission: {permission}, pattern: '{pattern}', action: {action}}}\n"
