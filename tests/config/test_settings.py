"""Settings: user file < project file < environment < flags, and errors naming file:line."""

from __future__ import annotations

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
          git: {command: [uvx, mcp-server-git]}
          fs: {command: npx, args: [-y, fs-server], env: {ROOT: /tmp}, enabled: false}
    """))
    project_file.write_text(dedent("""
        model: project/model
        api_base:
        mcp:
          git: {command: [git-mcp]}
    """))
    settings = load_settings(project, env)
    assert (settings.model, settings.api_base, settings.default_agent) == (
        "project/model", "http://user", "plan")  # a null value does not override
    assert settings.mcp["git"].argv == ("git-mcp",)
    assert settings.mcp["fs"].argv == ("npx", "-y", "fs-server")
    assert dict(settings.mcp["fs"].env) == {"ROOT": "/tmp"} and not settings.mcp["fs"].enabled
    shown_user, shown_project = str(user), str(project_file)
    assert dict(settings.sources) == {
        "model": f"{shown_project}:1", "api_base": f"{shown_user}:2",
        "default_agent": f"{shown_user}:3", "mcp.git": f"{shown_project}:4",
        "mcp.fs": f"{shown_user}:6"}

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
    ("mcp:\n  git:\n    args: [x]\n", 2, "missing required field 'command'"),
    ("mcp:\n  git:\n    command: 3\n", 3, "command is a program name or a list"),
    ("mcp:\n  git:\n    command: []\n", 3, "mcp.git.command: List should have at least 1"),
    ("mcp:\n  git:\n    command: x\n    env: {PORT: 8080}\n", 4, "mcp.git.env.PORT"),
    ("mcp:\n  git:\n    command: x\n    enabled: 'yes'\n", 4, "mcp.git.enabled"),
    ("mcp:\n  git:\n    command: x\n    cwd: /\n", 4, "unknown key 'cwd'"),
    ("mcp:\n  my__git:\n    command: x\n", 2, "bad server name 'my__git'"),
    ("mcp: [git]\n", 1, "mcp: Input should be a valid dictionary"),
])
def test_errors_name_file_and_line(text, line, message):
    with pytest.raises(SettingsError) as caught:
        parse_settings(text, "cfg/config.yaml")
    error = caught.value
    assert isinstance(error, ConfigError)
    assert (error.path, error.line) == ("cfg/config.yaml", line), str(error)
    assert message in error.message
    assert str(error).startswith(f"cfg/config.yaml:{line}: ")


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


def test_an_unknown_sandbox_mode_names_the_line(layout):
    env, user, _project_file, project = layout
    user.write_text("model: a/b\nsandbox: maybe\n")
    with pytest.raises(SettingsError) as caught:
        load_settings(project, env)
    assert caught.value.line == 2
