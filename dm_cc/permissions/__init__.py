"""The permission engine: pure, synchronous, no I/O, imports nothing else from dm_cc.

    >>> from dm_cc.permissions import Rule, evaluate
    >>> evaluate("bash", "git push", [Rule("bash", "git *", "allow"), Rule("bash", "git push *", "ask")]).action
    'ask'

The front door of the part: every other part imports these names from here, never
a module below. Importing it loads the whole engine (it is all needed to judge).

    rules.py     the vocabulary: Rule, Request, actions, pattern languages, effects,
                 the permissions the engine makes itself
    engine.py    matching: ``evaluate`` finds the deciding rule of a Ruleset
    gate.py      deciding: a Gate over ordered layers (and ceilings) decides request
                 sets; ``decide(requests, *rulesets)`` is a gate over plain rulesets
    requests.py  what a tool call names -> requests, by kind (``derive_requests``);
                 a stopped command run again unconfined (``escape_requests``)
    paths.py     canonical paths (the filesystem passed in); urls.py canonical URLs
    patterns.py  the pattern languages (wildcards, path globs, MCP arguments)
    protected.py the files that make code run later (an edit asks unless named exactly)
    secrets.py   the person's credential stores outside the project (hidden, asked)
    coverage.py  what a pattern can match, read without a request (policy lint; how
                 broad an approval would be)
    shell/       static analysis of command lines; where a line's here-document
                 bodies are (``heredoc_bodies``: the REPL shows them as data)
"""

from dm_cc.permissions.coverage import arguments_fault, covers, names_a_permission, too_broad
from dm_cc.permissions.engine import Ruleset, evaluate
from dm_cc.permissions.gate import (
    REACHING,
    REPOSITORY,
    Candidate,
    Ceiling,
    Decision,
    Gate,
    Layer,
    Origin,
    Verdict,
    combine,
    decide,
    stricter,
)
from dm_cc.permissions.paths import PathContextDirs, expand_home
from dm_cc.permissions.patterns import (
    UNIVERSAL_PATHS,
    PathContext,
    load_arguments,
    path_alternatives,
    path_pattern_problem,
)
from dm_cc.permissions.protected import (
    DEFAULT_PROTECTED,
    PROTECTED_PATHS,
    Protected,
    ProtectedPaths,
    git_data,
)
from dm_cc.permissions.requests import (
    KIND_LANGUAGE,
    Kind,
    Value,
    derive_requests,
    escape_requests,
    host_requests,
    path_requests,
)
from dm_cc.permissions.rules import (
    ACTIONS,
    DEFAULT_RULE,
    DELETE,
    DOOM_LOOP,
    EFFECTS,
    ENGINE_EFFECTS,
    ENGINE_LANGUAGES,
    ENGINE_PERMISSIONS,
    MCP_PREFIX,
    NAMED_ONLY,
    NETWORK,
    NEVER_SAVED,
    READS,
    REDIRECT,
    SANDBOX_ESCAPE,
    STRICTNESS,
    Action,
    Effect,
    Language,
    Request,
    Rule,
    is_mcp_permission,
)
from dm_cc.permissions.secrets import (
    DEFAULT_SECRETS,
    SECRET_STORES,
    Secret,
    SecretStore,
    SecretStores,
)
from dm_cc.permissions.shell import HeredocBody, heredoc_bodies
from dm_cc.permissions.urls import canonical_url, url_names

__all__ = [
    "DEFAULT_PROTECTED",
    "UNIVERSAL_PATHS",
    "git_data",
    "PROTECTED_PATHS",
    "REACHING",
    "REPOSITORY",
    "Origin",
    "Protected",
    "ProtectedPaths",
    "SECRET_STORES",
    "DEFAULT_SECRETS",
    "Secret",
    "SecretStore",
    "SecretStores",
    "ACTIONS",
    "DEFAULT_RULE",
    "DOOM_LOOP",
    "EFFECTS",
    "ENGINE_EFFECTS",
    "ENGINE_LANGUAGES",
    "ENGINE_PERMISSIONS",
    "KIND_LANGUAGE",
    "MCP_PREFIX",
    "NAMED_ONLY",
    "NETWORK",
    "NEVER_SAVED",
    "READS",
    "SANDBOX_ESCAPE",
    "DELETE",
    "REDIRECT",
    "STRICTNESS",
    "Action",
    "Candidate",
    "Ceiling",
    "Decision",
    "Effect",
    "Gate",
    "HeredocBody",
    "Kind",
    "Language",
    "Layer",
    "PathContext",
    "PathContextDirs",
    "Request",
    "Rule",
    "Ruleset",
    "Value",
    "Verdict",
    "arguments_fault",
    "canonical_url",
    "combine",
    "covers",
    "decide",
    "derive_requests",
    "heredoc_bodies",
    "host_requests",
    "escape_requests",
    "evaluate",
    "expand_home",
    "is_mcp_permission",
    "load_arguments",
    "names_a_permission",
    "path_alternatives",
    "path_pattern_problem",
    "path_requests",
    "stricter",
    "too_broad",
    "url_names",
]
