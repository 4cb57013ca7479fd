"""Claude Code's decision procedure, written from its documentation and observed
behaviour, apart from the importer (dm_cc/policy/importers/claude.py): the
reference the never-looser property compares every import with.

    decide(settings, tool, text, root=..., home=...) -> "allow" | "ask" | "deny"

What it reads (docs/importers.md says the same from the importer's side):

* rules are ``Tool`` or ``Tool(specifier)``; **deny > ask > allow**, whatever the
  order inside a list;
* ``Bash(prefix:*)`` is the prefix, then the end or a space; ``Bash(x)`` without a
  ``*`` is exactly ``x``; with ``*`` a wildcard (any characters), whose trailing
  `` *`` is optional only when it is the rule's one wildcard; a compound command
  (``a && b``) is judged per simple command, the strictest answer winning;
* before any allow rule, Claude checks where ``cd``/``pushd``/``popd`` go against
  its working directories: no argument ($HOME), ``-``, ``~…``, an absolute path
  outside the project, or a path through ``..`` out of it asks;
* Read and Edit specifiers are gitignore patterns (``//abs``, ``~/home``, ``/x``
  and ``./x`` from the project root, a name without ``/`` at any depth below it; a
  match of a directory covers what is inside); Edit rules apply to every tool that
  edits files (Edit and Write); ``Write(path)``, ``MultiEdit(path)`` and
  ``NotebookEdit(path)`` rules apply to nothing; a bare ``Write`` names the Write
  tool alone; Read rules apply to every built-in tool that reads files -- Glob,
  Grep and LS, each judged on the directory (or file) its call names, as its own
  bare rule (``Glob``, ``Grep``, ``LS``) is;
* ``WebFetch(domain:h)`` is the URL's host (``*.h`` any subdomain);
* ``mcp__s`` and ``mcp__s__*`` every tool of server ``s``, ``mcp__*`` every MCP tool;
* a rule on a parameter (``Bash(run_in_background:true)``, ``Agent(model:opus)``)
  is read at its widest for a deny or ask (the whole tool) and as nothing for an
  allow -- the reading that leaves the reference strictest, so the property asks
  the most of the import;
* with no rule: reads inside the project are allowed, all else asks;
  ``acceptEdits`` allows edits inside the project, ``bypassPermissions`` allows
  what no deny or ask rule names (unless ``disableBypassPermissionsMode`` is
  ``disable``), ``dontAsk`` denies whatever would ask.
"""

from __future__ import annotations

import posixpath
import re
from fnmatch import fnmatchcase
from typing import Any
from urllib.parse import urlsplit

STRICTNESS = {"allow": 0, "ask": 1, "deny": 2}
PARAMETER = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*):(?!\*$)")
BASH_PARAMETERS = {"run_in_background", "timeout", "description", "command",
                   "dangerouslyDisableSandbox"}
EDIT_TOOLS = {"edit", "write"}
# dm_cc's tools that read under a path → the Claude Code tool like each
READ_TOOLS = {"read": "Read", "glob": "Glob", "grep": "Grep", "list": "LS"}


def strictest(*decisions: str) -> str:
    return max(decisions, key=STRICTNESS.__getitem__)


def parse(rule: str) -> tuple[str, str | None]:
    match = re.fullmatch(r"([A-Za-z_*][A-Za-z0-9_*-]*)(?:\((.*)\))?", rule.strip(), re.S)
    if match is None:
        return rule, None
    spec = match.group(2)
    return match.group(1), None if spec in (None, "", "*") else spec


# --------------------------------------------------------------------------- Bash

def bash_matches(spec: str | None, command: str, action: str) -> bool:
    if spec is None:
        return True
    parameter = PARAMETER.match(spec)
    if parameter and parameter.group(1) in BASH_PARAMETERS:
        return action != "allow"
    if spec.endswith(":*"):
        prefix = spec[:-2].rstrip()
        return command == prefix or command.startswith(prefix + " ")
    if "*" not in spec:
        return command == spec
    sole_tail = spec.endswith(" *") and spec.count("*") == 1
    body = spec[:-2] if sole_tail else spec
    regex = ".*".join(re.escape(part) for part in body.split("*"))
    if sole_tail:
        regex += "(?: .*)?"
    return re.fullmatch(regex, command, re.S) is not None


def cd_leaves(command: str, root: str, home: str) -> bool:
    """Whether a cd/pushd/popd goes outside the project, as Claude's check of its
    working directories sees it (popd: wherever the stack says)."""
    words = command.split()
    if not words or words[0] not in ("cd", "pushd", "popd"):
        return False
    if words[0] == "popd" or len(words) == 1:
        return True
    target = words[1]
    if target.startswith(("-", "~", "$", "`")):
        return True
    where = posixpath.normpath(target if target.startswith("/") else f"{root}/{target}")
    return not (where == root or where.startswith(root + "/"))


def _simple(settings: dict[str, list[str]], command: str, root: str, home: str,
            bypass: bool) -> str | None:
    for action in ("deny", "ask"):
        if any(tool == "Bash" and bash_matches(spec, command, action)
               for tool, spec in map(parse, settings.get(action, []))):
            return action
    if not bypass and cd_leaves(command, root, home):
        return "ask"
    if any(tool == "Bash" and bash_matches(spec, command, "allow")
           for tool, spec in map(parse, settings.get("allow", []))):
        return "allow"
    return None


# --------------------------------------------------------------------------- paths

def _glob(pattern: list[str], path: list[str]) -> bool:
    if not pattern:
        return not path
    if pattern[0] == "**":
        return any(_glob(pattern[1:], path[i:]) for i in range(len(path) + 1))
    return bool(path) and fnmatchcase(path[0], pattern[0]) and _glob(pattern[1:], path[1:])


def path_matches(spec: str | None, path: str, root: str, home: str) -> bool:
    """A gitignore specifier on an absolute path; a directory's match covers its
    contents."""
    if spec is None or spec == "**":
        return True
    if spec.startswith("//"):
        base, body = "/", spec[2:]
    elif spec.startswith("~/"):
        base, body = home, spec[2:]
    elif spec.startswith(("/", "./")):
        base, body = root, spec.lstrip("./") if spec.startswith("./") else spec[1:]
    elif "/" not in spec.rstrip("/"):
        base, body = root, "**/" + spec
    else:
        base, body = root, spec
    if not (path == base or path.startswith(base.rstrip("/") + "/")):
        return False
    segments = [s for s in path[len(base):].split("/") if s]
    pattern = [s for s in body.rstrip("/").split("/") if s]
    return any(_glob(pattern, segments[:end]) for end in range(1, len(segments) + 1))


def absolute(path: str, root: str, home: str) -> str:
    if path.startswith("~/"):
        return f"{home}/{path[2:]}"
    return posixpath.normpath(path if path.startswith("/") else f"{root}/{path}")


def _file_rule(tool: str, rule_tool: str, spec: str | None, path: str, root: str,
               home: str, action: str) -> bool:
    parameter = spec is not None and PARAMETER.match(spec) is not None
    if tool in READ_TOOLS and rule_tool == "Read":
        return action != "allow" if parameter else path_matches(spec, path, root, home)
    if tool in READ_TOOLS and rule_tool == READ_TOOLS[tool]:
        return spec is None
    if tool in EDIT_TOOLS and rule_tool == "Edit":
        return action != "allow" if parameter else path_matches(spec, path, root, home)
    # the bare Write names the Write tool alone
    return tool == "write" and rule_tool == "Write" and spec is None


# --------------------------------------------------------------------------- the rest

def _host_matches(spec: str | None, url: str) -> bool:
    if spec is None:
        return True
    if not spec.startswith("domain:"):
        return False
    want, host = spec[len("domain:"):].lower(), (urlsplit(url).hostname or "").lower()
    if want.startswith("*."):
        return host.endswith(want[1:])
    return host == want


def _mcp_matches(rule_tool: str, spec: str | None, tool: str, action: str) -> bool:
    if not rule_tool.startswith("mcp__"):
        return False
    if spec is not None:                # a specifier on an MCP rule: widest for deny/ask
        return action != "allow" and tool.startswith(f"mcp__{rule_tool.split('__')[1]}__")
    if rule_tool == "mcp__*":
        return True
    parts = rule_tool.split("__")
    if len(parts) == 2 or (len(parts) == 3 and parts[2] == "*"):
        return tool.startswith(f"mcp__{parts[1]}__")
    return tool == rule_tool


def _rule_matches(rule: str, action: str, tool: str, text: str, root: str, home: str) -> bool:
    rule_tool, spec = parse(rule)
    if tool in (*READ_TOOLS, *EDIT_TOOLS):
        return _file_rule(tool, rule_tool, spec, absolute(text, root, home), root, home, action)
    if tool == "webfetch":
        return rule_tool == "WebFetch" and _host_matches(spec, text)
    if tool.startswith("mcp__"):
        return _mcp_matches(rule_tool, spec, tool, action)
    raise ValueError(f"the reference does not model {tool}")


def _default(tool: str, text: str, mode: str, root: str, home: str) -> str:
    where = absolute(text, root, home)
    inside = tool in (*READ_TOOLS, *EDIT_TOOLS) and \
        (where == root or where.startswith(root + "/"))
    if mode == "bypassPermissions":
        return "allow"
    if tool in READ_TOOLS and inside:
        return "allow"
    if mode == "acceptEdits" and tool in EDIT_TOOLS and inside:
        return "allow"
    return "ask"


def decide(settings: dict[str, Any], tool: str, text: str, *, root: str, home: str) -> str:
    """Claude Code's decision for a call of dm_cc's ``tool`` (bash, read, glob, grep,
    list, edit, write, webfetch, an MCP tool) with main input ``text``, under ``settings`` (a settings
    file's parsed JSON)."""
    permissions = settings.get("permissions", {})
    mode = permissions.get("defaultMode", "default")
    if mode == "bypassPermissions" and \
            permissions.get("disableBypassPermissionsMode") == "disable":
        mode = "default"
    lists = {action: permissions.get(action, []) for action in ("allow", "ask", "deny")}
    if tool == "bash":
        answers = []
        for command in (part.strip() for part in text.split("&&")):
            found = _simple(lists, command, root, home, mode == "bypassPermissions")
            answers.append(found or ("allow" if mode == "bypassPermissions" else "ask"))
        decision = strictest(*answers)
    else:
        decision = next((action for action in ("deny", "ask", "allow")
                         if any(_rule_matches(rule, action, tool, text, root, home)
                                for rule in lists[action])), None) \
            or _default(tool, text, mode, root, home)
    return "deny" if mode == "dontAsk" and decision == "ask" else decision
