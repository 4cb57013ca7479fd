"""Policy files: YAML -> rules with ``file:line`` sources, stacked in layers; lint,
inline tests, the schema, the shipped policies and importers.

    layers.py        the layers (DESIGN.md §3) found, loaded and stacked: Policy
    loader.py        one file: YAML -> validated model -> rules (``parse_policy``)
    managed.py       the managed layer's files, local or delivered from a URL (pinned
                     or signed, cached, the last good copy); fetch.py fetches them
    schema.py        the file format as pydantic models; validator_schema.py generated
    defaults.py      the built-in default rules; effects.py rights from effects
    hooks.py         a file's ``hooks:``; inline_tests.py its ``tests:``; lint.py
    editing.py       one rule added to or removed from a file, as a line of its text
    shipped/         the policies that ship with dm_cc (``builtin:NAME``), found in
                     the repository's policies/ or the copy a build put in the package
    importers/       other assistants' settings rewritten as policy files
    exporters/       policies written as other assistants' settings

The front door is lazy: a name's module is imported on its first use (the schema
brings pydantic; ``dm_cc --help`` loads no YAML).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dm_cc.policy.editing import (
        Changed,
        Edit,
        NewRule,
        Place,
        add_rule,
        findings_of,
        numbered,
        remove_rule,
        save,
    )
    from dm_cc.policy.effects import Capabilities
    from dm_cc.policy.exporters import EXPORTERS
    from dm_cc.policy.exporters.stack import file_rules, stack_rules
    from dm_cc.policy.hooks import Hook
    from dm_cc.policy.importers import IMPORTERS, InlineTestEntry, InvalidSource, render_policy
    from dm_cc.policy.importers.settle import settle_tests
    from dm_cc.policy.inline_tests import run_inline_tests
    from dm_cc.policy.layers import (
        APPROVALS_LAYER,
        AUTO_LAYER,
        HOOK_LAYER,
        PROJECT_LAYER,
        TRUSTED_HOOK_LAYERS,
        USER_LAYER,
        Link,
        Policy,
        lifted_for_changes,
        load_policy,
    )
    from dm_cc.policy.lint import Finding, beyond_rights, lint_files, unknown_agents
    from dm_cc.policy.loader import parse_policy, rules_from
    from dm_cc.policy.schema import ActionName, RuleSpec, policy_json_schema
    from dm_cc.policy.shipped import (
        SHIPPED_PREFIX,
        load_policy_arg,
        shipped_names,
        shipped_summary,
        shipped_text,
    )

__all__ = [
    "APPROVALS_LAYER",
    "AUTO_LAYER",
    "EXPORTERS",
    "HOOK_LAYER",
    "IMPORTERS",
    "InlineTestEntry",
    "PROJECT_LAYER",
    "InvalidSource",
    "SHIPPED_PREFIX",
    "TRUSTED_HOOK_LAYERS",
    "USER_LAYER",
    "ActionName",
    "Capabilities",
    "Changed",
    "Edit",
    "Finding",
    "Hook",
    "Link",
    "NewRule",
    "Place",
    "Policy",
    "RuleSpec",
    "add_rule",
    "beyond_rights",
    "file_rules",
    "findings_of",
    "lint_files",
    "lifted_for_changes",
    "load_policy",
    "load_policy_arg",
    "numbered",
    "parse_policy",
    "policy_json_schema",
    "remove_rule",
    "render_policy",
    "rules_from",
    "run_inline_tests",
    "save",
    "settle_tests",
    "shipped_names",
    "shipped_summary",
    "shipped_text",
    "stack_rules",
    "unknown_agents",
]

# Each module of the part and the names of it re-exported here, imported on first
# use (PEP 562): importing the package loads none of them.
_LAZY: dict[str, tuple[str, ...]] = {
    "dm_cc.policy.editing": ("Changed", "Edit", "NewRule", "Place", "add_rule", "findings_of",
                             "numbered", "remove_rule", "save"),
    "dm_cc.policy.effects": ("Capabilities",),
    "dm_cc.policy.hooks": ("Hook",),
    "dm_cc.policy.exporters": ("EXPORTERS",),
    "dm_cc.policy.exporters.stack": ("file_rules", "stack_rules"),
    "dm_cc.policy.importers": ("IMPORTERS", "InlineTestEntry", "InvalidSource", "render_policy"),
    "dm_cc.policy.importers.settle": ("settle_tests",),
    "dm_cc.policy.inline_tests": ("run_inline_tests",),
    "dm_cc.policy.layers": ("APPROVALS_LAYER", "AUTO_LAYER", "HOOK_LAYER", "PROJECT_LAYER",
                            "TRUSTED_HOOK_LAYERS", "USER_LAYER", "Link", "lifted_for_changes",
                            "Policy", "load_policy"),
    "dm_cc.policy.lint": ("Finding", "beyond_rights", "lint_files", "unknown_agents"),
    "dm_cc.policy.loader": ("parse_policy", "rules_from"),
    "dm_cc.policy.schema": ("ActionName", "RuleSpec", "policy_json_schema"),
    "dm_cc.policy.shipped": ("SHIPPED_PREFIX", "load_policy_arg", "shipped_names",
                             "shipped_summary", "shipped_text"),
}

if not TYPE_CHECKING:  # for mypy, the imports above are the names
    _OWNER = {name: module for module, names in _LAZY.items() for name in names}

    def __getattr__(name: str) -> object:
        """``name``, its module imported on first use."""
        module = _OWNER.get(name)
        if module is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(import_module(module), name)
        globals()[name] = value  # found once: later lookups do not come here
        return value
