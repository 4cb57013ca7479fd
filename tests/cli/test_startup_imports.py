"""What the commands that need no model load at start: each imports the parts it uses,
not the ones it does not (benchmarks/bench_startup.py and bench_approvals.py time it).

Each check runs the command in a fresh interpreter and names modules of a seam, not a
number: ``policy check`` reads the project's git directories (``dm_cc.sandbox``'s
repository.py) but starts no sandbox, loop or tool; ``approvals add`` in a project with
no policy or agent file reads no YAML and validates nothing; ``policy check`` validates
with pydantic_core's compiled module alone (not its package's Python: ``core_schema``,
typing_extensions) and reads no JSON where there is no saved approval or delivered
managed policy.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

WATCHED = ("dm_cc.sandbox.repository", "dm_cc.sandbox.host", "dm_cc.sandbox.transaction",
           "dm_cc.core", "dm_cc.tools.base", "dm_cc.session.approvals", "yaml", "pydantic_core",
           "pydantic_core._pydantic_core", "pydantic_core.core_schema", "typing_extensions",
           "json")


def loaded(project: Path, home: Path, *argv: str) -> tuple[str, set[str]]:
    """``dm_cc ARGV…`` run in a new interpreter in ``project``: its stdout, and which
    of :data:`WATCHED` it had imported when it finished."""
    code = ("import sys\nfrom dm_cc.cli import main\ncode = main(sys.argv[1:])\n"
            f"print('LOADED', *sorted(m for m in {WATCHED!r} if m in sys.modules))\n"
            "sys.exit(code)\n")
    env = {**os.environ, "DM_CC_HOME": str(home / "dm"), "HOME": str(home),
           "DM_CC_MANAGED_DIR": str(home / "managed")}
    done = subprocess.run([sys.executable, "-c", code, *argv], cwd=project, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    out, _, names = done.stdout.rpartition("LOADED")
    return out, set(names.split())


def test_policy_check_reads_the_git_dirs_and_starts_no_sandbox_loop_or_tool(tmp_path):
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    (project / ".dm_cc").mkdir()
    (project / ".dm_cc" / "policy.yaml").write_text(
        "rules:\n  - {permission: bash, pattern: 'git *', action: allow}\n")
    out, modules = loaded(project, tmp_path / "home", "policy", "check", "bash",
                          "git status && cat README.md | grep x > out.txt")
    assert out.startswith("ask: bash")           # the redirect asks: judged in full
    assert {"dm_cc.sandbox.repository", "yaml", "pydantic_core._pydantic_core"} <= modules
    assert not modules & {"dm_cc.sandbox.host", "dm_cc.sandbox.transaction", "dm_cc.core",
                          "dm_cc.tools.base", "pydantic_core", "pydantic_core.core_schema",
                          "typing_extensions", "json"}


def test_approvals_add_without_policy_or_agent_files_reads_no_yaml(tmp_path):
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    out, modules = loaded(project, tmp_path / "home", "approvals", "add", "bash", "npm test *")
    assert out.strip().startswith("apr_")
    assert "dm_cc.session.approvals" in modules
    assert not modules & {"yaml", "pydantic_core", "pydantic_core._pydantic_core",
                          "dm_cc.sandbox.repository", "dm_cc.core"}
    # and with a policy file, it is read (a malformed one still stops the command)
    (project / ".dm_cc").mkdir()
    (project / ".dm_cc" / "policy.yaml").write_text("rules: [\n")
    env = {**os.environ, "DM_CC_HOME": str(tmp_path / "home" / "dm"),
           "HOME": str(tmp_path / "home"), "DM_CC_MANAGED_DIR": str(tmp_path / "home" / "m")}
    done = subprocess.run([sys.executable, "-m", "dm_cc", "approvals", "add", "bash", "make *"],
                          cwd=project, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "policy.yaml:" in done.stderr, done.stderr
