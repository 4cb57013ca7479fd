"""Properties of the whole path from a shell command to a decision (hypothesis).

* A command the policy denies stays denied wherever it is embedded.
* Arbitrary text never raises and is never allowed under a policy with no allow.
* Requests are deterministic.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dm_cc.config.dirs import HostFilesystem
from dm_cc.permissions import PathContext, Rule, Ruleset, decide
from dm_cc.permissions.paths import PathContextDirs
from dm_cc.tools.catalog import input_requests

ROOT = Path("/nonexistent-project")
WHERE = PathContextDirs(root=ROOT, cwd=ROOT, home=Path("/nonexistent-home"), fs=HostFilesystem())
CONTEXT = PathContext(root=ROOT.as_posix(), home="/nonexistent-home")

COMMANDS = ["rm", "curl", "git", "npm", "docker", "shred", "dd", "chmod"]
WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_./", min_size=1, max_size=12)

EMBEDDINGS = [
    "{c}", "true && {c}", "true; {c}", "true | {c}", "true || {c}", "$({c})", "`{c}`",
    "({c})", "{{ {c}; }}", "bash -c '{c}'", "sh -c \"{c}\"", "echo $({c})", "cat <({c})",
    "if true; then {c}; fi", "sudo {c}", "timeout 5 {c}", "env A=1 {c}", "nohup {c} &",
    "xargs {c}", "eval '{c}'", "x=$({c})", "true\n{c}", "for i in 1; do {c}; done",
]

SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def _decision(command: str, rules: list[Rule]) -> str:
    return decide(input_requests("bash", command, WHERE),
                  Ruleset(rules, CONTEXT)).action


@SETTINGS
@given(st.sampled_from(COMMANDS), st.lists(WORD, max_size=3), st.sampled_from(EMBEDDINGS))
def test_a_denied_command_is_denied_wherever_it_is_embedded(name, args, embedding):
    command = " ".join([name, *args])
    rules = [Rule("*", "*", "allow"), Rule("external_directory", "*", "allow"),
             Rule("bash", f"{name} *", "deny")]
    assert _decision(command, rules) == "deny"
    assert _decision(embedding.format(c=command), rules) == "deny", embedding.format(c=command)


@SETTINGS
@given(st.text(max_size=300))
def test_arbitrary_text_never_raises_and_is_never_allowed_by_default(text):
    assert _decision(text, []) != "allow"
    assert _decision(text, [Rule("bash", "*", "deny")]) in ("deny", "ask")


SHELLISH = st.text(alphabet="ab $(){}[]|&;<>'\"`\\\n*?~=-/.#!", max_size=120)


@SETTINGS
@given(SHELLISH)
def test_requests_are_deterministic(text):
    first = input_requests("bash", text, WHERE)
    second = input_requests("bash", text, WHERE)
    assert first == second
    assert _decision(text, []) != "allow"
