"""The policy file format, as pydantic models (also the source of ``dm_cc policy schema``).

```yaml
rules:                       # ordered; the last matching rule wins
  - {permission: bash, pattern: "git *", action: allow}
permission:                  # opencode-style shorthand, order kept, added before rules:
  bash: {"*": ask, "git status": allow}
  webfetch: deny
agents:                      # appended after the agent's own rules
  general: {rules: [{permission: bash, pattern: "git push *", action: deny}]}
tests:                       # checked by `dm_cc policy test`
  - {tool: bash, input: "git status && rm -rf /", expect: deny}
hooks:                       # commands that see a matching request (not in a project's files)
  - {permission: bash, pattern: "git push *", command: [/usr/local/bin/check-push], timeout: 5}
auto:                        # the auto layer: lifts asks where commands run as transactions
  rules: [{permission: bash, pattern: "npm *", action: allow}]   # (not in a project's files)
```
"""

from __future__ import annotations

import inspect
from types import UnionType
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field

ActionName = Literal["allow", "deny", "ask"]

class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class RuleSpec(_Strict):
    """One rule: the last rule whose permission and pattern match decides."""

    permission: str = Field(min_length=1, description="Permission name or wildcard: bash, edit, mcp__git__*, *")
    pattern: str = Field(min_length=1, description="Path glob, shell-command wildcard or name wildcard")
    action: ActionName = Field(description="What a request this rule decides gets")
    reason: str | None = Field(default=None, description="Shown to the user and the model")


Shorthand = dict[str, ActionName | dict[str, ActionName]]


class AgentOverride(_Strict):
    """Rules for one agent, appended after the agent's own rules."""

    rules: list[RuleSpec] = Field(default_factory=list, description="Rules, as at the top level")
    permission: Shorthand = Field(default_factory=dict,
                                  description="The opencode-style shorthand, as at the top level")


class AutoRules(_Strict):
    """Rules of the auto layer (docs/policies.md, "Auto mode"): in effect only where
    shell commands run as transactions (their effects judged before they land), for
    every agent; an allow here turns an ask into an allow, never a configured deny
    nor a managed rule, as the person's approvals do. Only for ``bash``, ``edit`` and
    ``delete``; only in the person's own, ``--policy`` and managed files."""

    rules: list[RuleSpec] = Field(default_factory=list, description="Rules, as at the top level")
    permission: Shorthand = Field(default_factory=dict,
                                  description="The opencode-style shorthand, as at the top level")


class InlineTestSpec(_Strict):
    """A check that the effective policy decides a tool call as expected."""

    tool: str = Field(min_length=1, description="Tool name (read, write, bash …) or mcp__server__tool")
    input: str = Field(description="The tool's main input: a path, a command, a URL, a name")
    expect: ActionName = Field(description="The decision the call must get")
    agent: str | None = Field(default=None, description="Agent to check under (default: build)")
    name: str | None = Field(default=None, description="Shown when the test fails")


class HookSpec(_Strict):
    """An external command that sees a matching request before it is decided
    (docs/hooks.md). Only the user's own, ``--policy`` and managed files may name one."""

    permission: str = Field(min_length=1, description="Permission name or wildcard, as in rules")
    pattern: str = Field(default="*", min_length=1,
                         description="In the permission's pattern language, as in rules")
    command: list[str] = Field(min_length=1, description="The program and its arguments (no shell)")
    timeout: float = Field(default=5, gt=0, le=60, description="Seconds before it is killed")


class ProtectedSpec(_Strict):
    """A path that makes code run later, added to the built-in protected paths
    (docs/security.md): every edit of it asks unless a rule of the person's own or
    the managed files names it exactly; read-only in the sandbox."""

    pattern: str = Field(min_length=1, description="Path glob; without / it matches at any depth")
    why: str = Field(default="protected by a policy file",
                     description="Shown with the question")


class SecretStoreSpec(_Strict):
    """A credential file or directory outside any project, added to the built-in
    secret stores (docs/security.md): hidden from every confined command; a tool's
    read of it asks unless a rule of the person's own or the managed files names it
    (or the store) exactly."""

    path: str = Field(min_length=1, description="~/… or an absolute path (a file or a "
                      "directory: all it holds)")
    why: str = Field(default="a secret store named by a policy file",
                     description="Shown with the question")


class PolicyFileModel(_Strict):
    """A dm_cc policy file."""

    model_config = ConfigDict(extra="forbid", strict=True, title="dm_cc policy")

    version: Literal[1] = Field(default=1, description="The format's version: 1")
    permission: Shorthand = Field(
        default_factory=dict, description="Shorthand: permission → action, or → {pattern: "
        "action}; its rules come before `rules:`, in order")
    rules: list[RuleSpec] = Field(default_factory=list,
                                  description="Ordered; the last matching rule wins")
    agents: dict[str, AgentOverride] = Field(
        default_factory=dict, description="Per-agent overrides, by agent name")
    tests: list[InlineTestSpec] = Field(
        default_factory=list, description="Checked at load and by `dm_cc policy test`")
    hooks: list[HookSpec] = Field(
        default_factory=list, description="Commands that see a request before it is decided "
        "(refused in a project's own files)")
    protected: list[ProtectedSpec] = Field(
        default_factory=list, description="Paths added to the protected paths (any file may "
        "add; none can remove)")
    secret_stores: list[SecretStoreSpec] = Field(
        default_factory=list, description="Credential files added to the secret stores "
        "(any file may add; none can remove)")
    auto: AutoRules = Field(
        default_factory=AutoRules, description="Rules of the auto layer: lift asks about "
        "bash, edit and delete where commands run as transactions (not in a project's files)")
    trust_projects: bool | None = Field(
        default=None, description="false: no project's files are ever trusted (their allow "
        "rules never count); only the managed policy and your own files may say it")


def policy_json_schema() -> dict:
    """The JSON Schema of a policy file, for editors: every ``permission`` field offers
    the permissions there are (the tool catalog's and the engine's) as examples."""
    from dm_cc.tools import known_permissions

    schema = PolicyFileModel.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    known = sorted(known_permissions()) + ["mcp__<server>__<tool>", "*"]
    for definition in schema.get("$defs", {}).values():
        field = definition.get("properties", {}).get("permission")
        if field is not None and field.get("type") == "string":
            field["examples"] = known
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


# --------------------------------------------------------------------------- the reference

REFERENCE_HEAD = """# The policy file: reference

Generated from the pydantic models in `dm_cc/policy/schema.py` by `python -m
dm_cc.policy.schema` (a test fails when it is stale); `dm_cc policy schema` prints
the same as JSON Schema, for editors. What the keys mean in practice:
[policy.md](policy.md); decision hooks: [hooks.md](hooks.md); shipped examples:
[policies.md](policies.md). Unknown keys are errors, and every error names
`file:line`.

A policy file is one YAML document (YAML 1.1, what `yaml.safe_load` reads) of any
size: a generated file of 15,000 rules loads. Anchors, aliases (`&name`, `*name`)
and merge keys (`<<: *name`) may be used, but what the copies they stand for add
is bounded, since every copy is validated and walked: at most as many values as
the file writes out itself, or 100,000 in a smaller file. A file beyond that (an
"alias bomb": nine aliases of nine aliases ... of a list), an alias inside the
value its own anchor names, and collections nested more than 100 deep (aliases
counted where they land) are refused, naming the line and column of the alias or
collection that crosses the bound, and dm_cc does not start.
"""


def _type_name(annotation: Any) -> str:
    """A field's type in words: ``list of RuleSpec``, ``allow, deny or ask``."""
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Literal:
        words = [f"`{value}`" for value in args]
        return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]
    if origin in (Union, UnionType):
        kinds = [_type_name(arg) for arg in args if arg is not type(None)]
        return kinds[0] if len(kinds) == 1 else "(either " + "; or ".join(kinds) + ")"
    if origin is list:
        return f"list of {_type_name(args[0])}"
    if origin is dict:
        return f"map of name to {_type_name(args[1])}"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return f"[{annotation.__name__}](#{annotation.__name__.lower()})"
    return {str: "text", float: "number", int: "integer", bool: "true or false"}.get(
        annotation, str(annotation))


def _table(model: type[BaseModel]) -> list[str]:
    lines = ["| key | type | default | meaning |", "| --- | --- | --- | --- |"]
    for name, field in model.model_fields.items():
        if field.is_required():
            default = "required"
        elif field.default_factory is not None:
            default = "empty"
        else:
            default = f"`{field.default!r}`" if field.default is not None else "none"
        lines.append(f"| `{name}` | {_type_name(field.annotation)} | {default} | "
                     f"{field.description or ''} |")
    return lines


def reference_markdown() -> str:
    """docs/policy-file.md: every key of a policy file, from the models."""
    parts = [REFERENCE_HEAD, "## Top level", "", *_table(PolicyFileModel)]
    for model in (RuleSpec, AgentOverride, AutoRules, InlineTestSpec, HookSpec, ProtectedSpec):
        parts += ["", f"## {model.__name__}", "", inspect.cleandoc(model.__doc__ or ""), "",
                  *_table(model)]
    return "\n".join(parts) + "\n"


if __name__ == "__main__":
    import pprint
    from pathlib import Path

    target = Path(__file__).with_name("validator_schema.py")
    target.write_text(
        '"""Generated by `python -m dm_cc.policy.schema` from the models in schema.py."""\n\n'
        f"POLICY_CORE_SCHEMA = {pprint.pformat(plain_core_schema(), width=100, sort_dicts=True)}\n"
    )
    print(f"wrote {target}")
    reference = Path(__file__).parents[2] / "docs" / "policy-file.md"
    reference.write_text(reference_markdown())
    print(f"wrote {reference}")
