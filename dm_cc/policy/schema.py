"""The policy file format, as pydantic models (also the source of ``dm_cc policy schema``).

```yaml
rules:                       # ordered; the last matching rule wins
  - {permission: bash, pattern: "git *", action: allow}
permission:                  # opencode-style shorthand, order kept, added before rules:
  bash: {"*": ask, "git status": allow}
  webfetch: deny
agents:                      # appended after the agent's own rules
  plan: {rules: [{permission: edit, pattern: "docs/**/*.md", action: allow}]}
tests:                       # checked by `dm_cc policy test`
  - {tool: bash, input: "git status && rm -rf /", expect: deny}
hooks:                       # commands that see a matching request (not in a project's files)
  - {permission: bash, pattern: "git push *", command: [/usr/local/bin/check-push], timeout: 5}
```
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

ActionName = Literal["allow", "deny", "ask"]

class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class RuleSpec(_Strict):
    """One rule: the last rule whose permission and pattern match decides."""

    permission: str = Field(min_length=1, description="Permission name or wildcard: bash, edit, mcp__git__*, *")
    pattern: str = Field(min_length=1, description="Path glob, shell-command wildcard or name wildcard")
    action: ActionName
    reason: str | None = Field(default=None, description="Shown to the user and the model")


Shorthand = dict[str, ActionName | dict[str, ActionName]]


class AgentOverride(_Strict):
    rules: list[RuleSpec] = Field(default_factory=list)
    permission: Shorthand = Field(default_factory=dict)


class InlineTestSpec(_Strict):
    """A check that the effective policy decides a tool call as expected."""

    tool: str = Field(min_length=1, description="Tool name (read, write, bash …) or mcp__server__tool")
    input: str = Field(description="The tool's main input: a path, a command, a URL, a name")
    expect: ActionName
    agent: str | None = Field(default=None, description="Agent to check under (default: build)")
    name: str | None = None


class HookSpec(_Strict):
    """An external command that sees a matching request before it is decided
    (docs/hooks.md). Only the user's own, ``--policy`` and managed files may name one."""

    permission: str = Field(min_length=1, description="Permission name or wildcard, as in rules")
    pattern: str = Field(default="*", min_length=1,
                         description="In the permission's pattern language, as in rules")
    command: list[str] = Field(min_length=1, description="The program and its arguments (no shell)")
    timeout: float = Field(default=5, gt=0, le=60, description="Seconds before it is killed")


class PolicyFileModel(_Strict):
    """A dm_cc policy file."""

    model_config = ConfigDict(extra="forbid", strict=True, title="dm_cc policy")

    version: Literal[1] = 1
    permission: Shorthand = Field(default_factory=dict)
    rules: list[RuleSpec] = Field(default_factory=list)
    agents: dict[str, AgentOverride] = Field(default_factory=dict)
    tests: list[InlineTestSpec] = Field(default_factory=list)
    hooks: list[HookSpec] = Field(default_factory=list)


def policy_json_schema() -> dict:
    schema = PolicyFileModel.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema


# --------------------------------------------------------------------------- fast validation
#
# Building pydantic models costs ~40 ms at every start (schema generation in
# Python), more than everything else `dm_cc policy check` does. So the models
# above stay the single definition of the format (and of `dm_cc policy schema`),
# and at run time files are validated by pydantic-core directly, with a core
# schema derived from these models once and stored in `validator_schema.py`.
# tests/policy/test_schema.py fails if the stored schema drifts from the models;
# `python -m dm_cc.policy.schema` rewrites it.

_DROP = {"metadata", "ref", "cls", "config", "custom_init", "root_model", "computed_fields",
         "post_init", "serialization", "model_name"}


_STRICTABLE = {"str", "int", "bool", "float", "list", "dict"}


def _plain(schema: dict, strict: bool = False) -> dict:
    """A model-free copy of a core schema: models become forbid-extra typed dicts,
    and a strict model's strictness is written onto every scalar and container."""
    kind = schema["type"]
    if kind == "model":
        strict = schema.get("config", {}).get("strict", False)
        fields = {}
        for name, field in schema["schema"]["fields"].items():
            inner = field["schema"]
            required = inner["type"] != "default"
            fields[name] = {"type": "typed-dict-field", "required": required,
                            "schema": _plain(inner if required else inner["schema"], strict)}
        return {"type": "typed-dict", "fields": fields, "extra_behavior": "forbid",
                "strict": strict}
    out: dict[str, Any] = {"strict": True} if strict and kind in _STRICTABLE else {}
    for key, value in schema.items():
        if key in _DROP:
            continue
        if isinstance(value, dict) and "type" in value:
            out[key] = _plain(value, strict)
        elif key == "choices":
            out[key] = [_plain(choice, strict) for choice in value]
        else:
            out[key] = value
    return out


def plain_core_schema() -> dict:
    return _plain(dict(PolicyFileModel.__pydantic_core_schema__))


if __name__ == "__main__":
    import pprint
    from pathlib import Path

    target = Path(__file__).with_name("validator_schema.py")
    target.write_text(
        '"""Generated by `python -m dm_cc.policy.schema` from the models in schema.py."""\n\n'
        f"POLICY_CORE_SCHEMA = {pprint.pformat(plain_core_schema(), width=100, sort_dicts=True)}\n"
    )
    print(f"wrote {target}")
