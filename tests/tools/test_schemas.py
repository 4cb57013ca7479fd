"""Golden tests: what the model reads about each tool is pinned.

A change to a tool's name, description or parameter schema changes what every
model sees, so it must be deliberate: regenerate with

    DM_CC_UPDATE_GOLDEN=1 pytest tests/tools/test_schemas.py

and review the diff of tests/tools/golden/. Without the variable a mismatch fails.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import pytest

from dm_cc.core.prompts import tool_specs
from dm_cc.tools.base import builtin_tools

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("DM_CC_UPDATE_GOLDEN") == "1"


def as_json(spec) -> str:
    return json.dumps(dataclasses.asdict(spec), indent=2,
                      ensure_ascii=False) + "\n"


def check_golden(text: str, path: Path, update: bool) -> None:
    if update:
        path.write_text(text, encoding="utf-8")
        return
    if not path.exists():
        pytest.fail(f"{path.name} is missing; run with DM_CC_UPDATE_GOLDEN=1 to create it")
    if path.read_text(encoding="utf-8") != text:
        pytest.fail(f"the schema of {path.stem} changed; if that is intended, run with "
                    "DM_CC_UPDATE_GOLDEN=1 and review the diff of tests/tools/golden/")


@pytest.mark.parametrize("spec", tool_specs(builtin_tools()), ids=lambda spec: spec.name)
def test_schema_matches_golden(spec):
    check_golden(as_json(spec), GOLDEN / f"{spec.name}.json", UPDATE)


def test_no_stale_goldens():
    names = {spec.name for spec in tool_specs(builtin_tools())}
    assert {path.stem for path in GOLDEN.glob("*.json")} == names


def test_a_changed_schema_fails_without_the_variable(tmp_path):
    path = tmp_path / "read.json"
    path.write_text("{}\n")
    with pytest.raises(pytest.fail.Exception, match="changed"):
        check_golden('{"other": 1}\n', path, update=False)
    with pytest.raises(pytest.fail.Exception, match="missing"):
        check_golden("{}\n", tmp_path / "absent.json", update=False)
    check_golden('{"other": 1}\n', path, update=True)
    assert path.read_text() == '{"other": 1}\n'
