"""The session options the REPL and ``run`` share (cli/options.py): --max-turns,
--temperature, --verbose (a debug log whose path is printed), and ``@explore …``
routed in ``run`` as in the REPL (issue 23, item 11)."""

from __future__ import annotations

import logging
import stat
from pathlib import Path

import pytest
import yaml

from dm_cc.cli import build_parser, main
from dm_cc.cli.options import options_from
from dm_cc.compose import Options


@pytest.fixture
def project(project, monkeypatch):
    monkeypatch.chdir(project)
    return project


@pytest.fixture(autouse=True)
def logger_restored():
    """--verbose sets up dm_cc's logger for the process; the other tests run without."""
    logger = logging.getLogger("dm_cc")
    handlers, level = list(logger.handlers), logger.level
    yield
    for handler in logger.handlers[len(handlers):]:
        handler.close()
    logger.handlers[:] = handlers
    logger.setLevel(level)


def script(project: Path, replies: list[dict]) -> str:
    path = project / ".script.yaml"
    path.write_text(yaml.safe_dump(replies))
    return f"scripted:{path}"


def test_the_repl_reads_them_as_run_does():
    args = build_parser([]).parse_args(["--max-turns", "3", "--temperature", "0.4", "--verbose"])
    assert args.handler.__name__ == "_interactive" and args.verbose
    assert options_from(args) == Options(max_turns=3, temperature=0.4)
    run = build_parser(["run"]).parse_args(["run", "--max-turns", "3", "--temperature", "0.4",
                                            "hi"])
    assert options_from(run) == options_from(args)


@pytest.mark.parametrize("argv, said", [
    (["--max-turns", "0"], "--max-turns: expected a whole number of at least 1, not '0'"),
    (["run", "--max-turns", "x", "hi"], "expected a whole number of at least 1, not 'x'"),
    (["--temperature", "2.5"], "--temperature: expected a number from 0 to 2, not '2.5'"),
])
def test_a_bad_value_is_a_usage_error(argv, said, capsys):
    assert main(argv) == 2
    assert said in capsys.readouterr().err


def test_verbose_writes_a_debug_log_and_prints_where(project, capsys):
    (project / "auth.py").write_text("def login(): pass\n")
    model = script(project, [{"tool": "grep", "args": {"pattern": "def login"}},
                             {"text": "auth.py:1"}, {"text": "MAIN: explore found auth.py"}])
    code = main(["run", "--verbose", "--temperature", "0.7", "--model", model,
                 "@explore find the login code"])
    out, err = capsys.readouterr()
    assert code == 0 and out.strip() == "MAIN: explore found auth.py"
    path = Path(err.split("dm_cc: debug log: ")[1].split()[0])
    log = path.read_text()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600        # it holds prompts and code
    assert "model call: scripted" in log and "temperature 0.7" in log
    assert "event: TaskStarted(" in log and "agent='explore'" in log
    # the person's @explore started the subagent with the rest as its task
    assert "[explore #1] started: find the login code" in err


def test_max_turns_stops_a_run(project, capsys):
    model = script(project, [{"tool": "list", "args": {}}, {"tool": "list", "args": {}},
                             {"text": "never"}])
    assert main(["run", "--max-turns", "1", "--model", model, "look"]) == 1
    assert "Stopped after 1 model calls (max_turns)." in capsys.readouterr().out


def test_without_verbose_nothing_is_logged(project, capsys):
    assert main(["run", "--model", script(project, [{"text": "ok"}]), "hi"]) == 0
    assert "debug log" not in capsys.readouterr().err


@pytest.mark.parametrize("argv", [
    ["--model", "M", "--max-turns", "3", "--policy", "a.yaml", "run", "--policy", "b.yaml", "hi"],
    ["--model", "M", "run", "--max-turns", "3", "--policy", "a.yaml", "--policy", "b.yaml", "hi"],
    ["run", "--model", "M", "--max-turns", "3", "--policy", "a.yaml", "--policy", "b.yaml", "hi"],
    ["--model", "other", "--max-turns", "9", "run", "--model", "M", "--max-turns", "3",
     "--policy", "a.yaml", "--policy", "b.yaml", "hi"],
])
def test_session_options_count_before_run_as_after_it(argv):
    """``dm_cc --model M run …`` is ``dm_cc run --model M …`` (argparse would let run's
    defaults overwrite what came before it); given in both places, run's wins, and
    policies add up in the order written."""
    args = build_parser(argv).parse_args(argv)
    options = options_from(args)
    assert (options.model, options.max_turns) == ("M", 3)
    assert options.policies == ("a.yaml", "b.yaml")
    assert args.json is False and args.on_ask == "deny"


@pytest.mark.parametrize("argv, thinking", [
    ([], None), (["--thinking"], 8000), (["--thinking", "2000"], 2000),
    (["--thinking", "off"], 0), (["--thinking=12000"], 12000),
])
def test_thinking_alone_is_the_default_budget_and_off_turns_it_off(argv, thinking):
    assert options_from(build_parser(argv).parse_args(argv)).thinking == thinking
    run = ["--thinking", "3000", "run", *argv, "--agent", "build", "hi"]
    assert options_from(build_parser(run).parse_args(run)).thinking == \
        (3000 if thinking is None else thinking)


def test_a_prompt_taken_for_the_budget_is_a_clear_usage_error(capsys):
    assert main(["run", "--thinking", "fix the bug"]) == 2
    err = capsys.readouterr().err
    assert "--thinking: expected a number of thinking tokens (e.g. 8000) or off, not " \
           "'fix the bug' (a prompt goes after the budget: --thinking 8000 PROMPT)" in err


def test_help_says_the_default_budget(capsys):
    assert main(["--help"]) == 0
    help_text = " ".join(capsys.readouterr().out.split())
    assert "--thinking [BUDGET]" in help_text and "(alone: 8000; off: none)" in help_text
