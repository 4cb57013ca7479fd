"""What trusting a project's MCP server covers, and what the question shows: every
``${VAR}`` a definition reads from the environment, by name and never by value, in
every field; and the content of every file inside the project its command line
names, so a script rewritten after the approval makes the server unapproved again
(and the question says which file changed). Real servers: the toolbox over stdio."""

from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path

import pytest
from support.mcp_servers import TOOLBOX
from support.repl_driver import ENTER, drive

from dm_cc.cli import main
from dm_cc.compose import open_world
from dm_cc.config import config_dir
from dm_cc.ui.approval_prompt import server_lines

SECRET = "s3cr3t-VALUE-never-shown"


@pytest.fixture
def project(project, monkeypatch):
    monkeypatch.chdir(project)
    monkeypatch.setenv("DMCC_TOKEN", SECRET)
    monkeypatch.setenv("DMCC_TAG", SECRET + "-tag")
    (project / ".dm_cc").mkdir()
    return project


def configure(project: Path, servers: str) -> None:
    (project / ".dm_cc" / "config.yaml").write_text("mcp:\n  servers:\n" + servers)


def server(project: Path, name: str = "box"):
    return open_world(cwd=project).settings.mcp[name]


def listed(capsys, *extra: str) -> str:
    capsys.readouterr()
    assert main(["mcp", "list", *extra]) == 0
    return capsys.readouterr().out


def question(project: Path, name: str = "box") -> str:
    world = open_world(cwd=project)
    definition = world.settings.mcp[name]
    trusted = world.approvals.trusted_servers()
    lines = server_lines(definition, definition.trust(trusted), definition.changes(trusted))
    return "\n".join("".join(text for _, text in line) for line in lines)


def a_script(project: Path, relative: str) -> Path:
    """A real MCP server inside the project: a script that runs the toolbox."""
    script = project / relative
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text(f"import runpy, sys\nsys.argv = [{TOOLBOX!r}, 'stdio']\n"
                      f"runpy.run_path({TOOLBOX!r}, run_name='__main__')\n")
    return script


# ------------------------------------------------------------------ ${VAR} by name


def test_every_variable_a_stdio_server_reads_is_shown_by_name_never_its_value(project, capsys):
    configure(project, f"    box:\n      command: {sys.executable}\n"
                       f"      args: [{TOOLBOX}, stdio, '--tag=${{DMCC_TAG}}']\n"
                       "      env: {API_KEY: 'Bearer ${DMCC_TOKEN}', PLAIN: x}\n")
    shown = question(project)
    assert "${DMCC_TOKEN} (env.API_KEY)" in shown and "${DMCC_TAG} (args[2])" in shown
    assert "--tag=${DMCC_TAG}" in shown          # what it runs, as written
    out = listed(capsys)
    assert "${DMCC_TOKEN} (env.API_KEY)" in out and "${DMCC_TAG} (args[2])" in out
    row = json.loads(listed(capsys, "--json"))["servers"][0]
    assert row["reads"] == {"DMCC_TAG": ["args[2]"], "DMCC_TOKEN": ["env.API_KEY"]}
    assert main(["mcp", "trust", "box"]) == 0
    trusted = capsys.readouterr().out
    assert "${DMCC_TOKEN} (env.API_KEY)" in trusted and "${DMCC_TAG} (args[2])" in trusted
    assert SECRET not in shown + out + json.dumps(row) + trusted


def test_an_http_server_shows_the_variables_in_its_url_and_headers(project, capsys):
    configure(project, "    docs:\n      url: 'http://127.0.0.1:9/${DMCC_TAG}/mcp'\n"
                       "      headers: {Authorization: 'Bearer ${DMCC_TOKEN}'}\n")
    shown = question(project, "docs")
    assert "http: http://127.0.0.1:9/${DMCC_TAG}/mcp" in shown
    assert "${DMCC_TAG} (url)" in shown and "${DMCC_TOKEN} (headers.Authorization)" in shown
    assert SECRET not in shown and SECRET not in listed(capsys)


def test_the_variables_of_the_command_and_cwd_are_shown_too(project):
    (project / "tools").mkdir()
    configure(project, "    box: {command: '${DMCC_TAG}', cwd: 'tools${DMCC_TOKEN}'}\n")
    definition = server(project)   # never started: only what it would be
    assert definition.references() == {"DMCC_TAG": ["command"], "DMCC_TOKEN": ["cwd"]}


def test_the_fingerprint_covers_references_as_written_not_their_values(project, monkeypatch):
    configure(project, "    box: {command: x, env: {KEY: '${DMCC_TOKEN}'}}\n")
    first = server(project).fingerprint
    monkeypatch.setenv("DMCC_TOKEN", "rotated")
    assert server(project).fingerprint == first          # a rotated token: same approval
    configure(project, "    box: {command: x, env: {KEY: '${DMCC_TAG}'}}\n")
    assert server(project).fingerprint != first          # another variable: asked again


# ------------------------------------------------------------------ the files it runs


def test_a_rewritten_server_script_is_no_longer_trusted_and_the_run_says_which(project, capsys):
    script = a_script(project, "tools/server.py")
    configure(project, f"    box: {{command: {sys.executable}, args: [tools/server.py]}}\n")
    mine = config_dir() / "policy.yaml"   # the person's own: a project's allow never opens a
    mine.parent.mkdir(parents=True, exist_ok=True)   # tool that says nothing of its effects
    mine.write_text("rules:\n  - {permission: 'mcp__box__*', pattern: '*', action: allow}\n")
    assert main(["mcp", "trust", "box"]) == 0
    assert "runs files of this project (their content is checked): tools/server.py" \
        in capsys.readouterr().out
    events = run(project, capsys)
    assert [e["output"] for e in events if e["type"] == "tool_finished"] == ["echo: hi"]

    script.write_text(script.read_text() + "# a confined command rewrote this\n")
    events = run(project, capsys)
    [notice] = [e["text"] for e in events if e["type"] == "notice"]
    assert "has changed since it was approved (changed: tools/server.py (its content))" \
        in notice and "`dm_cc mcp trust box`" in notice
    assert [e["is_error"] for e in events if e["type"] == "tool_finished"] == [True]
    assert "changed since approved: tools/server.py (its content)" in listed(capsys)
    assert "changed: tools/server.py (its content)" in question(project)


def run(project: Path, capsys) -> list[dict]:
    script = project.parent / "script.yaml"
    script.write_text("- {tool: mcp__box__echo, args: {text: hi}}\n- {text: done}\n")
    capsys.readouterr()
    main(["run", "--json", "--model", f"scripted:{script}", "say hi"])
    return [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip()]


@pytest.mark.parametrize(("definition", "named"), [
    ("{command: ./server.sh}", "server.sh"),
    ("{command: node, args: [./srv/index.js]}", "srv/index.js"),
    ("{command: uv, args: [run, server.py]}", "server.py"),
    ("{command: python3, args: [-m, tools.server]}", "tools/server.py"),
    ("{command: python3, args: [server.py], cwd: tools}", "tools/server.py"),
    ("{command: sh, args: [-c, 'exec python3 tools/server.py --stdio']}", "tools/server.py"),
    ("{command: python3, args: ['--script=srv/index.js']}", "srv/index.js"),
    ("{command: uv, args: [--directory, tools, run, server.py]}", "tools/server.py"),
    ("{command: node, args: [./srv]}", "srv/index.js"),            # a directory's entry point
])
def test_each_way_of_naming_a_script_puts_its_content_in_the_fingerprint(project, definition,
                                                                         named):
    for path in ("server.sh", "srv/index.js", "server.py", "tools/server.py"):
        (project / path).parent.mkdir(parents=True, exist_ok=True)
        (project / path).write_text("# v1\n")
    configure(project, f"    box: {definition}\n")
    before = server(project)
    assert named in [f.path for f in before.files if f.checked]
    (project / named).write_text("# v2: rewritten after the approval\n")
    after = server(project)
    assert after.trust({"box": before.fingerprint}) == "changed since approved"
    assert after.changes({"box": before.fingerprint}) == [f"{named} (its content)"]


def test_a_script_created_after_the_approval_counts_as_a_change(project):
    configure(project, "    box: {command: python3, args: [server.py]}\n")
    before = server(project)
    assert before.files == ()
    (project / "server.py").write_text("print('new')\n")
    assert server(project).changes({"box": before.fingerprint}) == ["server.py (new)"]


def test_a_linked_script_is_checked_by_its_target_and_a_link_out_is_shown(project, tmp_path):
    (project / "real").mkdir()
    (project / "real" / "server.py").write_text("# inside\n")
    (project / "server.py").symlink_to("real/server.py")
    configure(project, "    box: {command: python3, args: [server.py]}\n")
    before = server(project)
    (project / "real" / "server.py").write_text("# the target changed\n")
    assert server(project).changes({"box": before.fingerprint}) == ["server.py (its content)"]

    outside = tmp_path / "elsewhere.py"
    outside.write_text("# not the project's\n")
    (project / "server.py").unlink()
    (project / "server.py").symlink_to(outside)
    after = server(project)
    assert after.changes({"box": before.fingerprint}) == [
        f"server.py (now leads outside the project: {outside})"]
    assert f"names files outside the project (not checked): server.py -> {outside}" \
        in after.facts()


def test_a_path_outside_the_project_is_shown_not_read(project, tmp_path):
    outside = tmp_path / "shared" / "server.py"
    outside.parent.mkdir()
    outside.write_text("# the person's own\n")
    configure(project, f"    box: {{command: python3, args: [{outside}]}}\n")
    before = server(project)
    assert f"names files outside the project (not checked): {outside}" in before.facts()
    outside.write_text("# changed, but not the project's to change\n")
    assert server(project).trust({"box": before.fingerprint}) == "approved"


def test_a_fifo_named_by_the_command_is_never_opened(project):
    os.mkfifo(project / "pipe.py")
    configure(project, "    box: {command: python3, args: [pipe.py]}\n")
    done: list = []
    worker = threading.Thread(target=lambda: done.append(server(project)), daemon=True)
    worker.start()
    worker.join(20)
    assert done, "fingerprinting blocked on a FIFO"
    assert [(f.path, f.digest) for f in done[0].files] == [("pipe.py", "special")]


def test_a_program_found_on_path_inside_the_project_is_checked(project, monkeypatch):
    venv_bin = project / ".venv" / "bin"
    venv_bin.mkdir(parents=True)
    program = venv_bin / "mcp-server-box"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    monkeypatch.setenv("PATH", f"{venv_bin}{os.pathsep}{os.environ['PATH']}")
    configure(project, "    box: {command: mcp-server-box}\n")
    before = server(project)
    assert [f.path for f in before.files] == [".venv/bin/mcp-server-box"]
    program.write_text("#!/bin/sh\ncurl evil\n")
    assert server(project).trust({"box": before.fingerprint}) == "changed since approved"


def test_a_definition_naming_no_file_keeps_its_plain_fingerprint(project):
    configure(project, "    box: {command: python3, args: [-c, 'print(1)']}\n")
    assert " " not in server(project).fingerprint   # as approvals saved before files counted


def test_a_program_named_outside_is_shown_but_its_target_is_not_fingerprinted(project):
    configure(project, f"    box: {{command: {sys.executable}, args: [{TOOLBOX}, stdio]}}\n")
    definition = server(project)
    assert [(f.path, f.digest) for f in definition.files] == [
        (sys.executable, "outside:"), (TOOLBOX, "outside:")]


def test_the_repl_question_names_the_changed_file_and_the_variables(project):
    script = a_script(project, "tools/server.py")
    configure(project, f"    box:\n      command: {sys.executable}\n      args: [tools/server.py]\n"
                       "      env: {API_KEY: '${DMCC_TOKEN}'}\n")
    assert main(["mcp", "trust", "box"]) == 0
    script.write_text(script.read_text() + "# rewritten\n")
    run = drive(project, [{"text": "done"}],
                [("start it and remember", "n"), ("/help lists commands", "hi" + ENTER)],
                timeout=20)
    assert not run.errors and run.code == 0, run.errors
    assert "(changed since you approved it)" in run.screen
    assert "changed: tools/server.py (its content)" in run.screen
    assert "${DMCC_TOKEN} (env.API_KEY)" in run.screen and SECRET not in run.screen
