"""Settings: user file < project file < environment < flags, and errors naming file:line."""

from __future__ import annotations

import re
import textwrap

import pytest

from dm_cc.config.settings import Settings, load_settings, parse_settings
from dm_cc.errors import ConfigError, SettingsError


def dedent(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


@pytest.fixture
def layout(tmp_path):
    home = tmp_path / "home"
    project = tmp_path / "project"
    (home / "config").mkdir(parents=True)
    (project / ".dm_cc").mkdir(parents=True)
    return {"DM_CC_HOME": str(home)}, home / "config" / "config.yaml", \
        project / ".dm_cc" / "config.yaml", project


def test_no_files_gives_defaults(layout):
    env, _user, _project_file, project = layout
    assert load_settings(project, env) == Settings()
    assert Settings().default_agent == "build"


def test_precedence_user_then_project_then_env_then_flags(layout):
    env, user, project_file, project = layout
    user.write_text(dedent("""
        model: user/model
        api_base: http://user
        default_agent: plan
        mcp:
          servers:
            git: {command: uvx, args: [mcp-server-git]}
            fs: {command: npx, args: [-y, fs-server], env: {ROOT: /tmp}, disabled: true}
    """))
    project_file.write_text(dedent("""
        model: project/model
        api_base:
        mcp:
          servers:
            git: {command: git-mcp}
    """))
    settings = load_settings(project, env)   # the project's file not trusted: not used
    assert (settings.model, settings.api_base) == ("user/model", "http://user")
    settings = load_settings(project, env, trusts=lambda path: True)
    assert (settings.model, settings.api_base, settings.default_agent) == (
        "project/model", "http://user", "plan")  # a null value does not override
    assert settings.mcp["git"].argv == ["git-mcp"]
    assert settings.mcp["git"].origin == "project"
    assert settings.mcp["fs"].argv == ["npx", "-y", "fs-server"]
    assert settings.mcp["fs"].origin == "user"
    assert dict(settings.mcp["fs"].env) == {"ROOT": "/tmp"} and settings.mcp["fs"].disabled
    shown_user, shown_project = str(user), str(project_file)
    assert dict(settings.sources) == {
        "model": f"{shown_project}:1", "api_base": f"{shown_user}:2",
        "default_agent": f"{shown_user}:3", "mcp.servers.git": f"{shown_project}:5",
        "mcp.servers.fs": f"{shown_user}:7"}

    env = {**env, "DM_CC_MODEL": "env/model", "DM_CC_API_BASE": ""}
    settings = load_settings(project, env)
    assert (settings.model, settings.api_base) == ("env/model", "http://user")
    assert settings.sources["model"] == "environment DM_CC_MODEL"

    settings = load_settings(project, env, model="flag/model", api_base="http://flag")
    assert (settings.model, settings.api_base) == ("flag/model", "http://flag")
    assert (settings.sources["model"], settings.sources["api_base"]) == ("--model", "--api-base")


def test_settings_are_frozen(layout):
    env, _user, _project_file, project = layout
    settings = load_settings(project, env, model="m")
    with pytest.raises(AttributeError):
        settings.model = "other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        settings.mcp["x"] = None  # type: ignore[index]


@pytest.mark.parametrize(("text", "line", "message"), [
    ("model: [unclosed\n", 2, "invalid YAML"),
    ("model: a\nmodel: b\n", 2, "duplicate key 'model'"),
    ("- a\n", 1, "a settings file is a mapping"),
    ("model: a\ncolour: red\n", 2, "unknown key 'colour'"),
    ("model: 4\n", 1, "model: Input should be a valid string"),
    ("model: ''\n", 1, "model: String should have at least 1 character"),
    ("mcp:\n  git: {command: x}\n", 1, "mcp: expected `servers:`"),
    ("mcp: [git]\n", 1, "mcp: expected `servers:`"),
    ("mcp:\n  servers: [git]\n", 2, "mcp.servers: a mapping"),
    ("model: x\nsandbx: off\n", 2, "unknown key 'sandbx' (did you mean sandbox?)"),
    ("model: 'gpt\n", 1, "the ' opened here is never closed"),
])
def test_errors_name_file_and_line(text, line, message):
    with pytest.raises(SettingsError) as caught:
        parse_settings(text, "cfg/config.yaml")
    error = caught.value
    assert isinstance(error, ConfigError)
    assert (error.path, error.line) == ("cfg/config.yaml", line), str(error)
    assert message in error.message
    assert re.match(rf"cfg/config\.yaml:{line}(:\d+)?: ", str(error)), str(error)


@pytest.mark.parametrize(("text", "line", "message"), [
    ("mcp:\n  servers:\n    git:\n      args: [x]\n", 3, "exactly one of command: (stdio)"),
    ("mcp:\n  servers:\n    git: {command: x, url: 'http://h'}\n", 3, "exactly one of"),
    ("mcp:\n  servers:\n    git:\n      command: 3\n", 4, "git.command: a non-empty string"),
    ("mcp:\n  servers:\n    git:\n      command: [a, b]\n", 4, "git.command: a non-empty"),
    ("mcp:\n  servers:\n    git:\n      command: x\n      args: x\n", 5, "git.args: a list"),
    ("mcp:\n  servers:\n    git:\n      command: x\n      env: {PORT: 8080}\n", 5,
     "mcp.servers.git.env.PORT: a string"),
    ("mcp:\n  servers:\n    git:\n      command: x\n      disabled: 'yes'\n", 5,
     "git.disabled: true or false"),
    ("mcp:\n  servers:\n    git:\n      command: x\n      enabled: true\n", 5,
     "unknown key 'enabled'"),
    ("mcp:\n  servers:\n    git:\n      comand: x\n", 4,
     "unknown key 'comand' (did you mean command?) (known: "),
    ("mcp:\n  servers:\n    git:\n      command: x\n      headers: {A: b}\n", 5,
     "git.headers: not accepted for a stdio server"),
    ("mcp:\n  servers:\n    web:\n      url: http://h\n      cwd: /\n", 5,
     "web.cwd: not accepted for an HTTP server"),
    ("mcp:\n  servers:\n    web:\n      url: ftp://h\n", 4, "an http:// or https:// URL"),
    ("mcp:\n  servers:\n    my__git:\n      command: x\n", 3, "bad server name 'my__git'"),
    ("mcp:\n  servers:\n    git:\n      command: x\n      args:\n        - a\n"
     "        - ${DM_CC_TEST_UNSET}\n", 7, "environment variable DM_CC_TEST_UNSET is not set"),
    ("mcp:\n  servers:\n    web:\n      url: http://h\n      headers:\n"
     "        Authorization: Bearer ${DM_CC_TEST_UNSET}\n", 6,
     "web.headers.Authorization: environment variable DM_CC_TEST_UNSET is not set"),
])
def test_a_bad_server_entry_spoils_that_server_only_and_names_file_and_line(text, line, message):
    """A typo in one server's entry skips that server (it is never started: the
    definition is ``broken``), with the file:line message; the rest still counts."""
    values, _sources, servers = parse_settings(
        f"model: m1\n{text}    good: {{command: ok}}\n", "cfg/config.yaml")
    assert values == {"model": "m1"}
    name = next(name for name in servers if name != "good")
    broken = servers[name]
    assert broken.broken.startswith(f"cfg/config.yaml:{line + 1}: "), broken.broken
    assert message in broken.broken
    assert broken.source == f"cfg/config.yaml:{4}"
    assert servers["good"].argv == ["ok"] and not servers["good"].broken


def test_mcp_servers_interpolate_the_environment_and_keep_the_written_text():
    text = dedent("""
        mcp:
          servers:
            web:
              url: http://127.0.0.1:${PORT}/mcp
              headers: {Authorization: "Bearer ${TOKEN}"}
            time: {command: mcp-server-time, args: ["--tz=${TZ}"], cwd: tools}
    """)
    _values, _sources, servers = parse_settings(
        text, "p/config.yaml", origin="project", env={"PORT": "8765", "TOKEN": "t1", "TZ": "UTC"})
    web, time = servers["web"], servers["time"]
    assert (web.transport, web.url, dict(web.headers)) == (
        "http", "http://127.0.0.1:8765/mcp", {"Authorization": "Bearer t1"})
    assert (time.transport, time.argv, time.cwd) == ("stdio", ["mcp-server-time", "--tz=UTC"],
                                                     "tools")
    assert (web.origin, web.source, time.source) == ("project", "p/config.yaml:3",
                                                     "p/config.yaml:6")
    # the fingerprint is of the text as written: a new token is the same definition
    _v, _s, again = parse_settings(text, "p/config.yaml", origin="project",
                                   env={"PORT": "8765", "TOKEN": "t2", "TZ": "UTC"})
    assert again["web"].fingerprint == web.fingerprint
    _v, _s, changed = parse_settings(text.replace("mcp-server-time", "other"), "p/config.yaml",
                                     env={"PORT": "8765", "TOKEN": "t1", "TZ": "UTC"})
    assert changed["time"].fingerprint != time.fingerprint
    assert changed["web"].fingerprint == web.fingerprint


def test_the_managed_config_may_not_define_mcp_servers(layout, tmp_path):
    env, _user, _project_file, project = layout
    managed = tmp_path / "managed"
    managed.mkdir()
    (managed / "config.yaml").write_text("mcp:\n  servers:\n    x: {command: y}\n")
    with pytest.raises(SettingsError, match="only sandbox"):
        load_settings(project, {**env, "DM_CC_MANAGED_DIR": str(managed)})


def test_load_settings_reports_the_failing_file(layout):
    env, user, project_file, project = layout
    user.write_text("model: ok\n")
    project_file.write_text("model: ok\nmodle: typo\n")
    with pytest.raises(SettingsError, match=r"config\.yaml:2: modle: unknown") as caught:
        load_settings(project, env)
    assert caught.value.path == str(project_file)


def test_empty_file_is_fine(layout):
    env, user, _project_file, project = layout
    user.write_text("# nothing yet\n")
    assert load_settings(project, env) == Settings()


def test_the_sandbox_mode_comes_from_the_user_config(layout):
    env, user, _project_file, project = layout
    assert load_settings(project, env).sandbox == "auto"
    user.write_text("sandbox: required\n")
    settings = load_settings(project, env)
    assert settings.sandbox == "required" and settings.sources["sandbox"].endswith("config.yaml:1")


def test_a_project_cannot_set_the_sandbox_mode(layout):
    env, _user, project_file, project = layout
    project_file.write_text("model: x/y\nsandbox: off\n")
    with pytest.raises(SettingsError) as caught:
        load_settings(project, env)
    assert caught.value.line == 2 and "cloned repository could turn the sandbox off" in str(
        caught.value)


def test_the_managed_config_sets_the_sandbox_mode_and_wins(layout, tmp_path):
    env, user, _project_file, project = layout
    managed = tmp_path / "managed"
    managed.mkdir()
    env = {**env, "DM_CC_MANAGED_DIR": str(managed)}
    user.write_text("sandbox: off\n")
    (managed / "config.yaml").write_text("sandbox: required\n")
    assert load_settings(project, env).sandbox == "required"
    (managed / "config.yaml").write_text("sandbox: auto\nmodel: a/b\n")
    with pytest.raises(SettingsError) as caught:
        load_settings(project, env)
    assert caught.value.line == 2 and "only sandbox" in str(caught.value)


@pytest.mark.parametrize("line", ["telemetry: off", "telemetry: otlp",
                                  "telemetry_endpoint: https://collector.example",
                                  "telemetry_protocol: grpc", "telemetry_input: true"])
def test_a_project_cannot_say_where_decisions_are_sent(layout, line):
    env, _user, project_file, project = layout
    project_file.write_text(f"model: x/y\n{line}\n")
    with pytest.raises(SettingsError) as caught:
        load_settings(project, env, trusts=lambda path: True)   # trusted or not
    assert caught.value.line == 2 and "its own collector" in str(caught.value)


def test_the_managed_config_turns_telemetry_on_over_the_user_and_the_environment(layout, tmp_path):
    env, user, _project_file, project = layout
    managed = tmp_path / "managed"
    managed.mkdir()
    env = {**env, "DM_CC_MANAGED_DIR": str(managed), "DM_CC_TELEMETRY": "off"}
    user.write_text("telemetry: off\n")
    (managed / "config.yaml").write_text("telemetry: otlp\ntelemetry_endpoint: https://otel.corp\n")
    settings = load_settings(project, env)
    assert (settings.telemetry, settings.telemetry_endpoint) == ("otlp", "https://otel.corp")
    assert settings.sources["telemetry"].endswith("managed/config.yaml:1")


@pytest.mark.parametrize(("text", "said"), [("telemetry: yes", "expected otlp or off"),
                                             ("telemetry_protocol: http/json", "grpc"),
                                             ("telemetry_input: maybe", "expected true or false")])
def test_a_bad_telemetry_value_names_the_line(layout, text, said):
    env, user, _project_file, project = layout
    user.write_text(f"model: a/b\n{text}\n")
    with pytest.raises(SettingsError) as caught:
        load_settings(project, env)
    assert caught.value.line == 2 and said in str(caught.value)


def test_an_unknown_sandbox_mode_names_the_line(layout):
    env, user, _project_file, project = layout
    user.write_text("model: a/b\nsandbox: maybe\n")
    with pytest.raises(SettingsError) as caught:
        load_settings(project, env)
    assert caught.value.line == 2


# ---------------------------------------------------------------- the environment

SUBAGENTS = ("explore", "general", "reviewer")
# a value for every key as the file writes it, and as its variable spells it
VALUES = {"model": ("file/model", "env/model"), "api_base": ("http://file", "http://env"),
          "default_agent": ("plan", "auto"), "max_task_depth": (2, "5"),
          "max_turns": (30, "12"), "temperature": (0.5, "0.25"), "sandbox": ("off", "required"),
          "thinking": (8000, "4000"), "telemetry": ("otlp", "off"),
          "telemetry_endpoint": ("http://file:4318", "http://env:4318"),
          "telemetry_protocol": ("grpc", "http/protobuf"), "telemetry_input": (True, "no")}
PARSED = {"max_task_depth": 5, "max_turns": 12, "temperature": 0.25, "thinking": 4000,
          "telemetry_input": False}


def test_every_key_has_a_value_here():
    from dm_cc.config.settings import KEYS

    assert set(VALUES) == set(KEYS)


@pytest.mark.parametrize("key", list(VALUES))
def test_every_key_is_overridden_by_its_variable_and_the_flag_beats_it(layout, key):
    from dm_cc.config.settings import environment_variables

    env, user, _project_file, project = layout
    file_value, text = VALUES[key]
    user.write_text(f"{key}: {file_value}\n")
    assert getattr(load_settings(project, env), key) == file_value
    variable = environment_variables()[key]
    assert variable == f"DM_CC_{key.upper()}"
    settings = load_settings(project, {**env, variable: text})
    assert getattr(settings, key) == PARSED.get(key, text)
    assert settings.sources[key] == f"environment {variable}"
    assert getattr(load_settings(project, {**env, variable: ""}), key) == file_value
    settings = load_settings(project, {**env, variable: text}, flags={key: "flag"})
    assert (getattr(settings, key), settings.sources[key]) == (
        "flag", f"--{key.replace('_', '-')}")


@pytest.mark.parametrize(("variable", "text", "said"), [
    ("DM_CC_MAX_TASK_DEPTH", "abc", "expected a whole number, not 'abc'"),
    ("DM_CC_MAX_TASK_DEPTH", "11", "expected a whole number from 0 to 10, not '11'"),
    ("DM_CC_MAX_TURNS", "0", "expected a whole number from 1 to 10000, not '0'"),
    ("DM_CC_MAX_TURNS", "2.5", "expected a whole number, not '2.5'"),
    ("DM_CC_TEMPERATURE", "warm", "expected a number, not 'warm'"),
    ("DM_CC_TEMPERATURE", "3", "expected a number from 0 to 2, not '3'"),
    ("DM_CC_SANDBOX", "maybe", "expected one of auto, required, off, not 'maybe'"),
    ("DM_CC_AGENTS_EXPLORE_MAX_TURNS", "-1", "expected a whole number from 1 to 10000, not '-1'"),
])
def test_a_bad_variable_is_an_error_naming_it(layout, variable, text, said):
    env, _user, _project_file, project = layout
    with pytest.raises(SettingsError) as caught:
        load_settings(project, {**env, variable: text}, subagents=SUBAGENTS)
    assert str(caught.value).startswith(f"environment {variable}: {said}")


def test_the_managed_sandbox_beats_the_environment(layout, tmp_path):
    env, _user, _project_file, project = layout
    managed = tmp_path / "managed"
    managed.mkdir()
    env = {**env, "DM_CC_MANAGED_DIR": str(managed), "DM_CC_SANDBOX": "off"}
    assert load_settings(project, env).sandbox == "off"
    (managed / "config.yaml").write_text("sandbox: required\n")
    settings = load_settings(project, env)
    assert settings.sandbox == "required" and settings.sources["sandbox"].endswith(":1")


def test_built_in_subagents_settings_merge_by_key_and_the_environment_wins(layout):
    env, user, project_file, project = layout
    user.write_text(dedent("""
        agents:
          explore: {model: user/cheap, temperature: 1}
          reviewer: {max_turns: 7}
    """))
    project_file.write_text("agents:\n  explore:\n    model: project/cheap\n")
    settings = load_settings(project, env, subagents=SUBAGENTS)   # the project's: untrusted
    assert dict(settings.agents["explore"]) == {"model": "user/cheap", "temperature": 1.0}
    settings = load_settings(project, {**env, "DM_CC_AGENTS_EXPLORE_TEMPERATURE": "0.1"},
                             subagents=SUBAGENTS, trusts=lambda path: True)
    assert dict(settings.agents["explore"]) == {"model": "project/cheap", "temperature": 0.1}
    assert dict(settings.agents["reviewer"]) == {"max_turns": 7}
    assert settings.sources["agents.explore.model"] == f"{project_file}:3"
    assert settings.sources["agents.explore.temperature"] == \
        "environment DM_CC_AGENTS_EXPLORE_TEMPERATURE"
    assert settings.sources["agents.reviewer.max_turns"] == f"{user}:3"


@pytest.mark.parametrize(("text", "said"), [
    ("agents:\n  build: {model: x}\n", ":2: agents: 'build' is not one of dm_cc's built-in"),
    ("agents:\n  explore: {api_base: http://x}\n", ":2: agents.explore.api_base: unknown key 'api_base'"),
    ("agents:\n  explore: {max_turns: 0}\n", ":2: agents.explore.max_turns: Input should be"),
    ("agents:\n  explore: {temperature: '0.5'}\n", "agents.explore.temperature: Input should"),
])
def test_bad_agent_settings_name_the_line(layout, text, said):
    env, user, _project_file, project = layout
    user.write_text(text)
    with pytest.raises(SettingsError, match=re.escape(said)):
        load_settings(project, env, subagents=SUBAGENTS)


def test_every_variable_is_in_the_docs():
    from pathlib import Path

    from dm_cc.config.settings import environment_variables

    docs = (Path(__file__).parents[2] / "docs" / "agent-loop.md").read_text()
    table = docs[docs.index("| key | environment"):]
    for key, variable in environment_variables(SUBAGENTS).items():
        if not key.startswith("agents."):
            assert f"| `{key}` | `{variable}` |" in table
    assert "`DM_CC_AGENTS_<NAME>_MODEL`" in table


def test_thinking_is_a_budget_of_tokens_or_off_from_file_environment_and_flag(layout):
    env, user, project_file, project = layout
    assert load_settings(project, env).thinking == 0          # off unless asked for
    user.write_text("thinking: 8000\n")
    assert load_settings(project, env).thinking == 8000
    project_file.write_text("thinking: off\n")                # YAML reads it as false
    settings = load_settings(project, env, trusts=lambda path: True)
    assert settings.thinking == 0 and settings.sources["thinking"].endswith("config.yaml:1")
    settings = load_settings(project, {**env, "DM_CC_THINKING": "4000"})
    assert settings.thinking == 4000 and settings.sources["thinking"] == \
        "environment DM_CC_THINKING"
    assert load_settings(project, {**env, "DM_CC_THINKING": "false"}).thinking == 0
    settings = load_settings(project, {**env, "DM_CC_THINKING": "4000"},
                             flags={"thinking": 0})
    assert settings.thinking == 0 and settings.sources["thinking"] == "--thinking"


@pytest.mark.parametrize("value", ["lots", "true", "-5", "2000000"])
def test_a_bad_thinking_budget_names_the_line_or_the_variable(layout, value):
    env, user, _project_file, project = layout
    user.write_text(f"model: a/b\nthinking: {value}\n")
    with pytest.raises(SettingsError) as caught:
        load_settings(project, env)
    assert caught.value.line == 2 and "a number of thinking tokens (e.g. 8000) or off" in str(
        caught.value)
    user.write_text("")
    with pytest.raises(SettingsError) as caught:
        load_settings(project, {**env, "DM_CC_THINKING": value})
    assert str(caught.value).startswith("environment DM_CC_THINKING: expected a number")
