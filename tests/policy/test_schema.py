"""The runtime validator is derived from the pydantic models and must not drift."""

from __future__ import annotations

import pytest
from pydantic import ValidationError
from pydantic_core import SchemaValidator
from pydantic_core import ValidationError as CoreValidationError

from dm_cc.policy.schema import PolicyFileModel, plain_core_schema, policy_json_schema
from dm_cc.policy.validator_schema import POLICY_CORE_SCHEMA


def test_stored_core_schema_matches_the_models():
    assert plain_core_schema() == POLICY_CORE_SCHEMA, (
        "dm_cc/policy/validator_schema.py is stale: run `python -m dm_cc.policy.schema`")


RULE = {"permission": "bash", "pattern": "git *", "action": "allow"}

CASES = [
    {},
    {"rules": [RULE]},
    {"rules": [{**RULE, "reason": "why"}]},
    {"rules": [{**RULE, "reason": None}]},
    {"permission": {"bash": {"*": "ask", "git *": "allow"}, "edit": "deny"}},
    {"agents": {"plan": {"rules": [RULE]}}},
    {"tests": [{"tool": "bash", "input": "ls", "expect": "allow", "agent": "plan"}]},
    {"version": 1},
    {"version": 2},
    {"rules": {}},
    {"rules": [{**RULE, "action": "allw"}]},
    {"rules": [{**RULE, "pattern": 123}]},
    {"rules": [{**RULE, "pattern": b"x"}]},
    {"rules": [{**RULE, "pattern": ""}]},
    {"rules": [{"permission": "bash", "action": "allow"}]},
    {"rules": [{**RULE, "colour": "red"}]},
    {"rulez": []},
    {"permission": {"bash": {"*": "maybe"}}},
    {"permission": {"bash": ["ask"]}},
    {"agents": {"plan": {"rules": [RULE], "extra": 1}}},
    {"agents": {"plan": []}},
    {"tests": [{"tool": "bash", "input": "ls"}]},
    {"tests": [{"tool": "bash", "input": 1, "expect": "allow"}]},
    {"tests": [{"tool": "bash", "input": "ls", "expect": "allow", "when": "now"}]},
]


@pytest.mark.parametrize("data", CASES)
def test_runtime_validator_agrees_with_the_models(data):
    try:
        PolicyFileModel.model_validate(data)
        model_errors = None
    except ValidationError as exc:
        model_errors = sorted(tuple(map(str, e["loc"])) for e in exc.errors())
    try:
        SchemaValidator(POLICY_CORE_SCHEMA).validate_python(data)
        core_errors = None
    except CoreValidationError as exc:
        core_errors = sorted(tuple(map(str, e["loc"])) for e in exc.errors())
    assert (model_errors is None) == (core_errors is None)
    if model_errors is not None:
        assert model_errors[0][:2] == core_errors[0][:2]


def test_json_schema_describes_the_file():
    schema = policy_json_schema()
    assert set(schema["properties"]) >= {"rules", "agents", "tests", "permission"}
    assert schema["additionalProperties"] is False


def test_the_policy_file_reference_is_generated_from_the_models():
    from pathlib import Path

    from dm_cc.policy.schema import reference_markdown

    page = Path(__file__).parents[2] / "docs" / "policy-file.md"
    assert page.read_text() == reference_markdown(), (
        "docs/policy-file.md is stale: run `python -m dm_cc.policy.schema`")
