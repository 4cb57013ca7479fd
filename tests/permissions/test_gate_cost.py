"""Bounded cost (issue 22): a line built to multiply what the analysis keeps -- `cd`
chains that lengthen every later path, CDPATH entries times `cd`s, links and planted
directories every later path is checked against -- is capped by count, not by time:
past a cap the line asks (or the paths become unknown targets), never allows.
Timings are in benchmarks/bench_gate.py; these tests assert counts only."""

from __future__ import annotations

from dm_cc.permissions.shell import analyse
from dm_cc.permissions.shell.judge import MAX_CDPATH, MAX_CWD, MAX_LINKS, MAX_REFERENCES, Judge


def test_a_cd_chain_does_not_lengthen_paths_without_bound():
    found = analyse("cd a; " * 3_000 + "cat f")
    assert all(len(f.path) <= MAX_CWD + 10 for f in found.files)
    assert any(f.dynamic for f in found.files)  # where the chain led is unknown


def test_the_paths_named_are_bounded_by_the_line():
    line = "cd a; cat f g h; " * 500
    found = analyse(line)
    assert sum(len(f.path) for f in found.files) <= 2 * len(line) + 8_192
    assert any(c.dynamic and c.note and "too many to judge" in c.note for c in found.commands)


def test_cdpath_entries_are_kept_apart_up_to_a_cap():
    cdpath = "CDPATH=" + ":".join(f"/{i}" for i in range(MAX_CDPATH + 5))
    found = analyse(f"{cdpath}; cd x; cat f")
    assert len(found.files) <= 3  # f, x/f and one unknown place, not one per entry
    assert any(f.dynamic for f in found.files)


def test_links_past_the_cap_make_every_later_path_unknown():
    judge = Judge(0)
    judge.run("".join(f"ln -s x l{i}; " for i in range(MAX_LINKS + 1)) + "cat README.md")
    assert len(judge.links) <= MAX_LINKS
    assert judge.planted == ["."]
    assert all(f.dynamic for f in judge.result().files if f.path == "README.md")


def test_planted_directories_past_the_cap_make_every_later_path_unknown():
    judge = Judge(0)
    judge.run("".join(f"tar xf a -C d{i}; " for i in range(MAX_LINKS + 1)) + "cat README.md")
    assert judge.planted == ["."]


def test_requests_per_call_stay_under_the_cap():
    found = analyse("cat " + " ".join(f"f{i}" for i in range(MAX_REFERENCES * 2)))
    assert len(found.files) <= MAX_REFERENCES
    assert len(found.commands) <= MAX_REFERENCES + 1
