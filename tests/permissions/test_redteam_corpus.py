"""The red team's 631 attack variants (redteam_cases.py), judged like the public
corpus. Cases listed in KNOWN_GAPS (by case id, see :func:`case_id`) still fail
their (sometimes strict) expectation; they are strict expected failures, so a gap
that closes fails until it is taken off the list, and every other case must pass."""

from __future__ import annotations

import hashlib
import importlib.util
import os
from pathlib import Path

import pytest
from judging import assert_meets

from dm_cc.config.dirs import HostFilesystem
from dm_cc.permissions import Rule
from dm_cc.permissions.paths import PathContextDirs

_SPEC = importlib.util.spec_from_file_location(
    "redteam_cases", Path(__file__).with_name("redteam_cases.py"))
_CASES_MODULE = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(_CASES_MODULE)
BASE, CASES = _CASES_MODULE.BASE, _CASES_MODULE.CASES

KNOWN_GAPS = frozenset({
    "symlink-2d3600c7",  # 'grep -R BEGIN .' -> not-allow
    "dotenv-dir-d9795c31",  # 'grep -r KEY config' -> not-allow
    "dotenv-dir-d1f66cc5",  # 'tar -cf - config' -> not-allow
    # ^ stay (with symlink-2d3600c7): a recursive read of a directory reaches the denied
    #   files inside it, which only the file system knows; the sandbox (issue 11) hides
    #   what read rules deny, which is where this is held.
})


def _build(setup, tmp: Path):
    project, home, outside = tmp / "project", tmp / "home", tmp / "outside"
    for directory in (project / ".git", home, outside):
        directory.mkdir(parents=True, exist_ok=True)

    def sub(text: str) -> str:
        return (text.replace("{HOME}", str(home)).replace("{OUTSIDE}", str(outside))
                .replace("{PROJECT}", str(project)))

    def place(text: str) -> Path:
        text = sub(text)
        return Path(text) if os.path.isabs(text) else project / text

    for spec in (BASE, setup or {}):
        for name in spec.get("files", []):
            path = place(name)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("secret\n")
        for link, target in (spec.get("symlinks") or {}).items():
            path = place(link)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.symlink_to(place(target))
        for link, target in (spec.get("raw_symlinks") or {}).items():
            path = place(link)
            path.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(target, path)
    return project, home, sub


def case_id(case) -> str:
    """A stable id: the category and a digest of everything that defines the case, so
    adding, removing or reordering cases never moves another case's id."""
    rules, tool, text, expect, setup, category = case
    digest = hashlib.sha256(repr((rules, tool, text, expect, setup)).encode()).hexdigest()
    return f"{category}-{digest[:8]}"


def _params():
    ids = [case_id(case) for case in CASES]
    assert len(set(ids)) == len(ids), "two red-team cases are identical"
    assert set(ids) >= KNOWN_GAPS, f"known gaps that are not cases: {KNOWN_GAPS - set(ids)}"
    for case, case_key in zip(CASES, ids, strict=True):
        # strict: a known gap that starts passing fails, so the list is kept honest.
        marks = [pytest.mark.xfail(reason="known gap", strict=True)] \
            if case_key in KNOWN_GAPS else []
        yield pytest.param(case, id=case_key, marks=marks)


@pytest.mark.parametrize("case", list(_params()))
def test_redteam_case(case, tmp_path):
    rules, tool, text, expect, setup, _category = case
    project, home, sub = _build(setup, tmp_path)
    rules = [Rule(p, pattern, action, source=f"case:{i}") for i, (p, pattern, action) in enumerate(rules)]
    where = PathContextDirs(root=project, cwd=project, home=home, fs=HostFilesystem())
    assert_meets(rules, tool, sub(text), expect, where)
