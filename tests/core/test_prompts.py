"""The system prompt the model receives: the project's AGENTS.md / CLAUDE.md, and
the /context report of what goes in."""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path

from dm_cc.compose import open_world
from dm_cc.core.approval import HeadlessApprover
from dm_cc.core.events import Notice
from dm_cc.core.instructions import MAX_INSTRUCTION_BYTES
from dm_cc.core.loop import Loop
from dm_cc.core.prompts import context_report, system_prompt
from dm_cc.llm.scripted import ScriptedModel, reply


def make_loop(project: Path, model: ScriptedModel) -> Loop:
    return open_world(cwd=project).open_loop(HeadlessApprover("deny"), model=model)


def system_seen(project: Path) -> str:
    model = ScriptedModel([reply("ok")])
    asyncio.run(make_loop(project, model).run("hello"))
    return model.calls[0][0]


def test_agents_md_then_claude_md_go_into_the_system_prompt(project):
    (project / "CLAUDE.md").write_text("Claude rule: use tabs.\n")
    (project / "AGENTS.md").write_text("Agents rule: run `make test` before committing.\n")
    system = system_seen(project)
    assert "# Project instructions (AGENTS.md)" in system
    assert "# Project instructions (CLAUDE.md)" in system
    assert system.index("Agents rule") < system.index("Claude rule")
    assert system.index("You are dm_cc") < system.index("Agents rule") < system.index("Date:")


def test_no_instruction_files_no_section(project):
    assert "Project instructions" not in system_seen(project)


def test_a_huge_instruction_file_is_truncated_and_says_so(project):
    (project / "AGENTS.md").write_text("head\n" + "x" * (3 * MAX_INSTRUCTION_BYTES) + "TAIL\n")
    system = system_seen(project)
    assert "head" in system and "TAIL" not in system
    assert f"AGENTS.md was truncated: only its first {MAX_INSTRUCTION_BYTES} of" in system
    assert len(system) < 2 * MAX_INSTRUCTION_BYTES


def test_truncation_never_leaves_half_a_character(project):
    (project / "AGENTS.md").write_text("a" + "é" * MAX_INSTRUCTION_BYTES)   # cut inside an é
    system = system_seen(project)
    assert "\ufffd" not in system and "truncated" in system


def test_claude_md_linked_to_agents_md_is_included_once(project):
    (project / "AGENTS.md").write_text("Shared rule.\n")
    (project / "CLAUDE.md").symlink_to("AGENTS.md")
    system = system_seen(project)
    assert system.count("Shared rule.") == 1 and "(CLAUDE.md)" not in system


def test_context_report_names_every_section_with_its_size(project):
    (project / "AGENTS.md").write_text("Rule one.\n")
    loop = make_loop(project, ScriptedModel([]))
    report = context_report(loop.agent, loop.context())
    assert [row.name for row in report] == ["dm_cc", "agent build", "AGENTS.md", "environment"]
    system = system_prompt(loop.agent, loop.context())
    assert sum(row.chars for row in report) + 2 * (len(report) - 1) == len(system)
    assert all(row.tokens == -(-row.chars // 4) for row in report)


# ------------------------------------------------------------------ read like a read call
# An instruction file is repository content sent to the model: it is read through
# the read rules of the agent in charge, only inside the project, only as a regular
# file, capped (dm_cc/core/instructions.py).


def told(project: Path, policy: str = "") -> tuple[str, list[str]]:
    """The system prompt of the first model call, and the notices of the run."""
    if policy:
        (project / ".dm_cc").mkdir(exist_ok=True)
        (project / ".dm_cc" / "policy.yaml").write_text(policy)
    notices: list[str] = []
    model = ScriptedModel([reply("ok")])
    loop = open_world(cwd=project).open_loop(
        HeadlessApprover("fail"), model=model,
        on_event=lambda event: notices.append(event.text) if isinstance(event, Notice) else None)
    asyncio.run(loop.run("hello"))
    return model.calls[0][0], notices


def test_a_link_to_a_file_outside_the_project_is_refused_whatever_the_rules(project, tmp_path):
    secret = tmp_path / "elsewhere" / "notes.txt"
    secret.parent.mkdir()
    secret.write_text("OUTSIDE-SECRET\n")
    (project / "AGENTS.md").symlink_to(secret)
    system, notices = told(project, "rules:\n  - {permission: '*', pattern: '*', action: allow}\n")
    assert "OUTSIDE-SECRET" not in system and "Project instructions" not in system
    assert notices == [f"AGENTS.md was not given to the model: it leads outside the project "
                       f"({secret}), and an instruction file is read only inside it."]


def test_links_to_the_environment_and_to_a_key_are_refused(project, monkeypatch):
    monkeypatch.setenv("DMCC_CANARY", "ENV-CANARY-VALUE")
    key = Path.home() / ".ssh" / "id_rsa"
    key.parent.mkdir(parents=True)
    key.write_text("-----BEGIN OPENSSH PRIVATE KEY----- KEY-CANARY\n")
    (project / "AGENTS.md").symlink_to("/proc/self/environ")
    (project / "CLAUDE.md").symlink_to(key)
    system, notices = told(project)
    assert "ENV-CANARY-VALUE" not in system and "KEY-CANARY" not in system
    assert [n.split(":")[0] for n in notices] == ["AGENTS.md was not given to the model",
                                                   "CLAUDE.md was not given to the model"]
    assert "/environ)" in notices[0] and str(key) in notices[1]


def test_a_link_through_a_linked_directory_to_outside_is_refused(project, tmp_path):
    outside = tmp_path / "out"
    outside.mkdir()
    (outside / "AGENTS.md").write_text("VIA-DIRECTORY\n")
    (project / "docs").symlink_to(outside)
    (project / "AGENTS.md").symlink_to("docs/AGENTS.md")
    system, notices = told(project)
    assert "VIA-DIRECTORY" not in system and "outside the project" in notices[0]


def test_a_denied_target_inside_the_project_is_not_loaded(project):
    (project / "private").mkdir()
    (project / "private" / "plan.md").write_text("DENIED-CONTENT\n")
    (project / "CLAUDE.md").symlink_to("private/plan.md")
    system, notices = told(project, "rules:\n  - {permission: read, pattern: 'private/**', "
                                    "action: deny}\n")
    assert "DENIED-CONTENT" not in system
    assert notices[0].startswith("CLAUDE.md was not given to the model: the read rules do not "
                                 "allow reading CLAUDE.md outright")


def test_an_env_file_behind_the_name_asks_so_it_is_left_out_without_a_question(project):
    (project / ".env.local").write_text("API_TOKEN=ENV-FILE-CANARY\n")
    (project / "AGENTS.md").symlink_to(".env.local")
    system, notices = told(project)   # the approver fails the run if it is asked anything
    assert "ENV-FILE-CANARY" not in system and len(notices) == 1


def test_an_ask_rule_on_the_file_itself_leaves_it_out_and_context_says_why(project):
    (project / "AGENTS.md").write_text("ASKED-CONTENT\n")
    system, notices = told(project, "rules:\n  - {permission: read, pattern: AGENTS.md, "
                                    "action: ask}\n")
    assert "ASKED-CONTENT" not in system and "deny it or ask" in notices[0]
    loop = make_loop(project, ScriptedModel([]))
    rows = context_report(loop.agent, loop.context())
    assert [(r.name, r.chars) for r in rows if r.left_out] == [("AGENTS.md", 0)]
    assert "Project instructions" not in system_prompt(loop.agent, loop.context())


def test_the_notice_is_given_once_per_session(project):
    (project / "AGENTS.md").symlink_to("/etc/hostname")
    notices: list[str] = []
    model = ScriptedModel([reply("one"), reply("two")])
    loop = open_world(cwd=project).open_loop(
        HeadlessApprover("deny"), model=model,
        on_event=lambda event: notices.append(event.text) if isinstance(event, Notice) else None)
    asyncio.run(loop.run("first"))
    asyncio.run(loop.run("second"))
    assert len(notices) == 1


def test_a_fifo_is_not_opened_for_reading(project):
    os.mkfifo(project / "AGENTS.md")
    done: list[tuple[str, list[str]]] = []
    worker = threading.Thread(target=lambda: done.append(told(project)), daemon=True)
    worker.start()
    worker.join(20)
    assert done, "reading the instructions blocked on a FIFO"
    system, notices = done[0]
    assert notices == ["AGENTS.md was not given to the model: it is not a regular file."]


def test_a_link_to_a_file_inside_the_project_is_read(project):
    (project / "docs").mkdir()
    (project / "docs" / "agents.md").write_text("Linked rule: be brief.\n")
    (project / "AGENTS.md").symlink_to("docs/agents.md")
    system, notices = told(project)
    assert "Linked rule: be brief." in system and notices == []


def test_a_huge_file_behind_a_link_is_capped(project):
    (project / "big.md").write_text("start\n" + "y" * (4 * MAX_INSTRUCTION_BYTES) + "END\n")
    (project / "CLAUDE.md").symlink_to("big.md")
    system, _ = told(project)
    assert "start" in system and "END" not in system and len(system) < 2 * MAX_INSTRUCTION_BYTES


def test_a_hard_link_is_not_loaded(project, tmp_path):
    secret = project.parent / "elsewhere.txt"   # the same filesystem: a hard link is possible
    secret.write_text("HARDLINK-CANARY\n")
    os.link(secret, project / "AGENTS.md")
    system, notices = told(project)
    assert "HARDLINK-CANARY" not in system and "hard links" in notices[0]
