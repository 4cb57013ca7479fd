"""The JSONL session store: round trips, listings, damage, crashes and concurrent writers."""

from __future__ import annotations

import json
import logging
import threading

import pytest

from dm_cc.errors import SessionError
from dm_cc.session.messages import Message, ToolCall
from dm_cc.session.store import SessionStore


@pytest.fixture
def store(tmp_path):
    return SessionStore(tmp_path / "sessions")


@pytest.fixture
def project(tmp_path):
    (tmp_path / "project").mkdir()
    return tmp_path / "project"


CONVERSATION = [
    Message("user", "please fix the tests", agent="build"),
    Message("assistant", "", agent="build", reasoning="look first",
            tool_calls=(ToolCall("call_1", "bash", {"command": "pytest -q"}),
                        ToolCall("call_2", "read", None, raw_arguments='{"path": ')),),
    Message("tool", "3 failed\nline two", agent="build", tool_call_id="call_1",
            tool_name="bash", is_error=True),
    Message("user", "Switching to plan: ünïcode ✓ and a\nnewline", agent="plan", synthetic=True),
    Message("assistant", "Here is the plan.", agent="plan"),
]


def lines_of(path):
    return path.read_text(encoding="utf-8").splitlines()


def test_every_message_field_round_trips(store, project):
    session = store.create(project, title="fix tests")
    for message in CONVERSATION:
        session.append(message)
    loaded = store.load(session.id)
    assert loaded.messages == CONVERSATION
    assert loaded.warnings == []
    assert loaded.info == session.info
    assert loaded.info.agent == "plan"  # the agent of the last user message (synthetic too)
    assert loaded.info.messages == len(CONVERSATION)
    assert loaded.info.project == project.resolve()


def test_a_compaction_summary_round_trips_and_old_lines_load_without_its_fields(store, project):
    session = store.create(project)
    session.append(CONVERSATION[0])
    summary = Message("user", "[dm_cc: conversation compacted] …", synthetic=True,
                      compaction=True, kept_from=CONVERSATION[0].id)
    session.append(summary)
    old = {k: v for k, v in CONVERSATION[4].to_json().items()
           if k not in ("compaction", "kept_from")}          # a line from before they existed
    with session.path.open("a", encoding="utf-8") as file:
        file.write(json.dumps({"type": "message", **old}) + "\n")
    loaded = store.load(session.id)
    assert loaded.messages == [CONVERSATION[0], summary, CONVERSATION[4]]
    assert loaded.warnings == []


def test_file_format_is_a_header_then_one_line_per_record(store, project):
    session = store.create(project, agent="plan")
    session.append(CONVERSATION[0])
    session.set_title("renamed")
    records = [json.loads(line) for line in lines_of(session.path)]
    assert session.path == store.root / f"{session.id}.jsonl"
    assert records[0] == {"type": "session", "id": session.id, "parent_id": None, "title": "",
                          "project": str(project.resolve()), "created": session.info.created,
                          "agent": "plan"}
    assert records[1] == {"type": "message", **CONVERSATION[0].to_json()}
    assert records[2] == {"type": "title", "title": "please fix the tests"}  # the first prompt
    assert records[3] == {"type": "title", "title": "renamed"}
    assert store.load(session.id).info.title == "renamed"


def test_the_first_real_prompt_titles_an_untitled_session_once(store, project):
    session = store.create(project)
    session.append(Message("user", "Switched to plan.", synthetic=True))
    assert session.info.title == ""
    session.append(Message("user", "\n  fix   the\tflaky  test in  tests/test_io.py " + "x" * 80
                           + "\nand then commit"))
    session.append(Message("user", "something else"))
    title = store.load(session.id).info.title
    assert title == session.info.title and title.startswith("fix the flaky test in tests/test_io.py x")
    assert len(title) == 60 and title.endswith("…")
    titles = [line for line in lines_of(session.path) if '"type":"title"' in line]
    assert len(titles) == 1


def test_a_given_title_is_kept(store, project):
    session = store.create(project, title="given")
    session.append(Message("user", "a prompt"))
    assert store.load(session.id).info.title == "given"


def test_new_session_takes_its_agent_from_create(store, project):
    session = store.create(project, agent="plan")
    assert session.messages == [] and session.info.messages == 0
    session.append(Message("user", "a prompt", agent="plan", synthetic=True))
    assert store.load(session.id).info.agent == "plan"


def test_a_session_is_saved_with_its_first_message_and_empty_ones_are_not_listed(store, project):
    opened = store.create(project, title="opened and left")
    assert not opened.path.exists() and store.list() == []
    with pytest.raises(SessionError, match="no session"):
        store.load(opened.id)
    used = store.create(project)
    used.append(Message("user", "hello"))
    assert lines_of(used.path)[0].startswith('{"type":"session"')   # the header, then it
    assert [i.id for i in store.list()] == [used.id]
    assert not opened.path.exists()
    # a file left empty by an older dm_cc is kept, listed only on request
    old = store.create(project)
    old.set_title("old and empty")
    assert [i.id for i in store.list(project)] == [used.id]
    assert [i.id for i in store.list(project, empty=True)] == [used.id, old.id]


def test_ids_sort_by_creation_and_are_pattern_safe(store, project):
    ids = [store.create(project).id for _ in range(3)]
    assert all(i.startswith("ses_") and set(i) <= set("ses_0123456789abcdef") for i in ids)
    assert [i.split("_")[1] for i in ids] == sorted(i.split("_")[1] for i in ids)


def test_list_newest_last_filtered_by_project_with_parents(store, project, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    first = store.create(project, title="first")
    child = store.create(project, parent_id=first.id, agent="explore")
    elsewhere = store.create(other)
    first.append(Message("user", "first"))
    child.append(Message("user", "look around", agent="explore"))
    elsewhere.append(Message("user", "elsewhere"))
    assert [i.id for i in store.list()] == [first.id, child.id, elsewhere.id]
    infos = store.list(project)
    assert [i.id for i in infos] == [first.id, child.id]
    assert infos[1].parent_id == first.id and infos[1].agent == "explore"
    assert infos[1].messages == 1 and infos[0].title == "first"


def test_latest_is_the_most_recently_used_top_level_session(store, project, tmp_path):
    assert store.latest(project) is None
    old = store.create(project)
    new = store.create(project)
    old.append(Message("user", "first"))
    new.append(Message("user", "second"))
    store.create(project, parent_id=new.id).append(Message("user", "x"))  # children never count
    store.create(tmp_path).append(Message("user", "x"))                   # nor other projects
    store.create(project)                    # nor a session opened and left without a message
    assert store.latest(project).id == new.id
    old.append(Message("user", "back to this one"))
    assert store.latest(project).id == old.id


def test_unknown_or_malicious_id_is_a_session_error(store, project):
    store.create(project).append(Message("user", "x"))
    for bad in ("ses_nope", "../../etc/passwd", ""):
        with pytest.raises(SessionError, match="no session"):
            store.load(bad)
    assert store.list() and SessionStore(store.root / "absent").list() == []


def test_torn_last_line_is_skipped_with_a_warning(store, project, caplog):
    session = store.create(project, title="damage")  # titled: no title record shifts lines
    for message in CONVERSATION[:3]:
        session.append(message)
    with open(session.path, "ab") as f:
        f.write(b'{"type": "message", "role": "user", "cont')
    before = session.path.read_bytes()
    with caplog.at_level(logging.WARNING, logger="dm_cc.session.store"):
        loaded = store.load(session.id)
    assert loaded.messages == CONVERSATION[:3]
    assert loaded.warnings == [f"{session.path}:5: skipped the unfinished last line "
                               "(interrupted write)"]
    assert loaded.warnings[0] in caplog.text
    assert session.path.read_bytes() == before  # loading never rewrites


@pytest.mark.parametrize("garbage", [b"{not json", b"[1, 2]", b'{"type": "message"}',
                                     b'{"type": "message", "role": "system"}',
                                     b'{"type": "surprise"}', b"\xff\xfe binary"])
def test_corrupt_middle_line_is_skipped_naming_file_and_line(store, project, garbage):
    session = store.create(project, title="damage")  # titled: no title record shifts lines
    session.append(CONVERSATION[0])
    with open(session.path, "ab") as f:
        f.write(garbage + b"\n")
    session.append(CONVERSATION[4])
    loaded = store.load(session.id)
    assert loaded.messages == [CONVERSATION[0], CONVERSATION[4]]
    assert len(loaded.warnings) == 1
    assert loaded.warnings[0].startswith(f"{session.path}:3: skipped a corrupt line (")


def test_crash_mid_line_then_append_keeps_everything_but_the_torn_line(store, project):
    session = store.create(project, title="damage")  # titled: no title record shifts lines
    session.append(CONVERSATION[0])
    with open(session.path, "ab") as f:  # the process died half way through a write
        f.write(b'{"type":"message","role":"assistant","content":"half')
    resumed = store.load(session.id)
    assert len(resumed.warnings) == 1
    resumed.append(CONVERSATION[4])
    loaded = store.load(session.id)
    assert loaded.messages == [CONVERSATION[0], CONVERSATION[4]]
    assert len(loaded.warnings) == 1
    assert loaded.warnings[0].startswith(f"{session.path}:3: skipped a corrupt line (Unterminated")


def test_bad_header_is_an_error_and_list_skips_it(store, project, caplog):
    good = store.create(project)
    good.append(Message("user", "x"))
    (store.root / "ses_broken.jsonl").write_text('{"type": "message"}\n')
    (store.root / "ses_empty.jsonl").write_text("")
    for name in ("ses_broken", "ses_empty"):
        with pytest.raises(SessionError, match=f"ses_{name[4:]}.jsonl:1: "):
            store.load(name)
    with caplog.at_level(logging.WARNING, logger="dm_cc.session.store"):
        assert [i.id for i in store.list()] == [good.id]
    assert "ses_broken.jsonl:1" in caplog.text


def test_two_writers_on_one_file_never_interleave_within_a_line(store, project):
    session = store.create(project, title="damage")  # titled: no title record shifts lines
    session.append(Message("user", "go"))
    writers = [store.load(session.id), store.load(session.id)]
    big = "x" * 20_000  # larger than a pipe buffer; still one write()

    def write(writer, tag):
        for n in range(100):
            writer.append(Message("user", f"{tag}{n} {big}", agent=tag))

    threads = [threading.Thread(target=write, args=(w, t))
               for w, t in zip(writers, "ab", strict=True)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    loaded = store.load(session.id)
    assert loaded.warnings == []
    assert len(lines_of(session.path)) == 202
    for tag in "ab":
        mine = [m.content.split()[0] for m in loaded.messages[1:] if m.agent == tag]
        assert mine == [f"{tag}{n}" for n in range(100)]


def test_session_tree_puts_children_under_their_parent(store, project):
    from dataclasses import replace

    from dm_cc.session.store import session_tree

    root = store.create(project).info
    other = store.create(project).info
    child = store.create(project, parent_id=root.id).info
    grandchild = store.create(project, parent_id=child.id).info
    orphan = store.create(project, parent_id="ses_000000000000_00000000").info
    infos = [root, other, child, grandchild, orphan]
    assert [(d, i.id) for d, i in session_tree(infos)] == [
        (0, root.id), (1, child.id), (2, grandchild.id), (0, other.id), (0, orphan.id)]
    # a (damaged) cycle of parent ids still lists each session once
    a, b = replace(root, parent_id=other.id), replace(other, parent_id=root.id)
    assert sorted(i.id for _, i in session_tree([a, b])) == sorted([root.id, other.id])


def test_truncate_cuts_the_history_for_good_and_keeps_the_title(store, project):
    session = store.create(project)
    for message in CONVERSATION:
        session.append(message)
    assert session.info.title == "please fix the tests"
    with session.path.open("ab") as handle:      # a damaged line before the cut stays
        handle.write(b"{damaged\n")
    session.append(Message("user", "later", agent="build"))
    session.truncate(3)
    assert session.messages == CONVERSATION[:3]
    assert session.info.messages == 3 and session.info.agent == "build"
    loaded = store.load(session.id)
    assert loaded.messages == CONVERSATION[:3] and loaded.info.title == "please fix the tests"
    assert loaded.warnings == []                  # the damaged line came after the cut
    session.append(Message("user", "again", agent="build"))
    assert [m.content for m in store.load(session.id).messages][-1] == "again"
    with pytest.raises(ValueError):
        session.truncate(9)


def test_truncate_keeps_damage_before_the_cut_as_it_was(store, project):
    session = store.create(project, title="t")
    session.append(CONVERSATION[0])
    with session.path.open("ab") as handle:
        handle.write(b"{damaged\n")
    session.append(CONVERSATION[1])
    session.append(CONVERSATION[2])
    session.truncate(2)
    assert b"{damaged" in session.path.read_bytes()
    loaded = store.load(session.id)
    assert loaded.messages == CONVERSATION[:2] and len(loaded.warnings) == 1
