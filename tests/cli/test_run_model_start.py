"""`dm_cc run` as a process: litellm imported in the background as soon as the
session knows its model is a litellm one, and only then."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from support.openai_server import serve, text


def dm_cc(project: Path, *args: str, path: Path | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    if path is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(path), env.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, "-m", "dm_cc", *args], cwd=project, env=env,
                          text=True, capture_output=True, timeout=120)


def test_a_litellm_run_answers_through_the_loopback_server(project):
    with serve([text("hello from the model")]) as server:
        done = dm_cc(project, "run", "--model", "openai/test-model", "--api-base",
                     server.base_url + "/v1", "say hello")
        bodies = server.bodies
    assert (done.returncode, done.stdout) == (0, "hello from the model\n"), done.stderr
    assert len(bodies) == 1 and bodies[0]["messages"][-1]["content"] == "say hello"
    assert bodies[0]["tools"]   # dm_cc's tools went, and nothing of litellm's own flags
    assert not any(key.startswith("_") for key in bodies[0])


def test_litellm_that_cannot_be_imported_fails_the_run_where_the_model_is_used(project,
                                                                                tmp_path):
    broken = tmp_path / "site"
    (broken / "litellm").mkdir(parents=True)
    (broken / "litellm" / "__init__.py").write_text("raise ImportError('litellm is broken')\n")
    with serve([text("never")]) as server:
        done = dm_cc(project, "run", "--model", "openai/test-model", "--api-base",
                     server.base_url + "/v1", "hi", path=broken)
        asked = len(server.requests)
    assert done.returncode == 1 and asked == 0
    assert done.stderr.rstrip().endswith("ImportError: litellm is broken")
    assert "in complete" in done.stderr      # raised where the model is first used
    assert "Exception in thread" not in done.stderr     # the warm-up's failure: not shown
    assert done.stderr.count("ImportError: litellm is broken") == 1


def test_runs_that_need_no_litellm_never_import_it(project, tmp_path):
    script = tmp_path / "script.yaml"
    script.write_text("replies:\n  - {text: scripted hello}\n")
    code = ("import gc, sys, threading; from dm_cc.cli import main\n"
            "for argv in sys.argv[1:]:\n"
            "    code = main(argv.split('|'))\n"
            "    print(code, 'litellm' in sys.modules, gc.get_freeze_count(),\n"
            "          sorted(t.name for t in threading.enumerate() if 'litellm' in t.name))\n"
            "sys.argv = ['dm_cc', 'policy', 'check', 'bash', 'ls']\n"
            "print('own command line', main(), gc.get_freeze_count() > 0)\n")
    runs = [f"run|--model|scripted:{script}|hi", "run|--model|offline|hi",
            "policy|check|bash|ls", "--help"]
    done = subprocess.run([sys.executable, "-c", code, *runs], cwd=project, text=True,
                          capture_output=True, timeout=60)
    said = [line for line in done.stdout.splitlines() if line.startswith(("0 ", "1 "))]
    assert said == ["0 False 0 []"] * 4, done.stdout + done.stderr
    # main() on the process's own command line leaves its objects to the exit (frozen:
    # not collected one by one); main(argv), as tests call it, never does
    assert done.stdout.splitlines()[-1] == "own command line 0 True"
