"""The system prompt the model receives: the project's AGENTS.md / CLAUDE.md, and
the /context report of what goes in."""

from __future__ import annotations

import asyncio
from pathlib import Path

from dm_cc.compose import open_world
from dm_cc.core.approval import HeadlessApprover
from dm_cc.core.loop import Loop
from dm_cc.core.prompts import MAX_INSTRUCTION_BYTES, context_report, system_prompt
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
