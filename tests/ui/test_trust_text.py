"""The trust question's words: what each file would open, where each stands (new,
changed since trusted, changed since the person said no), wrapped to the terminal
and never cut in a word."""

from __future__ import annotations

import os

from dm_cc.compose import open_world
from dm_cc.ui.trust_text import question_lines, session_lines, trust_lines, trusted_lines

POLICY = ("rules:\n  - {permission: bash, pattern: 'npm test *', action: allow}\n"
          "  - {permission: bash, pattern: 'git push *', action: deny}\n")


def write(project, text: str = POLICY) -> None:
    (project / ".dm_cc").mkdir(exist_ok=True)
    (project / ".dm_cc" / "policy.yaml").write_text(text)


def test_the_question_fits_80_columns_and_breaks_no_word(long_path_project):
    project = long_path_project
    assert len(str(project)) > 40          # a long path: no room beside it on its line
    write(project)
    world = open_world(cwd=project)
    lines = question_lines(world, 80)
    assert lines[0] == "? Trust this project's dm_cc files as they are now?"
    assert all(len(line) < 80 for line in lines), lines
    words = " ".join(" ".join(lines).split())
    assert f"This project ({project}) has its own dm_cc files" in words   # a path is not broken
    assert "    .dm_cc/policy.yaml  (not trusted yet)" in lines
    assert "        allow bash 'npm test *'" in lines and "git push" not in words
    assert "`dm_cc trust` trusts them, `dm_cc untrust` forgets them" in words


def test_a_file_changed_since_the_person_said_no_says_so(project):
    write(project)
    open_world(cwd=project).answer_trust(False)
    world = open_world(cwd=project)
    assert not world.asks_trust()                              # asked once per content
    assert trusted_lines(world)[1] == "  .dm_cc/policy.yaml  not trusted: you said no"
    write(project, POLICY + "  - {permission: bash, pattern: 'make *', action: allow}\n")
    world = open_world(cwd=project)
    assert world.asks_trust()
    assert "  .dm_cc/policy.yaml  (CHANGED since you said no)" in trust_lines(world)
    assert trusted_lines(world)[1] == "  .dm_cc/policy.yaml  CHANGED since you said no"


def test_a_file_changed_since_trusted_says_so(project):
    write(project)
    open_world(cwd=project).answer_trust(True)
    world = open_world(cwd=project)
    assert not world.asks_trust() and trusted_lines(world)[1] == "  .dm_cc/policy.yaml  trusted"
    write(project, POLICY.replace("npm test", "npm run"))
    world = open_world(cwd=project)
    assert "  .dm_cc/policy.yaml  (CHANGED since you trusted it)" in trust_lines(world)


def test_when_trusting_projects_is_turned_off_it_says_where(project):
    write(project)
    managed = project.parent / "managed"
    managed.mkdir()
    (managed / "policy.yaml").write_text("trust_projects: false\n")
    world = open_world(cwd=project, env=os.environ)
    assert not world.asks_trust()
    said = " ".join(" ".join(session_lines(world)).split())
    assert said.startswith("Trusting projects is turned off (") and "managed" in said
