"""Loading one policy file: YAML → validated model → rules with ``file:line`` sources.

Either the whole file loads or a :class:`PolicyError` names the first bad line;
there is no half-loaded policy.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from dm_cc.config import (
    did_you_mean,
    display_path,
    line_of,
    load_yaml,
    pydantic_core_native,
    validation_error,
)
from dm_cc.errors import PolicyError
from dm_cc.permissions import MCP_PREFIX, Protected, Rule, SecretStore, path_pattern_problem
from dm_cc.policy.hooks import Hook, hooks_from
from dm_cc.tools import check_input_tool, is_known_permission, known_permissions, language_of

if TYPE_CHECKING:
    from pydantic_core import SchemaValidator

    from dm_cc.config import LinePath


@lru_cache(maxsize=1)
def _validator() -> SchemaValidator:
    """The validator of policy files. The format is defined by the pydantic models in
    schema.py; files are validated with the core schema derived from them (see schema.py
    for why). Built at the first file: a command that reads none (``dm_cc approvals
    add`` in a project without policy files) does not import pydantic_core, and a
    command that does imports only its compiled module (:mod:`dm_cc.config.native`)."""
    from dm_cc.policy.validator_schema import POLICY_CORE_SCHEMA

    validator: SchemaValidator = pydantic_core_native().SchemaValidator(POLICY_CORE_SCHEMA)
    return validator


class InlineTest(NamedTuple):
    tool: str
    input: str
    expect: str
    agent: str | None
    name: str | None
    source: str


@dataclass(frozen=True, slots=True)
class PolicyFile:
    """A loaded policy file: its ordered rules, per-agent overrides and inline tests."""

    path: str
    rules: tuple[Rule, ...] = ()
    agents: dict[str, tuple[Rule, ...]] = field(default_factory=dict)
    tests: tuple[InlineTest, ...] = ()
    #: where each ``agents:`` entry is named (``file:line``), for an unknown name's finding
    agent_sources: dict[str, str] = field(default_factory=dict)
    #: ``hooks:``: commands that see matching requests (refused in a project's files)
    hooks: tuple[Hook, ...] = ()
    #: ``protected:``: paths added to the built-in protected paths
    protected: tuple[Protected, ...] = ()
    #: ``auto:``: rules of the auto layer (in effect where commands run as transactions;
    #: refused in a project's files); where the key is written ("" when it is not)
    auto: tuple[Rule, ...] = ()
    auto_source: str = ""
    #: ``trust_projects:`` (False: no project is ever trusted); where it is said
    trust_projects: bool | None = None
    trust_projects_source: str = ""
    #: where the file is (absolute; "" for text not read from a file)
    location: str = ""
    #: ``secret_stores:``: credential paths added to the built-in secret stores
    secret_stores: tuple[SecretStore, ...] = ()


#: What the auto layer's rules may name: what a transaction judges (a command runs
#: confined, its effects checked; what it and the edit tools change, undo covers).
AUTO_PERMISSIONS = ("bash", "edit", "delete")


def unknown_permission(permission: str) -> str | None:
    """Why a rule's permission names nothing dm_cc knows; None when it is fine (a known
    permission, ``mcp__<server>__<tool>``, or a wildcard: ``*``, ``mcp__*``, ``e*``)."""
    if "*" in permission or "?" in permission or is_known_permission(permission):
        return None
    if permission in ("write", "patch"):
        hint = " (the write, edit and patch tools are all the permission 'edit')"
    elif permission.casefold().startswith(MCP_PREFIX[:3]):
        hint = " (an MCP tool's permission is mcp__<server>__<tool>, two underscores each)"
    else:
        hint = did_you_mean(permission, known_permissions())
    return (f"unknown permission {permission!r}{hint}; known: "
            f"{', '.join(sorted(known_permissions()))} and mcp__<server>__<tool>; "
            "a rule naming it would never apply")


@lru_cache(maxsize=512)
def _permission_facts(permission: str) -> tuple[str | None, bool]:
    """Why ``permission`` names nothing (:func:`unknown_permission`), and whether its
    rules' patterns are path globs (a wildcard permission's may be): asked once per
    permission, not once per rule (the tool catalog does not change)."""
    path = any(c in permission for c in "*?") or language_of(permission) == "path"
    return unknown_permission(permission), path


def rules_from(specs: list[dict], shorthand: dict, here: LinePath, shown: str,
               lines: dict[LinePath, int]) -> tuple[Rule, ...]:
    """Rules from a validated ``permission:`` shorthand then ``rules:`` list, with
    ``file:line`` sources; path patterns are compiled now (PolicyError if bad)."""
    rules: list[Rule] = []
    for permission, value in shorthand.items():
        problem = unknown_permission(permission)
        if problem is not None:
            raise PolicyError(shown, line_of(lines, (*here, "permission", permission)), problem)
        patterns = value if isinstance(value, dict) else {"*": value}
        for pattern, action in patterns.items():
            loc = (*here, "permission", permission) + ((pattern,) if isinstance(value, dict) else ())
            line = line_of(lines, loc)
            rules.append(Rule(permission, pattern, action, None, f"{shown}:{line}"))
    for index, spec in enumerate(specs):
        line = line_of(lines, (*here, "rules", index))
        rules.append(Rule(spec["permission"], spec["pattern"], spec["action"], spec.get("reason"),
                          f"{shown}:{line}"))
    for rule in rules:
        _check_rule(rule, shown)
    return tuple(rules)


def _check_rule(rule: Rule, shown: str) -> None:
    """A rule's permission is known and its pattern compiles (PolicyError at its line):
    a bad pattern fails at load, not at use."""
    problem, path = _permission_facts(rule.permission)
    if problem is None and not path:
        return
    line = int(rule.source.rsplit(":", 1)[1])
    if problem is not None:
        raise PolicyError(shown, line, problem)
    problem = path_pattern_problem(rule.pattern)
    if problem is not None:
        raise PolicyError(shown, line, f"bad path pattern {rule.pattern!r}: {problem}")


def parse_policy(text: str, shown: str, directory: Path | None = None) -> PolicyFile:
    """Parse policy text; ``shown`` is the name used in sources and errors;
    ``directory`` the file's, where a hook's relative program is found."""
    data, lines = load_yaml(text, shown, PolicyError)
    if data is None:
        return PolicyFile(shown)
    if not isinstance(data, dict):
        raise PolicyError(shown, lines.get((), 1),
                          "a policy file is a mapping with rules:, agents:, tests:")
    from dm_cc.policy.validator_schema import POLICY_CORE_SCHEMA

    try:
        model = _validator().validate_python(data)
    except pydantic_core_native().ValidationError as exc:
        raise validation_error(exc, shown, lines, PolicyError, POLICY_CORE_SCHEMA) from None
    rules = rules_from(model.get("rules", []), model.get("permission", {}), (), shown, lines)
    agents = {
        name: rules_from(override.get("rules", []), override.get("permission", {}),
                     ("agents", name), shown, lines)
        for name, override in model.get("agents", {}).items()
    }
    tests = []
    for index, spec in enumerate(model.get("tests", [])):
        line = line_of(lines, ("tests", index))
        tool = spec["tool"]
        try:
            check_input_tool(tool)
        except LookupError as exc:
            raise PolicyError(shown, line_of(lines, ("tests", index, "tool")),
                              f"tests[{index}].tool: {exc.args[0]}") from None
        tests.append(InlineTest(tool, spec["input"], spec["expect"], spec.get("agent"),
                                spec.get("name"), f"{shown}:{line}"))
    agent_sources = {name: f"{shown}:{line_of(lines, ('agents', name))}" for name in agents}
    hooks = hooks_from(model.get("hooks", []), shown, lines, directory)
    for hook in hooks:
        _check_rule(hook.as_rule(), shown)
    protected = []
    for index, spec in enumerate(model.get("protected", [])):
        problem = path_pattern_problem(spec["pattern"])
        if problem is not None:
            raise PolicyError(shown, line_of(lines, ("protected", index)),
                              f"bad path pattern {spec['pattern']!r}: {problem}")
        protected.append(Protected(spec["pattern"], spec.get("why") or "protected by " + shown))
    secret_stores = []
    for index, spec in enumerate(model.get("secret_stores", [])):
        path = spec["path"].rstrip("/")
        if not path.startswith(("~/", "/")) or any(c in path for c in "*?[]{}") \
                or "/../" in f"{path}/" or path in ("~", ""):
            raise PolicyError(shown, line_of(lines, ("secret_stores", index)),
                              f"bad secret store {spec['path']!r}: a path under ~/ or an "
                              "absolute one, without wildcards or ..")
        secret_stores.append(SecretStore(path, spec.get("why") or "a secret store named by "
                                         + shown))
    auto = model.get("auto", {})
    auto_rules = rules_from(auto.get("rules", []), auto.get("permission", {}), ("auto",), shown,
                            lines)
    for rule in auto_rules:
        if rule.permission not in AUTO_PERMISSIONS:
            raise PolicyError(shown, int(rule.source.rsplit(":", 1)[1]),
                              f"auto: rules may name only {', '.join(AUTO_PERMISSIONS)} (what a "
                              f"transaction judges), not {rule.permission!r}: a rule for it "
                              "belongs under rules:")
    trust = model.get("trust_projects")
    return PolicyFile(shown, rules, agents, tuple(tests), agent_sources, hooks, tuple(protected),
                      auto_rules, f"{shown}:{line_of(lines, ('auto',))}" if "auto" in model else "",
                      trust, f"{shown}:{line_of(lines, ('trust_projects',))}"
                      if trust is not None else "", secret_stores=tuple(secret_stores))


def load_policy_file(path: Path) -> PolicyFile:
    shown = display_path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PolicyError(shown, None, "no such policy file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise PolicyError(shown, None, f"cannot read policy file: {exc}") from None
    return replace(parse_policy(text, shown, path.resolve().parent), location=str(path.absolute()))
