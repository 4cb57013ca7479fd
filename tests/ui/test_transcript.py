"""Replaying a session for a person coming back to it."""

from __future__ import annotations

from dm_cc.session.messages import Message, ToolCall
from dm_cc.session.store import SessionStore
from dm_cc.ui.transcript import replay, session_notice


def exchange(n: int) -> list[Message]:
    return [Message("user", f"prompt {n}"), Message("assistant", f"answer {n}")]


CONVERSATION = [
    Message("user", "fix the flaky test\nin tests/test_io.py"),
    Message("assistant", "Looking.", tool_calls=(
        ToolCall("c1", "bash", {"command": "pytest -q"}),
        ToolCall("c2", "bash", {"command": "rm -rf build"}),
        ToolCall("c3", "read", {"path": "gone.py"}))),
    Message("tool", "\n1 failed, 3 passed\nmore", tool_call_id="c1", tool_name="bash"),
    Message("tool", "Permission denied: bash was not run.\n- …", tool_call_id="c2",
            tool_name="bash", is_error=True),
    Message("assistant", "", tool_calls=(ToolCall("c4", "plan_enter", {}),)),
    Message("tool", "Switched to the plan agent.", tool_call_id="c4", tool_name="plan_enter"),
    Message("user", "You are now planning.\nRules…", agent="plan", synthetic=True),
    Message("user", "Reminder: stay read-only.", agent="plan", synthetic=True),
    Message("assistant", "\n".join(f"plan line {n}" for n in range(10)), agent="plan"),
]


def test_replay_shows_prompts_calls_with_results_switches_and_answers():
    assert replay(CONVERSATION) == [
        "> fix the flaky test",
        "  in tests/test_io.py",
        "Looking.",
        "  • bash pytest -q → 1 failed, 3 passed",
        "  ! bash rm -rf build → Permission denied: bash was not run.",
        "  ! read gone.py → (no result: interrupted)",
        "  • plan_enter → Switched to the plan agent.",
        "  → agent plan [synthetic] You are now planning.",
        "  [synthetic] Reminder: stay read-only.",
        *(f"plan line {n}" for n in range(8)),
        "… 2 more lines",
    ]


def test_replay_keeps_the_last_exchanges():
    messages = [m for n in range(5) for m in exchange(n)]
    assert replay(messages, last=2) == ["… 3 earlier exchanges", "> prompt 3", "answer 3",
                                        "> prompt 4", "answer 4"]
    assert replay(messages, last=4)[0] == "… 1 earlier exchange"
    assert len(replay(messages, last=None)) == 10 == len(replay(messages, last=5))
    assert replay([]) == []


def test_an_agent_switch_is_seen_across_the_cut():
    messages = [*exchange(0), Message("user", "Planning.", agent="plan", synthetic=True),
                Message("user", "go on", agent="plan"),
                Message("user", "Building.", agent="build", synthetic=True),
                Message("user", "review it", agent="review")]
    assert replay(messages, last=2) == ["… 1 earlier exchange", "> go on",
                                        "  → agent build [synthetic] Building.",
                                        "  → agent review", "> review it"]


def test_the_notice_says_what_was_opened(tmp_path):
    store = SessionStore(tmp_path / "sessions")
    new = store.create(tmp_path)
    assert session_notice(new, tmp_path) is None
    assert session_notice(new, tmp_path, continue_last=True) == (
        f"no earlier session in {tmp_path}; starting a new one ({new.id})")
    assert session_notice(new, tmp_path, resume=new.id) == f"continuing session {new.id} (untitled)"
    new.append(Message("user", "fix it"))
    assert session_notice(new, tmp_path, continue_last=True) == (
        f"continuing session {new.id} (fix it)")
