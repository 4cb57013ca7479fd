"""Claude Code ``settings.json`` → a dm_cc policy.

Claude Code reads ``permissions.allow``, ``permissions.ask`` and ``permissions.deny``
(lists of ``Tool`` or ``Tool(specifier)``) and decides **deny > ask > allow**
whatever the order inside a list; dm_cc's last matching rule wins. So the rules are
written allows first, then asks, then denies: a request any deny matches ends on a
deny, one no deny but an ask matches on an ask, exactly as Claude decides. The
mapping of each tool and specifier is in docs/importers.md.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from dm_cc.errors import PolicyError
from dm_cc.policy.importers.jsonfile import line_with, read_json
from dm_cc.policy.importers.model import (
    Entry,
    Imported,
    InlineTestEntry,
    SaysNothing,
    Unexpressible,
    denial_pattern,
    literal_command,
    program_pattern,
)

# Claude tool → (dm_cc permission, how its specifier is read)
TOOLS: dict[str, tuple[str, str]] = {
    "Bash": ("bash", "command"),
    "Read": ("read", "path"),
    "NotebookRead": ("read", "path"),
    "Edit": ("edit", "path"),
    "MultiEdit": ("edit", "path"),
    "Write": ("edit", "path"),
    "NotebookEdit": ("edit", "path"),
    "Glob": ("glob", "path"),
    "Grep": ("grep", "path"),
    "LS": ("list", "path"),
    "WebFetch": ("webfetch", "domain"),
    "Task": ("task", "name"),
    "Agent": ("task", "name"),
    "TodoWrite": ("todo", "none"),
    "ExitPlanMode": ("plan_exit", "none"),
}

# What a defaultMode means, as rules placed before every imported rule
DEFAULT_MODES: dict[str, list[tuple[str, str, str]]] = {
    "default": [],
    # edits inside the project (`**`): `*` would also reach every directory another
    # allow opens to dm_cc's external_directory (a Read(//etc/**) allow: /etc)
    "acceptEdits": [("edit", "**", "allow")],
    "bypassPermissions": [("*", "*", "allow")],
    "dontAsk": [("*", "*", "deny")],
    # auto mode lets a classifier answer what would ask: dm_cc asks instead (stricter)
    "auto": [],
}
# In dontAsk mode Claude denies whatever is not allowed: every ask (an ask rule's,
# a cd that leaves the project) is a deny
ASK_IS_DENY = frozenset({"dontAsk"})

# Claude Code matches files against Edit(path) rules only (they cover every tool that
# edits files): a path rule of these tools applies to nothing in Claude (its startup
# warns "…is not matched by file permission checks — only Edit(path) rules are"). The
# bare tool names the one tool, which dm_cc's single `edit` permission cannot tell
# from Claude's Edit: an allow of it would allow more.
EDIT_ALIASES = frozenset({"Write", "MultiEdit", "NotebookEdit"})

# Claude Code's documented tools dm_cc has no tool like: a rule about one decides
# nothing in dm_cc, whatever its action (docs.anthropic.com, "Tools available to Claude")
ABSENT = frozenset({"WebSearch", "Skill", "SlashCommand", "KillShell", "BashOutput",
                    "KillBash", "ListMcpResourcesTool", "ReadMcpResourceTool"})
# Claude Code's built-in subagents → dm_cc's like them (a deny or ask of one covers both)
SUBAGENTS = {"Explore": "explore", "general-purpose": "general", "Plan": "plan"}
# The parameters of Claude Code's tools: `Bash(run_in_background:true)` is a rule on
# a call's argument, which dm_cc's patterns cannot say
PARAMETERS = frozenset({"command", "timeout", "description", "run_in_background",
                        "dangerouslyDisableSandbox", "file_path", "offset", "limit",
                        "old_string", "new_string", "replace_all", "content", "pattern",
                        "path", "glob", "type", "output_mode", "url", "prompt",
                        "subagent_type", "notebook_path", "edit_mode", "cell_id",
                        "model", "name", "team_name", "mode", "isolation", "pages"})

_RULE = re.compile(r"^([A-Za-z][A-Za-z0-9_*-]*)(?:\((.*)\))?$", re.S)
_TOOL = re.compile(r"^\s*([^\s(]+)")     # the whole name, whatever it holds
_PARAMETER = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*:(?!\*\s*$)")
LISTS = ("allow", "ask", "deny")   # written in this order: the last match wins

# "Read rules apply to all built-in tools that read files like Grep, Glob, and LS"
# (Claude Code's permissions page): a Read deny or ask is also one of the dm_cc
# permissions that show names or contents under the path, each judged on the
# directory the call names (glob's and list's search root, grep's target; grep also
# asks a read of it, written all the same so the rule says what it covers). An allow
# is not widened: dm_cc asks where Claude's allow might not reach.
READ_COVERS = ("glob", "grep", "list")


# --------------------------------------------------------------------------- Bash


def bash_pattern(spec: str, action: str = "deny", notes: list[str] | None = None) -> str:
    """A Claude ``Bash(...)`` specifier as a dm_cc shell pattern.

    ``npm run test:*`` (legacy prefix) → ``npm run test *``; ``git status`` (exact)
    → ``git status``; ``git * main`` (wildcards) → as written, ``?`` made literal.
    A ``:*`` prefix holding a wildcard (``*:*``) has no documented meaning: a deny or
    ask reads it as the wildcard (the wider, stricter reading), an allow is dropped.
    """
    if spec.endswith(":*"):
        prefix = spec[:-2].rstrip()
        if not prefix or "*" in prefix:
            if action == "allow":
                raise Unexpressible("':*' after a wildcard has no documented meaning")
            if notes is not None:
                notes.append("':*' after a wildcard: read as the wildcard (wider)")
            return _wildcard(prefix or "*") + " *"
        return literal_command(prefix) + " *"
    if ":*" in spec:
        raise Unexpressible("':*' works only at the end of a Bash rule")
    if action == "allow" and spec.endswith(" *") and spec.count("*") > 1:
        # Claude makes a trailing ` *` optional only when it is the rule's one
        # wildcard (`git * *` needs two words); dm_cc's always is: ` ?*` is not
        return _wildcard(spec[:-2]) + " ?*"
    if "*" in spec:
        return _wildcard(spec)
    return literal_command(spec)


def _wildcard(spec: str) -> str:
    if "\\" in spec:
        raise Unexpressible("a backslash in a wildcard rule has no documented meaning")
    return spec.replace("?", "\\?")


# Claude checks where `cd` goes against its working directories, before any allow
# rule: no argument ($HOME), `-` ($OLDPWD), `~…`, an absolute path or one through
# `..` leaves the project and asks, whatever `Bash(cd:*)` says. dm_cc's shell
# pattern cannot say "inside the project", so after the allows these ask again
# (the flags `-P`/`-L` and `--` with them: stricter).
CD_COMMANDS = ("cd", "pushd")
CD_LEAVES = ("", " -*", " ~*", " /*", " *..*", " *$*", " *`*")
CD_PROGRAMS = ("cd", "pushd", "popd")


def cd_leaving_rules() -> list[str]:
    """The dm_cc shell patterns of a `cd` that may leave the project (asked again
    after the allows), and `popd` (back to wherever the stack says)."""
    return [f"{command}{leave}" for command in CD_COMMANDS for leave in CD_LEAVES] + ["popd *"]


def bash_matches(spec: str | None, command: str) -> bool:
    """Claude's reading of a Bash rule, on one simple command (the reference the
    tests compare dm_cc's decisions with). ``None`` is the bare ``Bash`` rule."""
    if spec is None or spec == "*":
        return True
    if spec.endswith(":*"):
        prefix = spec[:-2].rstrip()
        return command == prefix or command.startswith(prefix + " ")
    if "*" not in spec:
        return command == spec
    body = spec[:-2] if spec.endswith(" *") and spec.count("*") == 1 else spec
    regex = ".*".join(re.escape(part) for part in body.split("*"))
    if body is not spec:   # `ls *`: `ls` alone, or `ls` then a space and anything
        regex += "(?: .*)?"
    return re.fullmatch(regex, command, re.S) is not None


def claude_decision(settings: dict[str, list[str]], command: str) -> str | None:
    """deny > ask > allow over the Bash rules of ``settings``; None when none matches."""
    for action in ("deny", "ask", "allow"):
        for text in settings.get(action, []):
            match = _RULE.match(text)
            if match and match.group(1) == "Bash" and bash_matches(match.group(2), command):
                return action
    return None


def _may_run_cd(pattern: str) -> bool:
    """Whether a dm_cc shell pattern may match a cd, pushd or popd: its literal text
    before the first wildcard could start one (``*``, ``c*``, ``cd *``, ``cd src``)."""
    head = re.split(r"(?<!\\)[*?]", pattern, maxsplit=1)[0].replace("\\", "")
    return any(program.startswith(head) or head.startswith(program + " ")
               for program in CD_PROGRAMS)


def _leaves_project(command: str) -> bool:
    """Whether Claude's check of working directories asks about ``command`` (a `cd`
    that may leave the project), whatever its allow rules say."""
    for pattern in cd_leaving_rules():
        body = pattern.removesuffix(" *")
        regex = ".*".join(re.escape(part) for part in body.split("*"))
        if re.fullmatch(regex + ("(?: .*)?" if body != pattern else ""), command, re.S):
            return True
    return False


def _bash_sample(spec: str | None) -> str | None:
    """A command the rule surely matches, for an inline test."""
    if spec is None or spec in ("", "*"):
        return None
    if spec.endswith(":*"):
        prefix = spec[:-2].rstrip()
        return prefix if prefix and "*" not in prefix else None
    if spec.endswith(" *") and spec.count("*") == 1:
        return spec[:-2]
    return None if "*" in spec else spec


# --------------------------------------------------------------------------- paths


def path_pattern(spec: str, root: Path | None) -> str:
    """A Claude path specifier (gitignore syntax) as a dm_cc path pattern.

    ``//abs`` → ``/abs``; ``~/x`` → ``~/x``; ``/x`` (the project root) and ``./x`` →
    project-relative (``./x`` when it has no other ``/``, so it stays anchored);
    ``x`` → as written (no ``/``: a name at any depth; with one: project-relative).
    """
    if spec in ("", "*", "**"):
        return spec or "*"
    if spec.startswith("//"):
        return "/" + spec.lstrip("/")
    if spec == "~" or spec.startswith("~/"):
        return spec
    if spec.startswith("~"):
        raise Unexpressible("only ~/ (the home directory) is expanded")
    if spec.startswith("/"):
        rest = spec.lstrip("/")
    elif spec.startswith("./"):
        rest = spec[2:]
    elif spec == "." or spec.startswith("../") or spec == "..":
        if root is None:
            raise Unexpressible("relative to a directory this file does not fix")
        return str((root / spec).resolve()) if spec != "." else "**"
    else:
        return spec
    rest = rest.lstrip("/") if rest else ""
    if not rest:
        return "**"
    return rest if "/" in rest.rstrip("/") else "./" + rest


def _with_contents(pattern: str) -> str:
    """``pattern`` and what is inside the directories it names, as one pattern:
    ``./.env{,/**}``, ``{.env,**/.env/**}`` (a name at any depth)."""
    if pattern in ("*", "**") or pattern.endswith("/**"):
        return pattern
    if "/" not in pattern:
        return f"{{{pattern},**/{pattern}/**}}"
    return pattern.rstrip("/") + "{,/**}"


def _directory_of(pattern: str) -> str:
    """A path pattern for the directories of the files ``pattern`` matches."""
    head, _, last = pattern.rstrip("/").rpartition("/")
    if last == "**":
        return pattern
    return head or ("/" if pattern.startswith("/") else "~")


def _domain_patterns(spec: str, action: str) -> list[str]:
    if not spec.startswith("domain:"):
        raise Unexpressible("only domain: specifiers are understood")
    domain = spec[len("domain:"):].strip().rstrip(".").lower()
    wildcard = domain.startswith("*.")
    name = domain[2:] if wildcard else domain
    try:
        name = name.encode("idna").decode("ascii")
    except UnicodeError:
        raise Unexpressible("not a valid host name") from None
    if not name or any(c in name for c in "*/?@:[]") :
        raise Unexpressible("not a plain host name")
    if wildcard and action == "allow":
        raise Unexpressible(
            f"a dm_cc wildcard can cross '/', so '*.{name}' would "
            "also allow other hosts whose URL path holds that text; list the hosts")
    host = f"*.{name}" if wildcard else name
    # any scheme dm_cc fetches, any port (Claude matches the host name only)
    return [f"https://{host}/*", f"https://{host}:*", f"http://{host}/*", f"http://{host}:*"]


# --------------------------------------------------------------------------- rules


def _mcp(name: str, spec: str | None, action: str) -> str:
    if spec is not None:
        raise Unexpressible("MCP rules take no specifier")
    if name == "mcp__*":
        return name                     # every tool of every server, in both
    parts = name.split("__")
    whole_server = len(parts) == 2 or (len(parts) == 3 and parts[2] == "*")
    if action == "allow" and "*" in name and not (whole_server and "*" not in parts[1]):
        raise Unexpressible("a '*' in an MCP rule, but for mcp__* and mcp__<server>__*, "
                            "has no documented meaning")
    if len(parts) == 2 and parts[1]:
        return f"{name}__*"             # a whole server
    if len(parts) >= 3 and all(parts[1:]):
        return name
    raise Unexpressible("not mcp__<server> or mcp__<server>__<tool>")


def _every_tool_of(name: str) -> str:
    """The MCP permission wildcard for the server an MCP rule names (every MCP tool
    when it names none)."""
    parts = name.split("__")
    return f"mcp__{parts[1]}__*" if len(parts) > 1 and parts[1] else "mcp__*"


def convert(text: str, action: str, root: Path | None,
            notes: list[str] | None = None) -> list[tuple[str, str]]:
    """One Claude rule as (permission, pattern) pairs; Unexpressible when it cannot be
    (SaysNothing when it is about a tool dm_cc does not have)."""
    match = _RULE.match(text.strip())
    if match is None:
        raise Unexpressible("not Tool or Tool(specifier)")
    tool, spec = match.group(1), match.group(2)
    if spec is not None and spec.strip() in ("", "*"):
        if spec.strip() == "*" and action == "allow" and TOOLS.get(tool, ("", ""))[1] == "path":
            # a path `*` is gitignore's: what is under the project; dm_cc's `*` would
            # also reach what another allow opens outside it (Read(//etc/**): /etc)
            spec = "**"
        else:
            spec = None                 # Tool() and Tool(*) are the tool itself
    if spec is not None and spec.strip() == "**" and action != "allow":
        spec = None   # every path: dm_cc's `**` stays in the project, the tool does not
    if tool.startswith("mcp__"):
        return [(_mcp(tool, spec, action), "*")]
    if tool in ABSENT:
        raise SaysNothing(f"dm_cc has no tool like Claude Code's {tool}")
    if tool not in TOOLS:
        raise Unexpressible(f"dm_cc has no tool like Claude Code's {tool}")
    permission, kind = TOOLS[tool]
    if tool in EDIT_ALIASES:
        return _edit_alias(tool, spec, action, root, notes)
    if spec is None:
        return [(permission, "*")]
    if (parameter := _PARAMETER.match(spec)) and (
            parameter.group(1) in PARAMETERS or kind == "name"):
        # an agent's name holds no ':' (Agent(model:opus) is a rule on a parameter)
        raise Unexpressible(f"a rule on the {parameter.group(1)} parameter of a {tool} call, "
                            "which dm_cc's patterns cannot say")
    if kind == "command":
        pattern = bash_pattern(spec, action, notes)
        return [(permission, pattern if action == "allow" else denial_pattern(pattern))]
    if kind == "path":
        return _path_pairs(permission, spec, action, root)
    if kind == "domain":
        return [(permission, p) for p in _domain_patterns(spec, action)]
    if kind == "name":
        names = [spec] if action == "allow" else [spec, spec.lower(), SUBAGENTS.get(spec, spec)]
        return [(permission, name) for name in dict.fromkeys(names)]
    raise Unexpressible(f"Claude Code's {tool} takes no specifier")


def _edit_alias(tool: str, spec: str | None, action: str, root: Path | None,
                notes: list[str] | None) -> list[tuple[str, str]]:
    """``Write``, ``MultiEdit``, ``NotebookEdit`` rules (:data:`EDIT_ALIASES`). With a
    path they apply to nothing in Claude: an allow allows nothing (left out); a deny or
    ask is kept as the Edit(path) rule its author meant (stricter than Claude). Bare,
    they name one tool: an allow cannot be said (dm_cc's ``edit`` is also Claude's
    Edit); a deny or ask covers every edit (NotebookEdit's: every notebook)."""
    if spec is not None:
        if action == "allow":
            raise SaysNothing(f"Claude Code applies no {tool}(path) rule (only Edit(path) "
                              "rules are matched against files), so it allows nothing")
        if notes is not None:
            notes.append(f"Claude Code applies no {tool}(path) rule; kept as Edit(path), "
                         "stricter than Claude")
        return _path_pairs("edit", spec, action, root)
    if action == "allow":
        raise Unexpressible(f"allows Claude Code's {tool} tool alone; dm_cc's edit "
                            "permission is also Claude's Edit, so it would allow more")
    return [("edit", "*.ipynb" if tool == "NotebookEdit" else "*")]


def _path_pairs(permission: str, spec: str, action: str,
                root: Path | None) -> list[tuple[str, str]]:
    pattern = path_pattern(spec, root)
    if action != "allow":
        # gitignore: a pattern naming a directory covers what is inside it
        pattern = _with_contents(pattern)
    elif "/" not in pattern and pattern != "**" and not pattern.startswith("~"):
        # a name without `/` is gitignore's: at any depth *under the project*; dm_cc's
        # reaches outside it too, where another allow may open a directory
        # (Edit(*.conf) with Read(//etc/hosts) would edit /etc/x.conf)
        pattern = "**/" + pattern
    pairs = [(permission, pattern)]
    if action != "allow" and spec.strip() and spec.strip() != spec:
        # gitignore drops trailing spaces (and Claude may trim the specifier): a deny
        # or ask covers the trimmed name too; an allow keeps the literal (narrower)
        pairs += [pair for pair in _path_pairs(permission, spec.strip(), action, root)
                  if pair not in pairs]
    if action == "allow" and pattern.startswith(("/", "~")):
        # Claude's allow reaches outside the project; dm_cc also asks about
        # leaving it (external_directory, judged on the file's directory)
        pairs.append(("external_directory", _directory_of(pattern)))
    return pairs


def wider(text: str) -> list[tuple[str, str]] | None:
    """The reading of a Claude deny or ask rule that :func:`convert` cannot say,
    widened until dm_cc can: its tool as a whole (an MCP rule: every tool of its
    server; a Bash rule that starts with a program: that program with any
    arguments). None when it names no tool dm_cc knows."""
    tool = _TOOL.match(text)
    if tool is None:
        return None
    name = tool.group(1)
    if name.startswith("mcp__"):
        return [(_every_tool_of(name), "*")]
    if name not in TOOLS:
        return None
    permission, kind = TOOLS[name]
    spec = text.strip()[len(name):].strip().removeprefix("(").removesuffix(")")
    if kind == "command" and not _PARAMETER.match(spec):
        return [(permission, program_pattern(spec))]
    return [(permission, "*")]


def _project_root(path: Path) -> Path | None:
    """``X`` for ``X/.claude/settings*.json``: where Claude's ``/x`` paths start."""
    parent = path.resolve().parent
    return parent.parent if parent.name == ".claude" else None


def _strings(value: Any, shown: str, where: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise PolicyError(shown, None, f"{where} must be a list of strings")
    return list(value)


def import_claude(path: Path) -> Imported:
    shown, data = read_json(path)
    try:
        return claude_policy(data, shown, _project_root(path))
    except PolicyError as exc:
        if exc.line is not None or not exc.message.startswith("permissions"):
            raise
        key = exc.message.split()[0].split(".")[-1]
        raise PolicyError(shown, line_with(path, key), exc.message) from None


def claude_policy(data: Any, shown: str, root: Path | None) -> Imported:
    """A parsed settings file as a policy; ``root`` is the project the file belongs to."""
    if not isinstance(data, dict):
        raise PolicyError(shown, 1, "a Claude Code settings file is a JSON object")
    permissions = data.get("permissions", {})
    if not isinstance(permissions, dict):
        raise PolicyError(shown, None, "permissions must be an object")
    lists = {name: _strings(permissions.get(name), shown, f"permissions.{name}")
             for name in LISTS}
    out = Imported(shown, "claude", header=[
        f"Imported by `dm_cc policy import claude` from {shown}.",
        "Claude Code decides deny > ask > allow whatever the order; dm_cc's last matching",
        "rule wins, so the allows come first, then the asks, then the denies.",
        "Paths: Claude's /x is the project root (x here), //x is absolute (/x), ~/x is home.",
    ])
    mode = permissions.get("defaultMode")
    if mode == "bypassPermissions" and _disabled(permissions.get("disableBypassPermissionsMode")):
        out.approximate("defaultMode: 'bypassPermissions': not imported, as Claude Code "
                        "does not enter it: disableBypassPermissionsMode is 'disable'")
        mode = None
    if mode is not None:
        if mode in DEFAULT_MODES:
            for permission, pattern, action in DEFAULT_MODES[mode]:
                out.rules.append(Entry(permission, pattern, action,
                                       comment=f"defaultMode: {mode}"))
        else:   # plan mode keeps Claude from editing: leaving it out would loosen
            out.unsaid(out.rules, None, f"defaultMode: {mode!r}: no dm_cc rules say it "
                                        "(for plan mode, run `dm_cc --agent plan`)")
    for action in LISTS:
        for text in lists[action]:
            _add(out, text, action, root)
        if action == "allow":
            _directories(out, permissions.get("additionalDirectories"), root, shown)
            _cd_stays(out)
    if mode in ASK_IS_DENY:
        _asks_denied(out, mode)
    _tests(out, lists, ask_is="deny" if mode in ASK_IS_DENY else "ask")
    _unused(out, data, permissions)
    return out


def _disabled(value: Any) -> bool:
    return value in ("disable", True)


def _cd_stays(out: Imported) -> None:
    """After the allows: a `cd` an imported allow lets through asks again where it may
    leave the project (:func:`cd_leaving_rules`), as Claude asks whatever its allow
    rules say."""
    if not any(_may_run_cd(entry.pattern) for entry in out.rules
               if entry.permission == "bash" and entry.action == "allow"):
        return
    for index, pattern in enumerate(cd_leaving_rules()):
        out.rules.append(Entry("bash", pattern, "ask", comment=None if index else (
            "Claude Code asks about a cd that leaves the project (no argument, -, ~, an "
            "absolute path, ..), whatever its allow rules say")))


def _asks_denied(out: Imported, mode: str) -> None:
    """defaultMode dontAsk: Claude denies what it would ask about, so every ask this
    import wrote is a deny (said in the rule's comment)."""
    for index, entry in enumerate(out.rules):
        if entry.permission is not None and entry.action == "ask":
            out.rules[index] = Entry(entry.permission, entry.pattern, "deny",
                                     f"{entry.comment}  (an ask: a deny in {mode} mode)"
                                     if entry.comment else None)


# Settings a Claude Code file may hold that say nothing about permissions dm_cc's
# policy could take, and why (every key is imported or said: Imported.unused)
UNUSED_WHY = {
    "env": "environment variables for Claude Code's sessions; set them in your shell",
    "hooks": "Claude Code's hook commands; dm_cc's hooks are configured apart (docs/hooks.md)",
    "sandbox": "Claude Code's sandbox settings; dm_cc's sandbox has its own (docs/sandbox.md)",
    "model": "Claude Code's model; choose dm_cc's with --model",
    "allowManagedPermissionRulesOnly": (
        "in Claude Code's managed settings, only the managed rules count; dm_cc has no "
        "switch that ignores other layers: install this import as the managed enforced "
        "layer (<managed>/enforced.yaml), which comes after every other layer so no "
        "user or project rule changes what it decides"),
    "disableAutoMode": (
        "keeps Claude Code's auto mode off; dm_cc's auto mode is lifted by rules: put "
        "`auto: {rules: [{permission: bash, pattern: '*', action: ask}, {permission: edit, "
        "pattern: '**', action: ask}]}` in the managed policy to keep it from lifting asks"),
    "disableBypassPermissionsMode": (
        "keeps Claude Code out of bypassPermissions mode; dm_cc has no mode that skips "
        "its rules"),
}
PERMISSION_KEYS = frozenset({*LISTS, "defaultMode", "additionalDirectories"})
SILENT_KEYS = frozenset({"$schema"})


def _unused(out: Imported, data: dict[str, Any], permissions: dict[str, Any]) -> None:
    """Say every key of the file the import did not use."""
    for key in permissions:
        if key not in PERMISSION_KEYS:
            out.unused(f"permissions.{key}", UNUSED_WHY.get(
                key, "a Claude Code permission setting with no dm_cc rule like it"))
    for key in data:
        if key != "permissions" and key not in SILENT_KEYS:
            out.unused(key, UNUSED_WHY.get(key, "a Claude Code setting that is not a "
                                                "permission rule"))


def _add(out: Imported, text: str, action: str, root: Path | None) -> None:
    notes: list[str] = []
    what = f"{action} {text}"
    try:
        pairs = convert(text, action, root, notes)
    except SaysNothing as exc:
        out.drop(out.rules, f"{what}: {exc}")
        return
    except Unexpressible as exc:
        widened = None if action == "allow" else wider(text)
        if widened is None:
            out.unsaid(out.rules, action, f"{what}: {exc}")
            return
        pairs = widened
        out.widen(f"{what}: {exc}", ", ".join(f"{p} {q!r}" for p, q in pairs))
        notes.append(f"{exc}; written wider")
    if action != "allow":
        pairs = _with_readers(pairs)
    comment = f"{action}: {text}"
    for note in notes:
        if not note.endswith("written wider"):
            out.approximate(f"{what}: {note}")
        comment += f"  (approximate: {note})"
    for index, (permission, pattern) in enumerate(pairs):
        out.rules.append(Entry(permission, pattern, action,
                               comment=comment if index == 0 else None))


def _with_readers(pairs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """A deny or ask's pairs, each ``read`` pattern also written for the permissions
    that read under it (:data:`READ_COVERS`)."""
    return [*pairs, *((reader, pattern) for permission, pattern in pairs
                      if permission == "read" for reader in READ_COVERS)]


def _directories(out: Imported, value: Any, root: Path | None, shown: str) -> None:
    for directory in _strings(value, shown, "permissions.additionalDirectories"):
        try:
            if directory.startswith(("/", "~")):
                base = directory.rstrip("/") or "/"
            elif root is not None:
                base = str((root / directory).resolve())
            else:
                raise Unexpressible("relative to a directory this file does not fix")
        except Unexpressible as exc:
            out.drop(out.rules, f"additionalDirectories {directory}: {exc}")
            continue
        pattern = base.rstrip("/") + "/**"
        out.rules.append(Entry("external_directory", pattern, "allow",
                               comment=f"additionalDirectories: {directory}"))
        out.rules.append(Entry("read", pattern, "allow"))


def _on_a_parameter(spec: str | None) -> bool:
    """Whether a specifier is a rule on a call's parameter (``run_in_background:true``),
    which names no command to test."""
    parameter = _PARAMETER.match(spec or "")
    return parameter is not None and parameter.group(1) in PARAMETERS


def _tests(out: Imported, lists: dict[str, list[str]], ask_is: str = "ask") -> None:
    """For each Bash rule with an obvious example command, the decision Claude
    Code would give it (deny > ask > allow over every Bash rule; ``ask_is`` what
    an ask is in the file's mode)."""
    seen: set[str] = set()
    for action in ("deny", "ask", "allow"):
        for text in lists[action]:
            match = _RULE.match(text.strip())
            if not match or match.group(1) != "Bash" or _on_a_parameter(match.group(2)):
                continue
            sample = _bash_sample(match.group(2))
            if sample is None or sample in seen:
                continue
            try:
                bash_pattern(match.group(2) or "*", action)
            except Unexpressible:
                continue
            seen.add(sample)
            expect = claude_decision(lists, sample)
            if expect == "allow" and _leaves_project(sample):
                expect = "ask"
            if expect == "ask":
                expect = ask_is
            if expect is not None:
                out.tests.append(InlineTestEntry("bash", sample, expect,
                                                 name=f"Claude Code: {expect} ({text})"))
