"""The public attack corpus (../shared/corpus/attacks-public.yaml), case by case.

Each case is judged twice: by the engine directly (its rules after the default
ask) and end to end through `dm_cc policy check --policy FILE --json`, in a
temporary project with a temporary HOME, where every built-in layer applies too.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml
from judging import assert_meets, meets

from dm_cc.cli import main
from dm_cc.config.dirs import HostFilesystem
from dm_cc.permissions import Rule
from dm_cc.permissions.paths import PathContextDirs

HERE = Path(__file__).resolve()
SHARED = HERE.parents[2].parent / "shared" / "corpus" / "attacks-public.yaml"
VENDORED = HERE.parents[1] / "data" / "attacks-public.yaml"
CORPUS_FILE = SHARED if SHARED.is_file() else VENDORED
CASES = yaml.safe_load(CORPUS_FILE.read_text(encoding="utf-8"))


def _case_id(case: dict) -> str:
    return f"{case['tool']}:{case['input'][:50]}"


def _build(case: dict, tmp_path: Path) -> tuple[Path, Path]:
    project, home, outside = tmp_path / "project", tmp_path / "home", tmp_path / "outside"
    for directory in (project / ".git", home, outside):
        directory.mkdir(parents=True)

    def place(text: str) -> Path:
        text = text.replace("{HOME}", str(home)).replace("{OUTSIDE}", str(outside))
        return Path(text) if os.path.isabs(text) else project / text

    setup = case.get("setup") or {}
    for name in setup.get("files", []):
        path = place(name)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("secret\n")
    for link, target in (setup.get("symlinks") or {}).items():
        path = place(link)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.symlink_to(place(target))
    return project, home


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_engine_withstands(case, tmp_path):
    project, home = _build(case, tmp_path)
    rules = [Rule(r["permission"], r["pattern"], r["action"], source=f"case:{i}")
             for i, r in enumerate(case["rules"])]
    where = PathContextDirs(root=project, cwd=project, home=home, fs=HostFilesystem())
    assert_meets(rules, case["tool"], case["input"], case["expect"], where)


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_cli_withstands(case, tmp_path, monkeypatch, capsys):
    project, home = _build(case, tmp_path)
    policy = tmp_path / "case-policy.yaml"
    policy.write_text(yaml.safe_dump({"rules": case["rules"]}))
    monkeypatch.chdir(project)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("DM_CC_HOME", str(tmp_path / "dmhome"))
    monkeypatch.setenv("DM_CC_MANAGED_DIR", str(tmp_path / "managed"))
    code = main(["policy", "check", "--json", "--policy", str(policy), case["tool"], case["input"]])
    out = capsys.readouterr().out
    assert code == 0
    result = json.loads(out)
    assert meets(result["decision"], case["expect"]), result
