"""Saved approvals at scale (issue 26): a store of 10,000 reads, changes and lists in
linear time, writes the same bytes json would, is not parsed twice for the same
content, and a gate holding the approvals decides a command they do not name
without scanning them -- exactly as a plain last-match scan decides.

Every large store is built in process (written as JSON), never by 10,000 CLI calls.
Speed itself is measured by ``benchmarks/bench_approvals.py``; the complexity checks
here compare inputs 10x or 100x apart with generous factors.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dm_cc.core import Approvals
from dm_cc.errors import ApprovalStoreError
from dm_cc.permissions import Gate, Layer, Request, Rule, Ruleset
from dm_cc.permissions.rules import STRICTNESS
from dm_cc.session.approvals import ApprovalStore, SavedApproval, _encode, _parse

NOW = 1_780_000_000.0


def entry(number: int, pattern: str | None = None, permission: str = "bash",
          agent: str = "build") -> dict[str, object]:
    return SavedApproval(f"apr_{number:012x}", permission, pattern or f"npm run task{number} *",
                         agent, NOW + number, None, "approved for bash").to_json()


def write_store(path: Path, entries: list[dict[str, object]]) -> ApprovalStore:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"version": 1, "project": None, "approvals": entries}, indent=2),
                    encoding="utf-8")
    return ApprovalStore(path)


def fastest(action, rounds: int = 5) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        action()
        best = min(best, time.perf_counter() - start)
    return best


# --------------------------------------------------------------------------- reading and changing


def test_a_store_of_ten_thousand_lists_adds_revokes_and_gives_rules(tmp_path):
    store = write_store(tmp_path / "a.json", [entry(n) for n in range(10_000)])
    assert len(store.list(now=NOW)) == 10_000
    added = store.add("bash", "git push *", agent="build", now=NOW)
    again = ApprovalStore(store.path)  # another process: reads the file afresh
    listed = again.list(now=NOW)
    assert len(listed) == 10_001 and listed[-1] == added and listed[0].id == f"apr_{0:012x}"
    assert store.add("bash", "git push *", agent="build", now=NOW) == added  # already there
    rules = again.rules_for("build", now=NOW)
    assert len(rules) == 10_001 and rules[-1].pattern == "git push *"
    assert again.revoke(added.id, now=NOW) == added
    assert len(store.list(now=NOW)) == 10_000


def test_reading_ten_thousand_costs_a_few_times_what_json_takes_to_load_them(tmp_path):
    """Each approval was compared with every earlier one (the duplicate check): 10,000
    took over 100x json.loads of the file. Now a few times (a reference from the same
    run: a busy machine slows both; a small store would be no yardstick, as json.loads
    itself takes 30x as long for 10x the entries here, out of the CPU's caches)."""
    large = [entry(n) for n in range(10_000)]
    data = json.dumps({"version": 1, "project": None, "approvals": large}).encode()
    ratio = fastest(lambda: _parse(data)) / fastest(lambda: json.loads(data))
    assert ratio < 25, f"reading took {ratio:.0f}x json.loads of the same file"


def test_a_duplicate_id_far_down_a_large_store_is_damage_and_kept(tmp_path):
    entries = [entry(n) for n in range(10_000)]
    entries.append(dict(entries[17], pattern="something else *"))
    store = write_store(tmp_path / "a.json", entries)
    data = store.path.read_bytes()
    with pytest.raises(ApprovalStoreError, match=f"approval 10001: duplicate id apr_{17:012x}"):
        store.list(now=NOW)
    [aside] = tmp_path.glob("a.json.corrupt-*")
    assert aside.read_bytes() == data  # kept, byte for byte; never emptied
    assert store.list(now=NOW) == []


@pytest.mark.parametrize("bad, problem", [
    ({"created": "yesterday"}, "created must be"),
    ({"created": True}, "created must be"),
    ({"expires": float("nan")}, "expires must be"),
    ({"id": "apr_xyz"}, "bad id"),
    ({"permission": "ba*"}, "bad permission"),
    ({"pattern": ""}, "pattern must not be empty"),
    ({"note": 3}, "note must be a string"),
])
def test_a_bad_last_entry_of_a_large_store_is_damage(tmp_path, bad, problem):
    entries = [entry(n) for n in range(2_000)]
    entries[-1] = {**entries[-1], **bad}
    store = write_store(tmp_path / "a.json", entries)
    with pytest.raises(ApprovalStoreError, match=f"approval 2000: {problem}"):
        store.list(now=NOW)
    assert len(list(tmp_path.glob("a.json.corrupt-*"))) == 1


def test_a_number_too_large_for_a_float_is_damage_not_a_crash(tmp_path):
    """``"created": 1000…0`` (400 digits, by hand) made math.isfinite raise OverflowError,
    which escaped the damage check."""
    path = tmp_path / "a.json"
    text = json.dumps({"version": 1, "project": None, "approvals": [entry(1)]})
    path.write_text(text.replace(str(NOW + 1), "1" + "0" * 400), encoding="utf-8")
    with pytest.raises(ApprovalStoreError, match="approval 1: created must be"):
        ApprovalStore(path).list(now=NOW)


# --------------------------------------------------------------------------- the bytes written

texts = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=12)
seconds = st.one_of(st.floats(min_value=0, max_value=1e12, allow_nan=False),
                    st.integers(min_value=0, max_value=10**12))
approvals = st.lists(st.builds(
    SavedApproval, id=st.integers(0, 2**40).map(lambda n: f"apr_{n:x}"),
    permission=texts.filter(lambda t: "*" not in t and "?" not in t), pattern=texts,
    agent=texts, created=seconds, expires=st.none() | seconds, note=st.text(max_size=12)),
    max_size=4, unique_by=lambda a: a.id)


@settings(max_examples=100, deadline=None)
@given(approvals, st.none() | st.text(max_size=8))
def test_the_file_is_exactly_what_json_dumps_writes(saved, project):
    document = {"version": 1, "project": project, "approvals": [a.to_json() for a in saved]}
    expected = (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    assert _encode(project, saved) == expected
    assert _parse(expected) == (project, saved)
    assert SavedApproval.json_list(saved) == json.dumps([a.to_json() for a in saved],
                                                        indent=2, ensure_ascii=False)


def test_a_lone_surrogate_is_written_escaped_and_read_back(tmp_path):
    odd = SavedApproval("apr_1", "edit", "src/\udcff.py", "build", NOW)
    data = _encode("/p", [odd])
    assert b"\\udcff" in data and _parse(data) == ("/p", [odd])


# --------------------------------------------------------------------------- read once per content


def test_the_same_content_is_parsed_once_and_a_change_of_it_always_seen(tmp_path, monkeypatch):
    store = write_store(tmp_path / "a.json", [entry(1, "npm run aaaa *"), entry(2)])
    parsed: list[int] = []
    real = _parse

    def counting(data: bytes):
        parsed.append(len(data))
        return real(data)

    monkeypatch.setattr("dm_cc.session.approvals._parse", counting)
    store.list(now=NOW), store.rules_for("build", now=NOW), store.trusted_files(now=NOW)
    assert len(parsed) == 1
    # another process changes it to content of the very same size, at once
    other = ApprovalStore(store.path)
    other.revoke(f"apr_{1:012x}", now=NOW)
    replaced = other.add("bash", "npm run bbbb *", agent="build", now=NOW)
    assert replaced.id != f"apr_{1:012x}"
    assert [a.pattern for a in store.list(now=NOW)] == ["npm run task2 *", "npm run bbbb *"]
    mine = store.add("bash", "git log *", agent="build", now=NOW)
    count = len(parsed)
    assert store.list(now=NOW)[-1] == mine and len(parsed) == count  # what it wrote: known


def test_a_list_handed_out_cannot_change_what_the_store_remembers(tmp_path):
    store = write_store(tmp_path / "a.json", [entry(1), entry(2)])
    first = store.list(now=NOW)
    first.clear()
    assert len(store.list(now=NOW)) == 2


# --------------------------------------------------------------------------- where the gate looks


def test_approvals_in_force_are_the_same_tuple_until_they_change(tmp_path):
    store = write_store(tmp_path / "a.json", [entry(n) for n in range(3)])
    answers = Approvals(store)
    first = answers.rules("build")
    assert answers.rules("build") is first and len(first) == 3
    session_rule = Rule("bash", "make *", "allow", source="approval:session")
    answers.remember("build", [session_rule], save=False, note="")
    second = answers.rules("build")
    assert second[-1] == session_rule and len(second) == 4
    # `/permissions revoke s1` removes a session approval in place: gone at once
    answers.session["build"].remove(session_rule)
    assert answers.rules("build") == first
    answers.remember("build", [Rule("bash", "ls *", "allow")], save=True, note="n")
    assert [r.pattern for r in answers.rules("build")][-1] == "ls *"


def _gate(configured: list[Rule], saved: tuple[Rule, ...], enforced: list[Rule]) -> Gate:
    return Gate([Layer("project", tuple(configured)),
                 Layer("approvals", saved, approvals=True),
                 Layer("enforced", tuple(enforced), binding=True)])


def _last_match(layers: list[Layer], request: Request) -> tuple[Layer, Rule] | None:
    """The reference: every rule of every layer, last to first, matched one by one."""
    for layer in reversed(layers):
        for index, hits in reversed(Ruleset(layer.rules).considered(request)):
            if request.pattern in hits:
                return layer, layer.rules[index]
    return None


def _reference(gate: Gate, request: Request) -> tuple[str, Rule | None]:
    """Last match wins; an approval only turns an ask into an allow: where the rules
    without the approvals do not ask, or a binding layer decided, they stand."""
    layers = list(gate.layers)
    hit = _last_match(layers, request)
    if hit is not None and hit[0].approvals and hit[1].action != "deny":
        configured = _last_match([layer for layer in layers if not layer.approvals], request)
        if configured is None:
            return hit[1].action, hit[1]
        if configured[1].action != "ask" or configured[0].binding:
            return configured[1].action, configured[1]
    return (hit[1].action, hit[1]) if hit is not None else ("ask", None)


words = st.sampled_from(["git", "npm", "run", "push", "test", "ls", "x", "*"])
patterns = st.lists(words, min_size=1, max_size=3).map(" ".join)
rules = st.builds(Rule, st.just("bash"), patterns, st.sampled_from(["allow", "ask", "deny"]))
saved_rules = st.lists(patterns, max_size=12).map(
    lambda found: tuple(Rule("bash", p, "allow", source=f"approval:{i}")
                        for i, p in enumerate(found)))
commands = st.lists(words.filter(lambda w: w != "*"), min_size=1, max_size=3).map(" ".join)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(rules, max_size=6), saved_rules, st.lists(rules, max_size=2),
       st.lists(commands, min_size=1, max_size=4))
def test_the_indexed_gate_decides_as_a_plain_scan_of_every_rule(configured, saved, enforced,
                                                                  commands):
    gate = _gate(configured, saved, enforced)
    for command in commands:
        request = Request("bash", command, words=tuple(command.split()))
        verdict = gate.judge(request)
        action, rule = _reference(gate, request)
        assert verdict.action == action, (command, verdict)
        if rule is not None:
            assert verdict.rule == rule
        # an approval never beats a configured deny
        denied = _last_match([layer for layer in gate.layers if not layer.approvals], request)
        if denied is not None and denied[1].action == "deny":
            assert STRICTNESS[verdict.action] >= STRICTNESS["deny"]


def test_a_lookup_does_not_scan_the_approvals_of_other_commands(tmp_path):
    """`git push` against 100 or 10,000 saved `npm run taskN *` approvals: the same time
    per lookup (a scan of them would take 100x as long; allowed: 10x, for noise)."""
    def lookups(count: int):
        store = write_store(tmp_path / f"{count}.json", [entry(n) for n in range(count)])
        answers = Approvals(store)
        gate = _gate([Rule("bash", "git push *", "ask")], answers.rules("build"), [])
        request = Request("bash", "git push origin", words=("git", "push", "origin"))
        approved = Request("bash", f"npm run task{count - 1} x",
                           words=("npm", "run", f"task{count - 1}", "x"))
        assert gate.judge(request).action == "ask"
        assert gate.judge(approved).action == "allow"

        def run() -> None:
            for _ in range(300):
                answers.rules("build")
                gate.judge(request)
        return run

    small, large = lookups(100), lookups(10_000)
    ratio = fastest(large) / fastest(small)
    assert ratio < 10, f"100x the approvals made a lookup {ratio:.1f}x slower"


# --------------------------------------------------------------------------- the command line


def test_listing_loads_no_engine_and_finds_the_store_the_world_uses(project, tmp_path):
    """`dm_cc approvals list --json` reads the file and prints it: no policy, agent,
    tool or engine is loaded (it was most of the command's time)."""
    from dm_cc.compose import open_world

    world = open_world(cwd=project)
    world.approvals.add("bash", "npm test *", agent="build", now=NOW)
    script = ("import sys, io\nfrom dm_cc.cli import main\n"
              "code = main(['approvals', 'list', '--json'])\n"
              "heavy = sorted(m for m in sys.modules if m.startswith(('dm_cc.permissions', "
              "'dm_cc.compose', 'dm_cc.policy', 'dm_cc.agents', 'dm_cc.tools')))\n"
              "print('HEAVY', heavy, file=sys.stderr)\nsys.exit(code)\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=project, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [a.to_json() for a in world.approvals.list(now=NOW)]
    assert "HEAVY []" in done.stderr


def test_an_unknown_id_among_thousands_is_said_in_a_line(tmp_path):
    store = write_store(tmp_path / "a.json", [entry(n) for n in range(5_000)])
    with pytest.raises(ApprovalStoreError) as caught:
        store.revoke("apr_feed", now=NOW)
    message = str(caught.value)
    assert len(message) < 300 + len(str(store.path)), message
    assert "no saved approval 'apr_feed' (there are 5,000, the newest " in message
    assert f"apr_{4999:012x}" in message and "`dm_cc approvals list` shows them all" in message
    assert len(store.list(now=NOW)) == 5_000  # nothing changed
