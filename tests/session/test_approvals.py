"""The saved-approvals store: the file, agent scoping, expiry, damage kept aside,
concurrent writers in separate processes, and a model check of add/revoke/clear."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dm_cc.errors import ApprovalStoreError, DmccError
from dm_cc.permissions import Rule
from dm_cc.session.approvals import ApprovalStore, SavedApproval, parse_duration

NOW = 1_700_000_000.0
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def store(tmp_path):
    return ApprovalStore.for_project(tmp_path / "data", tmp_path / "my project")


def aside_files(store):
    return sorted(store.path.parent.glob(store.path.name + ".corrupt-*"))


# --------------------------------------------------------------------------- the file


def test_round_trip_through_a_readable_file(store, tmp_path):
    saved = store.add("bash", "npm test *", agent="build", note="approved for bash", now=NOW)
    assert saved.id.startswith("apr_") and saved.created == NOW and saved.expires is None
    again = ApprovalStore(store.path)
    assert again.list(now=NOW) == [saved]
    document = json.loads(store.path.read_text(encoding="utf-8"))
    assert document == {"version": 1, "project": str((tmp_path / "my project").resolve()),
                        "approvals": [saved.to_json()]}
    assert store.path.read_text(encoding="utf-8").startswith('{\n  "version": 1,')


def test_rule_of_an_approval():
    approval = SavedApproval("apr_0a1b", "bash", "npm test *", "build", NOW,
                             note="approved for bash in session ses_1")
    day = time.strftime("%Y-%m-%d", time.localtime(NOW))
    assert approval.rule() == Rule("bash", "npm test *", "allow",
                                   reason=f"saved {day}: approved for bash in session ses_1",
                                   source="approval:apr_0a1b")


@pytest.mark.parametrize("permission", ["doom_loop", "sandbox_escape"])
def test_a_session_only_permission_is_never_saved(tmp_path, permission):
    store = ApprovalStore(tmp_path / "a.json")
    with pytest.raises(ValueError, match=f"{permission} approvals are never saved"):
        store.add(permission, "*", agent="build", now=NOW)
    assert not store.path.exists()


def test_a_session_only_entry_in_the_file_gives_no_rule(tmp_path):
    """One saved by a dm_cc from before the rule (or by hand): listed, to revoke, never used."""
    store = ApprovalStore(tmp_path / "a.json")
    kept = store.add("bash", "npm test *", agent="build", now=NOW)
    document = json.loads(store.path.read_text(encoding="utf-8"))
    old = dict(document["approvals"][0], id="apr_00ff", permission="doom_loop", pattern="edit")
    document["approvals"].append(old)
    store.path.write_text(json.dumps(document), encoding="utf-8")
    assert [a.id for a in store.list(now=NOW)] == [kept.id, "apr_00ff"]
    assert [r.permission for r in store.rules_for("build", now=NOW)] == ["bash"]


def test_one_file_per_project_in_the_data_dir(tmp_path):
    data = tmp_path / "data"
    first = ApprovalStore.for_project(data, tmp_path / "a" / "app")
    second = ApprovalStore.for_project(data, tmp_path / "b" / "app")
    assert first.path.parent == second.path.parent == data / "approvals"
    assert first.path != second.path
    assert first.path.name.startswith("app-") and first.path.suffix == ".json"
    odd = ApprovalStore.for_project(data, tmp_path / "my proj; rm -rf ~")
    assert odd.path.name.startswith("my-proj-rm--rf-")
    assert ApprovalStore.for_project(data, Path("/")).path.name.startswith("root-")


def test_modes_private(store):
    store.add("read", "secrets/**", agent="build")
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(store.path.parent.stat().st_mode) == 0o700
    assert sorted(p.name for p in store.path.parent.iterdir()) == [
        store.path.name, store.path.name + ".lock"]  # no temporary file left behind


def test_missing_file_is_an_empty_store(store):
    assert store.list() == [] and store.rules_for("build") == ()
    assert store.clear() == 0
    assert not store.path.exists()  # nothing changed: nothing written


# --------------------------------------------------------------------------- meaning


def test_agent_scoping(store):
    store.add("bash", "make *", agent="build")
    store.add("read", "docs/**", agent="plan")
    assert [r.pattern for r in store.rules_for("build")] == ["make *"]
    assert [r.pattern for r in store.rules_for("plan")] == ["docs/**"]
    assert store.rules_for("explore") == ()
    assert [a.agent for a in store.list()] == ["build", "plan"]
    assert [a.agent for a in store.list(agent="plan")] == ["plan"]


def test_expiry(store):
    lasting = store.add("bash", "make *", agent="build", now=NOW)
    brief = store.add("bash", "npm *", agent="build", expires=NOW + 60, now=NOW)
    assert store.list(now=NOW + 59) == [lasting, brief]
    assert store.list(now=NOW + 60) == [lasting]
    assert len(json.loads(store.path.read_text())["approvals"]) == 2  # reads never write
    store.add("read", "x", agent="build", now=NOW + 61)  # the next change drops it
    assert [a["pattern"] for a in json.loads(store.path.read_text())["approvals"]] == ["make *", "x"]
    with pytest.raises(ValueError, match="expire before"):
        store.add("bash", "late", agent="build", expires=NOW - 1, now=NOW)


def test_duplicate_add_returns_the_saved_one(store):
    first = store.add("bash", "make *", agent="build", expires=NOW + 60, now=NOW)
    assert store.add("bash", "make *", agent="build", expires=NOW + 30, now=NOW + 1) == first
    longer = store.add("bash", "make *", agent="build", now=NOW + 2)  # no expiry: extended
    assert longer.id == first.id and longer.expires is None and longer.created == NOW
    assert store.list(now=NOW + 100) == [longer]
    other = store.add("bash", "make *", agent="plan", now=NOW)
    assert other.id != first.id and len(store.list(now=NOW)) == 2


def test_an_expired_duplicate_is_replaced(store):
    old = store.add("bash", "make *", agent="build", expires=NOW + 1, now=NOW)
    new = store.add("bash", "make *", agent="build", now=NOW + 5)
    assert new.id != old.id and store.list(now=NOW + 5) == [new]


@pytest.mark.parametrize("permission, pattern, agent, problem", [
    ("bash*", "x", "build", "no \\* or \\?"),
    ("b?sh", "x", "build", "no \\* or \\?"),
    ("", "x", "build", "bad permission"),
    ("bash", "", "build", "pattern must not be empty"),
    ("bash", "x", "", "agent must not be empty"),
])
def test_malformed_approvals_refused(store, permission, pattern, agent, problem):
    with pytest.raises(ValueError, match=problem):
        store.add(permission, pattern, agent=agent)
    assert not store.path.exists()


def test_revoke_and_clear(store):
    first = store.add("bash", "make *", agent="build")
    second = store.add("bash", "npm *", agent="build")
    assert store.revoke(first.id) == first
    assert store.list() == [second]
    with pytest.raises(ApprovalStoreError) as caught:
        store.revoke(first.id)
    assert str(store.path) in str(caught.value) and second.id in str(caught.value)
    assert isinstance(caught.value, DmccError)
    assert store.clear() == 1 and store.list() == []
    with pytest.raises(ApprovalStoreError, match="there are none"):
        store.revoke("apr_123")


# --------------------------------------------------------------------------- damage


GOOD = {"id": "apr_00ff", "permission": "bash", "pattern": "make *", "agent": "build",
        "created": NOW, "expires": None, "note": ""}


@pytest.mark.parametrize("data, problem", [
    (b"\x00\xff garbage \xfe", "not UTF-8"),
    (b'{"version": 1,\n "project": "/p",\n "approvals": [oops]}', r"json:3: .*not JSON"),
    (b"[1, 2, 3]", "not a dm_cc approvals file"),
    (b'{"version": 1, "approvals": []}', "not a dm_cc approvals file"),
    (json.dumps({"version": 2, "project": None, "approvals": []}).encode(), "unknown version 2"),
    (json.dumps({"version": True, "project": None, "approvals": []}).encode(), "unknown version"),
    (json.dumps({"version": 1, "project": None, "approvals": {}}).encode(), "must be a list"),
    (json.dumps({"version": 1, "project": None,
                 "approvals": [GOOD, {**GOOD, "id": "apr_1", "permission": "*"}]}).encode(),
     "approval 2: bad permission"),
    (json.dumps({"version": 1, "project": None,
                 "approvals": [{**GOOD, "expire": 3}]}).encode(), "approval 1: unknown field"),
    (json.dumps({"version": 1, "project": None, "approvals": [GOOD, GOOD]}).encode(),
     "duplicate id"),
    (json.dumps({"version": 1, "project": None,
                 "approvals": [{**GOOD, "created": "yesterday"}]}).encode(), "created must be"),
])
def test_damage_is_reported_and_kept_aside(store, data, problem):
    store.add("bash", "x", agent="build")  # the directory exists
    store.path.write_bytes(data)
    with pytest.raises(ApprovalStoreError, match=problem) as caught:
        store.list()
    message = str(caught.value)
    assert message.startswith(str(store.path))
    [aside] = aside_files(store)
    assert aside.read_bytes() == data  # byte for byte
    assert str(aside) in message
    assert not store.path.exists()
    assert store.list() == []  # the next read: an empty store
    fresh = store.add("bash", "y", agent="build")
    assert store.list() == [fresh]


def test_damage_found_by_a_change_stops_the_change(store):
    store.add("bash", "x", agent="build")
    store.path.write_bytes(b"not json")
    with pytest.raises(ApprovalStoreError, match="moved aside"):
        store.add("bash", "y", agent="build")
    assert not store.path.exists() and len(aside_files(store)) == 1
    store.path.write_bytes(b"[]")
    with pytest.raises(ApprovalStoreError):
        store.clear()
    assert len(aside_files(store)) == 2  # a second damaged file does not overwrite the first
    assert sorted(p.read_bytes() for p in aside_files(store)) == [b"[]", b"not json"]


# --------------------------------------------------------------------------- durations


@pytest.mark.parametrize("text, seconds", [
    ("45s", 45), ("30m", 1800), ("8h", 28800), ("2d", 172800), ("1w", 604800),
    ("1h30m", 5400), (" 8H ", 28800),
])
def test_parse_duration(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "8", "h", "8x", "1.5h", "-1h", "8h 30m", "0m", "forever",
                                  "99999w"])
def test_parse_duration_refuses(text):
    with pytest.raises(ValueError, match="bad duration"):
        parse_duration(text)


# --------------------------------------------------------------------------- concurrency


ADDER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from dm_cc.session.approvals import ApprovalStore

    store = ApprovalStore(Path(sys.argv[1]))
    for number in range(100):
        store.add("bash", f"echo {sys.argv[2]}-{number}", agent="build")
""")


def test_two_processes_adding_at_once_lose_nothing(store):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    workers = [subprocess.Popen([sys.executable, "-c", ADDER, str(store.path), name], env=env,
                                stderr=subprocess.PIPE, text=True)
               for name in ("a", "b")]
    for worker in workers:
        _, err = worker.communicate(timeout=120)
        assert worker.returncode == 0, err
    patterns = {approval.pattern for approval in store.list()}
    assert patterns == {f"echo {name}-{n}" for name in "ab" for n in range(100)}
    assert len({approval.id for approval in store.list()}) == 200


# --------------------------------------------------------------------------- model check


OPERATIONS = st.lists(st.one_of(
    st.tuples(st.just("add"), st.sampled_from(["bash", "read"]), st.sampled_from(["a", "b *"]),
              st.sampled_from(["build", "plan"])),
    st.tuples(st.just("revoke"), st.integers(0, 5)),
    st.tuples(st.just("clear")),
), max_size=12)


@settings(max_examples=40, deadline=None)
@given(OPERATIONS)
def test_the_store_behaves_like_a_dict(operations):
    with tempfile.TemporaryDirectory() as directory:
        store = ApprovalStore(Path(directory) / "approvals.json")
        model: dict[str, tuple[str, str, str]] = {}
        for operation in operations:
            if operation[0] == "add":
                _, permission, pattern, agent = operation
                saved = store.add(permission, pattern, agent=agent, now=NOW)
                known = [i for i, key in model.items() if key == (permission, pattern, agent)]
                assert known in ([], [saved.id])
                model[saved.id] = (permission, pattern, agent)
            elif operation[0] == "revoke":
                ids = sorted(model)
                if operation[1] < len(ids):
                    assert store.revoke(ids[operation[1]]).id == ids[operation[1]]
                    del model[ids[operation[1]]]
                else:
                    with pytest.raises(ApprovalStoreError):
                        store.revoke("apr_0")
            else:
                assert store.clear(now=NOW) == len(model)
                model.clear()
            assert {a.id: (a.permission, a.pattern, a.agent) for a in store.list(now=NOW)} == model


def test_trusted_mcp_servers_are_entries_of_the_project_never_rules(store):
    store.add("bash", "ls *", agent="build", now=NOW)
    first = store.trust_server("time", "sha256:aa", note="trusted", now=NOW)
    assert store.trust_server("time", "sha256:aa", now=NOW) == first  # already trusted
    store.trust_server("docs", "sha256:bb", now=NOW)
    assert store.trusted_servers(NOW) == {"time": "sha256:aa", "docs": "sha256:bb"}
    store.trust_server("time", "sha256:cc", now=NOW)  # a changed definition replaces it
    assert store.trusted_servers(NOW) == {"time": "sha256:cc", "docs": "sha256:bb"}
    assert [r.permission for r in store.rules_for("build", NOW)] == ["bash"]
    assert store.rules_for("*", NOW) == ()
    assert store.untrust_server("time", NOW) and not store.untrust_server("time", NOW)
    assert store.trusted_servers(NOW) == {"docs": "sha256:bb"}
    shown = [(a.permission, a.agent, a.pattern) for a in store.list(NOW)]
    assert shown == [("bash", "build", "ls *"), ("mcp_server", "*", "docs sha256:bb")]


def test_a_file_the_person_changed_keeps_what_they_said_of_it_and_nothing_more(store):
    store.trust_files({".dm_cc/policy.yaml": "sha256:a1", ".dm_cc/config.yaml": "sha256:c1"},
                      now=NOW)
    store.asked_about_files({".dm_cc/policy.yaml": "sha256:a1",
                             ".dm_cc/agents/x.md": "sha256:x1"}, now=NOW)
    assert store.carry_file(".dm_cc/policy.yaml", "sha256:a1", "sha256:a2", now=NOW) == "trusted"
    assert store.trusted_files(NOW) == {".dm_cc/policy.yaml": "sha256:a2",
                                        ".dm_cc/config.yaml": "sha256:c1"}   # the others kept
    assert store.carry_file(".dm_cc/agents/x.md", "sha256:x1", "sha256:x2", now=NOW) == "declined"
    assert store.asked_files(NOW)[".dm_cc/agents/x.md"] == "sha256:x2"
    # someone else changed it since: what the person said was of other content
    assert store.carry_file(".dm_cc/config.yaml", "sha256:zz", "sha256:c2", now=NOW) is None
    assert store.trusted_files(NOW)[".dm_cc/config.yaml"] == "sha256:c1"
    # a file the person makes is theirs
    assert store.carry_file(".dm_cc/policies/new.yaml", None, "sha256:n1", now=NOW) == "trusted"
    assert store.trusted_files(NOW)[".dm_cc/policies/new.yaml"] == "sha256:n1"
