"""Custom agents from .dm_cc/agents/*.md: parsing, every error with its line, precedence."""

from __future__ import annotations

import re
import textwrap

import pytest
from support.requests import evaluate

from dm_cc.agents.builtin import BUILTIN_AGENTS
from dm_cc.agents.files import load_agent_file, load_agents, parse_agent
from dm_cc.errors import AgentFileError, ConfigError
from dm_cc.permissions import Rule


def dedent(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


REVIEWER = dedent("""
    ---
    description: Reviews a change; never edits.
    mode: subagent
    model: openai/gpt-4o-mini
    temperature: 0.2
    max_turns: 12
    permission:
      edit: deny
      bash: {"*": ask, "git diff *": allow}
    rules:
      - {permission: webfetch, pattern: "*", action: deny, reason: offline reviewer}
    ---

    You are a code reviewer.

    Report problems with file:line.
""")


def write(directory, name, text):
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.md"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_valid_file_becomes_an_agent_with_file_line_sources():
    agent = parse_agent(REVIEWER, "reviewer", "agents/reviewer.md")
    assert (agent.name, agent.mode, agent.description) == (
        "reviewer", "subagent", "Reviews a change; never edits.")
    assert (agent.model, agent.temperature, agent.max_turns) == ("openai/gpt-4o-mini", 0.2, 12)
    assert agent.prompt == "You are a code reviewer.\n\nReport problems with file:line."
    assert agent.rules == (
        Rule("edit", "*", "deny", None, "agents/reviewer.md:8"),
        Rule("bash", "*", "ask", None, "agents/reviewer.md:9"),
        Rule("bash", "git diff *", "allow", None, "agents/reviewer.md:9"),
        Rule("webfetch", "*", "deny", "offline reviewer", "agents/reviewer.md:11"),
    )
    assert evaluate("bash", "git diff HEAD", agent.rules).action == "allow"


def test_defaults_and_integer_temperature():
    agent = parse_agent("---\ndescription: d\ntemperature: 1\n---\n", "x", "x.md")
    assert (agent.mode, agent.prompt, agent.rules, agent.model) == ("all", "", (), None)
    assert agent.temperature == 1.0 and isinstance(agent.temperature, float)


@pytest.mark.parametrize(("text", "line", "message"), [
    ("# just markdown\n", 1, "no front matter"),
    ("", 1, "no front matter"),
    ("---\ndescription: x\nprompt body\n", 1, "unclosed front matter"),
    ("---\ndescription: [unclosed\n---\n", 3, "invalid YAML"),
    ("---\ndescription: a\ndescription: b\n---\n", 3, "duplicate key 'description'"),
    ("---\ndescription: a\n\tmode: all\n---\n", 3, "tab character"),
    ("---\n---\nbody\n", 1, "missing required field 'description'"),
    ("---\nmode: primary\n---\n", 2, "missing required field 'description'"),
    ("---\n- a list\n---\n", 2, "must be a mapping"),
    ("---\ndescription: d\ncolour: red\n---\n", 3, "unknown key 'colour'"),
    ("---\ndescription: d\nname: x\n---\n", 3, "(the agent's name is the file name)"),
    ("---\ndescripton: d\n---\n", 2, "unknown key 'descripton' (did you mean description?)"),
    ("---\ndescription: d\nmax_turn: 3\n---\n", 3, "'max_turn' (did you mean max_turns?)"),
    ("---\ndescription: 12\n---\n", 2, "description: Input should be a valid string"),
    ("---\ndescription: d\nmode: boss\n---\n", 3, "mode: Input should be 'primary'"),
    ("---\ndescription: d\ntemperature: 2.5\n---\n", 3, "temperature: Input should be less"),
    ("---\ndescription: d\ntemperature: '0.5'\n---\n", 3, "temperature"),
    ("---\ndescription: d\nmax_turns: 0\n---\n", 3, "max_turns: Input should be greater"),
    ("---\ndescription: d\nmax_turns: true\n---\n", 3, "max_turns"),
    ("---\ndescription: d\npermission:\n  edit: maybe\n---\n", 4, "permission.edit"),
    ("---\ndescription: d\nrules:\n  - {permission: bash, pattern: x}\n---\n", 4,
     "missing required field 'action'"),
    ("---\ndescription: d\nrules:\n  - permission: bash\n    pattern: x\n    action: allow\n"
     "    when: never\n---\n", 7, "unknown key 'when'"),
    ("---\ndescription: d\nrules:\n  - {permission: read, pattern: '{a,b}{a,b}{a,b}{a,b}"
     "{a,b}{a,b}{a,b}{a,b}{a,b}', action: deny}\n---\n", 4, "bad path pattern"),
])
def test_every_error_names_file_and_line(text, line, message):
    with pytest.raises(AgentFileError) as caught:
        parse_agent(text, "x", "agents/x.md")
    error = caught.value
    assert isinstance(error, ConfigError)
    assert (error.path, error.line) == ("agents/x.md", line), str(error)
    assert message in error.message
    assert re.match(rf"agents/x\.md:{line}(:\d+)?: ", str(error)), str(error)


@pytest.mark.parametrize(("name", "message"), [
    ("Reviewer", "lowercase letters"), ("my agent", "lowercase letters"),
    ("plan", "built-in"), ("build", "built-in"), ("explore", "built-in"),
])
def test_file_names_must_be_valid_and_not_built_in(tmp_path, name, message):
    path = write(tmp_path, name, "---\ndescription: d\n---\n")
    with pytest.raises(AgentFileError, match=message) as caught:
        load_agent_file(path)
    assert caught.value.path.endswith(f"{name}.md")


def test_load_agents_builtins_then_user_then_project(tmp_path):
    env = {"DM_CC_HOME": str(tmp_path / "home")}
    user = tmp_path / "home" / "config" / "agents"
    project = tmp_path / "project"
    write(user, "critic", "---\ndescription: user critic\n---\nuser prompt\n")
    write(user, "docs", "---\ndescription: user docs\nmode: primary\n---\n")
    write(project / ".dm_cc" / "agents", "critic", "---\ndescription: project critic\n---\n")
    (project / ".dm_cc" / "agents" / "notes.txt").write_text("ignored")
    agents = load_agents(project, env)
    assert list(agents) == [*BUILTIN_AGENTS, "critic", "docs"]
    assert agents["critic"].description == "project critic"
    assert agents["docs"].mode == "primary"
    assert agents["plan"] is BUILTIN_AGENTS["plan"]


def test_load_agents_without_files_is_the_builtins(tmp_path):
    assert load_agents(tmp_path, {"DM_CC_HOME": str(tmp_path)}) == BUILTIN_AGENTS


def test_a_bad_file_stops_loading(tmp_path):
    write(tmp_path / ".dm_cc" / "agents", "broken", "---\ndescription: d\nmode: x\n---\n")
    with pytest.raises(AgentFileError, match=r"broken\.md:3: mode"):
        load_agents(tmp_path, {"DM_CC_HOME": str(tmp_path / "home")})
