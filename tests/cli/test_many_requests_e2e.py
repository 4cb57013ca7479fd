"""``dm_cc run`` with commands of thousands of requests (issue 26): each is refused as
a headless ask is, the run ends, and what it prints stays a line per call."""

from __future__ import annotations

import json

from dm_cc.core.approval import HEADLESS_FEEDBACK
from dm_cc.session.store import SessionStore

# ~1 KB: 64 CDPATH entries times the operands of `cat` after a `cd` (~1,500 requests)
CDPATH = ("CDPATH=" + ":".join(f"/{i}" for i in range(64)) + "; cd x; cat "
          + " ".join(f"f{i}" for i in range(170)))
REMOVING = "rm " + " ".join(f"{i:x}" for i in range(3_281))     # 3,283 requests


def script(tmp_path, *commands: str) -> str:
    path = tmp_path / "script.json"   # a script may be JSON: these commands are long
    path.write_text(json.dumps([{"tool": "bash", "args": {"command": c}} for c in commands]
                               + [{"text": "done"}]))
    return f"scripted:{path}"


def test_run_refuses_commands_of_thousands_of_requests(cli, project, tmp_path):
    (project / "a").write_text("kept\n")
    code, out, err = cli("run", "--model", script(tmp_path, CDPATH, REMOVING), "go")
    assert code == 0 and out.strip() == "done"
    assert (project / "a").read_text() == "kept\n"
    lines = [line for line in err.splitlines() if line.startswith("dm_cc: bash ")]
    assert len(lines) == 2
    for line in lines:   # the call (cut), the decision and ten requests; the rest counted
        assert "→ ask → " in line and "more requests)" in line and len(line) < 3_000
    assert "… and 3273 more requests)" in lines[1]
    store = SessionStore(project.parent / "dmhome" / "data" / "sessions")
    session = store.load(store.latest(project).id)
    results = [m for m in session.messages if m.role == "tool"]
    assert [HEADLESS_FEEDBACK in m.content and m.is_error for m in results] == [True, True]


def test_run_that_fails_on_an_ask_names_a_few_requests(cli, tmp_path):
    code, _out, err = cli("run", "--on-ask", "fail", "--model", script(tmp_path, REMOVING), "go")
    assert code == 3
    failure = [line for line in err.splitlines() if "needs approval" in line]
    assert len(failure) == 1 and len(failure[0]) < 2_000
    assert failure[0].endswith("… and 3273 more")
