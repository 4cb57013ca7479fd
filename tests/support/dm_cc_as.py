"""dm_cc itself -- ``dm_cc run``, ``dm_cc trust``, ``dm_cc sandbox run``, the REPL --
run as a real process by whoever runs the tests or by the unprivileged ``sbtest``
(tests/support/as_user.py), so a hostile repository is tried the way each of them
opens it: bubblewrap makes a user namespace only for ``sbtest``, and as root a
place the sandbox left writable is the whole machine.

    argv = dm_cc_command(user, env)            # runuser, env, the Python, -m dm_cc
    done = run_dm_cc(user, base, project, env, "run", "--json", ...)

``sbtest`` cannot read the tests' interpreter or its site-packages (they may sit in
root's home, or in a venv only its owner may enter), so it runs the system Python
(the same minor version, or the test skips) on a copy, readable by anyone, of dm_cc
and of the packages a headless run imports -- found by asking a child process which
ones it loaded, so the list follows the code.
"""

from __future__ import annotations

import atexit
import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

from support.as_user import CAN_SWITCH, SBTEST, SYSTEM_PYTHON, give, remove

CHECKOUT = Path(__file__).resolve().parents[2]     # the code under test (dm_cc/, policies/)

# A headless run with the scripted model (one confined command, one write) in a
# throwaway project, then the REPL's, trust's and the sandbox's modules: the child
# prints every module it loaded that is neither the standard library nor dm_cc.
_LOADED = """\
import json, os, sys, sysconfig, tempfile
base = tempfile.mkdtemp()
for name in ("project/.git", "home", "dmhome"):
    os.makedirs(os.path.join(base, name))
os.environ.update(HOME=base + "/home", DM_CC_HOME=base + "/dmhome",
                  DM_CC_MANAGED_DIR=base + "/managed")
with open(base + "/script.yaml", "w") as script:
    script.write('- {tool: bash, args: {command: "echo x"}}\\n'
                 '- {tool: write, args: {path: a.txt, content: x}}\\n- {text: done}\\n')
os.chdir(base + "/project")
from dm_cc.cli import main
main(["run", "--json", "--model", "scripted:" + base + "/script.yaml", "go"])
main(["trust", "--show"])
import dm_cc.cli.interactive, dm_cc.cli.sandbox, dm_cc.ui.repl
stdlib = sysconfig.get_paths()["stdlib"]
found = {}
for name, module in list(sys.modules.items()):
    path = getattr(module, "__file__", None)
    top = name.partition(".")[0]
    if (not path or top in ("dm_cc", "_distutils_hack") or top.startswith("__editable")
            or "." in name or path.startswith(stdlib + os.sep)):
        continue
    found[top] = path
print(json.dumps(found))
"""


def system_python_fits() -> bool:
    """The system Python can load the compiled packages the tests' own Python has."""
    if not os.path.exists(SYSTEM_PYTHON):
        return False
    done = subprocess.run([SYSTEM_PYTHON, "-c", "import sys; print(sys.version_info[:2])"],
                          capture_output=True, text=True)
    return done.stdout.strip() == str(sys.version_info[:2])


CAN_RUN_AS_SBTEST = CAN_SWITCH and system_python_fits()


@functools.cache
def _readable_copy() -> Path:
    """dm_cc and the packages it loads, copied where anyone may read them (once per
    process; removed at exit)."""
    done = subprocess.run([sys.executable, "-c", _LOADED], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(CHECKOUT)}, check=True,
                          cwd=tempfile.gettempdir())
    base = Path(tempfile.mkdtemp(prefix="dm_cc-as-sbtest-"))
    atexit.register(remove, base)
    ignore = shutil.ignore_patterns("__pycache__")
    for path in json.loads(done.stdout.splitlines()[-1]).values():
        source = Path(path)
        if source.name.startswith("__init__."):
            shutil.copytree(source.parent, base / source.parent.name, ignore=ignore)
        else:
            shutil.copy2(source, base / source.name)
    shutil.copytree(CHECKOUT / "dm_cc", base / "dm_cc", ignore=ignore)
    shutil.copytree(CHECKOUT / "policies", base / "policies", ignore=ignore)
    for directory, _, files in os.walk(base):
        os.chmod(directory, 0o755)
        for name in files:
            os.chmod(os.path.join(directory, name), 0o644)
    return base


def dm_cc_command(user: str | None, env: Mapping[str, str]) -> list[str]:
    """A command line that runs dm_cc as ``user`` (None: as the tests run) with
    ``env`` (and the PYTHONPATH it needs); ``runuser`` would reset HOME, so ``env``
    sets it after the switch."""
    if user is None:
        python, pythonpath = [sys.executable], str(CHECKOUT)
    else:
        assert user == SBTEST and CAN_RUN_AS_SBTEST
        python, pythonpath = ["runuser", "-u", user, "--", SYSTEM_PYTHON], str(_readable_copy())
    variables = {**env, "PYTHONPATH": pythonpath, "PYTHONDONTWRITEBYTECODE": "1"}
    return [*python[:-1], "env", "-i", *(f"{k}={v}" for k, v in variables.items()),
            python[-1], "-m", "dm_cc"]


def run_dm_cc(user: str | None, base: Path, cwd: Path, env: Mapping[str, str], *args: str,
              timeout: float = 90) -> subprocess.CompletedProcess[str]:
    """``dm_cc ARGS`` in ``cwd`` as ``user`` with exactly ``env``, who is first given
    everything under ``base`` (the project, its home, dm_cc's directories)."""
    if user is not None:
        give(user, base)
    return subprocess.run([*dm_cc_command(user, env), *args], cwd=cwd, capture_output=True,
                          text=True, timeout=timeout)
