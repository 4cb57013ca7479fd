"""A program's arguments read with its ArgSpec: risky options, scripts, file operands.

:func:`inspect` scans the words of a program that has an :class:`~.ArgSpec` (GNU
long options may be abbreviated) and returns its effects in order: risky options as
:class:`~.records.Sensitive` tokens, scripts to parse again (``find -exec``, ``--eval``
...), sed and awk programs checked with :mod:`.sed_awk`, and file operands (including
``@FILE`` and ``file://`` forms) as :class:`~.records.FileUse` s. Pure: the judge applies
them.
"""

from __future__ import annotations

import re
from functools import cache

from dm_cc.permissions.shell.flags import Scan, scan_options
from dm_cc.permissions.shell.quoting import Word
from dm_cc.permissions.shell.records import (
    Command,
    Effect,
    FileUse,
    Opaque,
    Reach,
    Script,
    Sensitive,
    Stdin,
)
from dm_cc.permissions.shell.sed_awk import awk_risky, program_files, sed_risky
from dm_cc.permissions.shell.tables.arguments import TAR_WRITE_OPTS, ArgSpec
from dm_cc.permissions.shell.tables.commands import COMMAND_SETTINGS
from dm_cc.permissions.shell.tables.environment import risky_env, runs_value
from dm_cc.permissions.shell.tables.flag_aliases import SINGLE_DASH_LONG

_URL_PATH = r"(?i)file:"
_RISKY_PROGRAM = {"sed": sed_risky, "awk": awk_risky}


def inspect(key: tuple[str, ...], spec: ArgSpec, words: list[Word],
            stop: int, stdin: Stdin | None = None) -> list[Effect]:
    """Risky options, scripts and file operands of ``words[len(key):stop]``, in order;
    first, for a program that reads code on its standard input (``spec.stdin_code``:
    ``sqlite3 db <<EOF``), what that static script holds.

    Every reading: where an option is not known to the table (``spec.flags`` lists the
    ones that take no value), the words are read twice -- the option taking no value, and
    taking the next word as its value -- and the effects of both are returned. For a
    program whose first operand is its program text (sed, awk), the second reading can
    shift which word is the program: ``sed --new-opt p 'e cmd'``."""
    read: list[Effect] = _stdin_code(spec, stdin) if spec.stdin_code else []
    args = words[len(key):stop]
    if key[0] in ("tar", "gtar", "bsdtar") and args and args[0].text[:1] not in ("-", ""):
        args = _tar_bundle(args, spec)  # old-style bundled mode: tar cfT a.tar list
    texts = [_unabbreviate(w.text, spec) if w.text[:2] == "--" else w.text for w in args]
    if spec.attached_opts:  # gcc -oFILE -B/tmp/x: the option, then its value
        args, texts = _detach(args, texts, spec)
    single = key[0] in SINGLE_DASH_LONG
    scan = scan_options(texts, value_opts=spec.value_opts, pair_opts=spec.pair_opts,
                        optional_opts=spec.optional_opts, positional_re=spec.positional_re,
                        single_dash_long=single)
    effects = _effects(key, spec, args, texts, scan)
    unknown = _unknown_options(scan, spec)
    if unknown:
        other = scan_options(texts, value_opts=spec.value_opts | unknown,
                             pair_opts=spec.pair_opts, optional_opts=spec.optional_opts,
                             positional_re=spec.positional_re, single_dash_long=single)
        effects += [e for e in _effects(key, spec, args, texts, other) if e not in effects]
    return read + effects


def _unknown_options(scan: Scan, spec: ArgSpec) -> frozenset[str]:
    """Options the table does not know, when it matters which word is the program text
    (only a spec listing its value-less ``flags`` can tell an unknown option)."""
    if not spec.flags or not spec.skip:
        return frozenset()
    alone = [o.flag for o in scan.options if o.value is None]
    if not alone:  # (most commands: the table's option sets are not joined for nothing)
        return frozenset()
    known = (spec.flags | spec.value_opts | spec.pair_opts | spec.optional_opts
             | spec.skip_opts | spec.edit_opts | spec.read_opts | frozenset(spec.risky))
    return frozenset(flag for flag in alone if flag not in known)


def _tar_bundle(args: list[Word], spec: ArgSpec) -> list[Word]:
    """tar's old-style options: ``tar cfT a.tar list`` is ``-c -f a.tar -T list`` -- each
    letter that takes a value takes the next word after the bundle, in the letters'
    order (GNU tar 1.34 manual, "Old Option Style")."""
    bundle, rest = args[0], list(args[1:])
    out: list[Word] = []
    for letter in bundle.text:
        out.append(bundle._replace(text="-" + letter))
        if "-" + letter in spec.value_opts and rest:
            out.append(rest.pop(0))
    return out + rest


def _effects(key: tuple[str, ...], spec: ArgSpec, args: list[Word], texts: list[str],
             scan: Scan) -> list[Effect]:
    """The effects of one reading of the words (``scan``)."""
    effects: list[Effect] = []
    flags = {o.flag for o in scan.options}
    if spec.starts is not None:  # find's starting points (walked before its expression runs)
        effects += [FileUse(args[i], spec.starts) for i in _find_starts(texts, spec)]
    for opt in scan.options:
        check = spec.option_checks.get(opt.flag)
        if check and opt.value is not None and re.search(check, opt.value):
            effects.append(Sensitive(opt.flag))
        risk = spec.risky.get(opt.flag)
        if risk is None:
            continue
        if risk in ("flag", "flag-edit", "flag-read", "script", "exec", "program", "setting",
                    "ex"):  # (ssh's -o is sensitive only for the names option_checks lists)
            effects.append(Sensitive(opt.flag))
        if risk == "exec":
            effects.append(Command(_until_terminator(args, opt.at + 1)))
        if opt.value is None:
            continue
        value = args[opt.at]._replace(text=opt.value)
        if risk == "ex" and (escape := _shell_escape(opt.value)):  # vim -c '!CMD'
            effects.append(Script(value._replace(text=escape)))
        if risk == "ssh-option" and (found := _ssh_command().match(opt.value)):
            effects.append(Script(value._replace(text=found.group(1))))  # -o ProxyCommand=
        if risk == "output" and opt.value[:1] in ("|", "!"):  # strace -o '|CMD'
            effects.append(Script(value._replace(text=opt.value[1:])))
        elif risk == "output":
            effects.append(FileUse(value, "edit"))
        if risk == "setting" and (command := setting_command(
                key[0], *opt.value.partition("=")[::2])):  # git clone -c K=V, cargo --config
            effects.append(Script(value._replace(text=command)))
        if risk == "program":  # gcc -wrapper sh,-c,CMD: the program runs, with its words
            effects.append(Command([value._replace(text=part)
                                    for part in re.split(r"[,\s]+", opt.value) if part]))
        if risk in ("edit", "flag-edit"):
            effects.append(FileUse(value, "edit"))
        elif risk == "inplace-read":  # json -I -f F: F is rewritten
            effects.append(FileUse(value, "edit" if flags & spec.edit_opts else "read"))
        elif risk in ("read", "flag-read"):
            effects.append(FileUse(value, "read"))
        elif risk in ("archive", "directory"):
            writes = bool(flags & TAR_WRITE_OPTS) == (risk == "archive")
            effects.append(FileUse(value, "edit" if writes else "read"))
        elif risk == "script":
            effects.append(Script(value))
        elif risk == "at-read" and (path := _at_file(opt.value)):
            effects.append(FileUse(value._replace(text=path), "read"))
        elif risk == "at-start-read" and opt.value.startswith("@") and len(opt.value) > 1:
            effects.append(FileUse(value._replace(text=opt.value[1:]), "read"))  # curl -H @FILE
        elif risk == "url-read" and re.match(_URL_PATH, opt.value):
            effects.append(FileUse(value._replace(text=_file_path(opt.value)), "read"))
        elif risk == "colon-read" and ":" in opt.value:  # git log -L 1,5:FILE
            effects.append(FileUse(value._replace(text=opt.value.rsplit(":", 1)[1]), "read"))
        elif risk == "exec-value" and "exec=" in opt.value:  # --checkpoint-action=exec=CMD
            effects += [Sensitive(opt.flag),
                        Script(value._replace(text=opt.value.split("exec=", 1)[1]))]
        elif risk == "list-read":  # file -m a.mgc:b.mgc
            effects += [FileUse(value._replace(text=path), "read")
                        for path in opt.value.split(":") if path]
        elif risk == "pair-read" and opt.at + 1 < len(args):
            effects.append(FileUse(args[opt.at + 1], "read"))  # jq --rawfile NAME FILE
    positionals = [args[i] for i in scan.positionals]
    if spec.response_files:  # gcc @FILE: more arguments, read from FILE when it runs
        listed = [w for w in positionals if w.text[:1] == "@" and len(w.text) > 1]
        effects += [FileUse(w._replace(text=w.text[1:]), "read") for w in listed]
        effects += [Opaque(f"reads more arguments from {w.text[1:]} ({w.text}): what they "
                           "are is only known when it runs") for w in listed]
        positionals = [w for w in positionals if w not in listed]
    if "+" in spec.risky and any(w.text.startswith("+") for w in positionals):
        effects.append(Sensitive("+"))
        effects += [Script(w._replace(text=escape)) for w in positionals  # less '+!CMD'
                    if w.text.startswith("+") and (escape := _shell_escape(w.text[1:]))]
    skip = 0 if flags & spec.skip_opts else spec.skip
    if spec.script is not None:
        programs = [args[o.at]._replace(text=o.value) for o in scan.options
                    if o.flag in spec.skip_opts and o.flag not in spec.risky
                    and o.value is not None]
        programs += positionals[:skip]
        risky = _RISKY_PROGRAM.get(spec.script)
        effects += [Sensitive(p.text) for p in programs if risky is not None and risky(p.text)]
        effects += [FileUse(p._replace(text=path), access) for p in programs
                    for path, access in program_files(spec.script, p.text)]
    if spec.sensitive_positionals and len(positionals) >= spec.sensitive_positionals:
        keys = positionals[:max(1, len(positionals) - 1)]  # all but the value it sets
        effects += [Sensitive(w.text.partition("=")[0] or w.text) for w in keys]
        last = positionals[-1]  # git config core.pager CMD, npm set script-shell=CMD:
        name, eq, assigned = last.text.partition("=")  # CMD runs later
        setting = (name, assigned) if eq and len(positionals) == 1 else \
            (positionals[-2].text, last.text) if len(positionals) > 1 else None
        if setting and (command := setting_command(key[0], *setting)):
            effects.append(Script(last._replace(text=command)))
    if spec.git_urls:  # git clone https://h/r, git fetch git@h:r: a request to h
        effects += [Reach(w) for w in positionals
                    if re.match(r"(?i)[a-z][a-z0-9+.-]*://|[\w.-]+@[\w.-]+:", w.text)]
    if spec.command_re:  # socat - EXEC:CMD
        effects += [Script(w._replace(text=m.group(1))) for w in positionals
                    if (m := re.match(spec.command_re, w.text))]
    if spec.sensitive_re:  # sqlite3 db '.shell cmd', psql -c '\\! cmd'
        code = [*positionals, *(args[o.at]._replace(text=o.value) for o in scan.options
                                if o.flag in spec.code_opts and o.value is not None)]
        effects += [Sensitive(w.text) for w in code if re.search(spec.sensitive_re, w.text)]
        if spec.stdin_code:  # a database shell: its own commands that run shell commands
            effects += [e for w in code for e in _sql_shell(w.text)]
    if spec.assign_env:  # make SHELL=/tmp/evil
        for w in positionals:
            made = _make_assignment().match(w.text)
            if made is None:
                continue
            var, assigned = made.group(1), made.group(2)
            if risky_env(var):
                effects.append(Sensitive(var))
            if runs_value(var) and assigned:  # make SHELL='cmd' runs cmd for each recipe
                effects.append(Script(w._replace(text=assigned)))
    files = positionals[skip:]
    if spec.positional_at_files:  # http POST host field@FILE name=@FILE @FILE
        effects += [FileUse(w._replace(text=m.group(1)), "read") for w in files
                    if (m := re.match(r"[\w.\-\[\]]*(?::=|=)?@(.+)", w.text))]
        url = files[1] if len(files) > 1 and files[0].text.isupper() else \
            (files[0] if files else None)  # [METHOD] URL ITEMS...; `:3000/x` is localhost
        if url is not None and url.text[:1] != ":":
            effects.append(Reach(url))
        files = []
    if spec.not_file_re:
        files = [w for w in files if not re.match(spec.not_file_re, w.text)]
    if spec.git_paths and not flags & spec.file_opts:  # git show HEAD:.env, git log -- x
        dashdash = texts.index("--") if "--" in texts else len(texts)
        effects += [FileUse(args[i]._replace(text=path), "read")
                    for i in scan.positionals[skip:]
                    if (path := _git_path(texts[i], i > dashdash))]
        files = []
    elif spec.file_opts and not flags & spec.file_opts:
        files = []
    if spec.url_files:  # curl file:///etc/passwd
        effects += [FileUse(w._replace(text=_file_path(w.text)), "read")
                    for w in files if re.match(_URL_PATH, w.text)]
        urls = [*(w for w in files if not re.match(_URL_PATH, w.text)),
                *(args[o.at]._replace(text=o.value) for o in scan.options
                  if spec.risky.get(o.flag) == "url-read" and o.value is not None)]
        if len(urls) > 1:  # curl URL1 URL2: each is fetched; each judged as `curl URL`
            effects += [Command([Word(key[0]), url]) for url in urls]
        if key[0] == "curl" and not flags & {"-g", "--globoff"}:  # curl's own {a,b}, [1-3]
            globbed = [(url, curl_globbed(url.text)) for url in urls]
            effects += [Sensitive("a URL glob of too many alternatives")
                        for _, texts in globbed if texts is None][:1]
            urls = [url._replace(text=text) for url, texts in globbed for text in texts or ()]
        effects += [Reach(url) for url in urls]  # each a request to its host, as are the
        effects += [Reach(relay) for o in scan.options  # proxies and connect-to targets
                    if o.value is not None and (relay := _relay(o.flag, args[o.at], o.value))]
        files = []
    # tar -C DIR: the operands after it are relative to DIR (reported both ways)
    bases = [o.value for o in scan.options if spec.risky.get(o.flag) == "directory"
             and o.value is not None] if spec.risky else []
    if bases:
        files += [w._replace(text=f"{base.rstrip('/') or '/'}/{w.text}") for base in bases
                  for w in list(files) if not w.text.startswith(("/", "~"))]
    edit = bool(flags & spec.edit_opts)
    only_read = bool(flags & spec.read_opts)  # gzip -c: writes stdout, not the file
    links = bool(flags & spec.hardlink_opts) or bool(spec.symlink_opts
                                                   and not flags & spec.symlink_opts)
    for i, word in enumerate(files):
        var, eq, path = word.text.partition("=")
        if eq and var in spec.assign_files:
            effects.append(FileUse(word._replace(text=path), spec.assign_files[var]))
            continue
        access = spec.files
        if len(files) >= 2 and i == 0 and spec.first:
            access = spec.first
        if len(files) >= 2 and i == len(files) - 1 and spec.last:
            access = spec.last
        if access is not None:
            effects.append(FileUse(word, "edit" if edit else "read" if only_read else access))
            if access == "read" and links and not edit:
                effects.append(FileUse(word, "edit"))
    return effects


def _find_starts(texts: list[str], spec: ArgSpec) -> list[int]:
    """Indices of find's starting points: the words before its expression (one starting
    with ``-``, ``(``, ``)``, ``!`` or ``,``), after the leading options ``-H -L -P``,
    ``-O<n>`` and ``-D LIST`` (findutils 4.9 find(1) "SYNOPSIS")."""
    i = 0
    while i < len(texts) and texts[i].startswith("-") and texts[i] != "--" \
            and (texts[i] in ("-H", "-L", "-P", "-D") or texts[i].startswith(("-O", "-D"))):
        i += 2 if texts[i] in spec.value_opts else 1
    if i < len(texts) and texts[i] == "--":
        i += 1
    starts = []
    for j in range(i, len(texts)):
        if texts[j][:1] in ("-", "(", ")", "!", ","):
            break
        starts.append(j)
    return starts


def _unabbreviate(text: str, spec: ArgSpec) -> str:
    """GNU getopt accepts a long option cut to any unambiguous prefix (``--compress-prog``
    is ``--compress-program``): a prefix of 4 or more characters of an option this spec
    knows is read as that option (a risky one when several fit -- the fail-safe side);
    a shorter prefix, down to one letter (``--o`` is sort's ``--output``), only as a risky
    or program option."""
    name, eq, value = text.partition("=")
    if len(name) < 3 or name in spec.risky or name in spec.value_opts \
            or name in spec.optional_opts or name in spec.pair_opts:
        return text
    known: tuple[str, ...] = (*spec.risky, *spec.skip_opts, *spec.edit_opts)  # risky only
    if len(name) >= 6:
        known += (*spec.value_opts, *spec.optional_opts, *spec.edit_opts, *spec.pair_opts)
    fits = sorted({k for k in known if k.startswith(name) and k[:2] == "--"})
    if not fits:
        return text
    full = next((k for k in fits if k in spec.risky), fits[0])
    return full + eq + value


def _stdin_code(spec: ArgSpec, stdin: Stdin | None) -> list[Effect]:
    """A program reading commands in its own language from stdin (``sqlite3 db <<< SQL``):
    a static heredoc or here-string is checked like an argument; a pipe, or text with an
    expansion, holds commands only known when it runs."""
    if stdin is None or stdin.kind == "file":  # `< FILE`: read (its request), unanalysed
        return []
    if stdin.kind == "pipe" or stdin.dynamic or stdin.script is None \
            or "$" in stdin.script or "`" in stdin.script:
        return [Opaque("reads its commands from standard input, which is not static")]
    if spec.sensitive_re and re.search(spec.sensitive_re, stdin.script):
        return [Sensitive(stdin.script.strip()), *_sql_shell(stdin.script)]
    return []


@cache
def _sql_escape() -> re.Pattern[str]:
    """A database shell's command that runs a shell command: sqlite3/duckdb ``.shell`` and
    ``.system``; psql and mysql ``\\! CMD``; mysql ``system CMD``; psql ``\\copy``/SQL
    ``COPY … (TO|FROM) PROGRAM 'CMD'``; sqlite3 ``.once``/``.output |CMD`` (a pipe)."""
    return re.compile(r"(?im)^\s*\.(?:shell|system)\s+(.+)$|\\!\s*(.+)$"
                      r"|(?:^|;)\s*system\s+(.+)$|\bprogram\s+'((?:[^']|'')*)'"
                      r"|^\s*\.(?:once|output)\s+(?:-\w+\s+)*['\"]?\|\s*([^'\"\n]+)")


def _sql_shell(text: str) -> list[Effect]:
    """The shell commands a database shell's ``text`` runs (judged as scripts)."""
    found: list[Effect] = [Script(Word(next(g for g in m.groups() if g is not None).replace("''", "'")))
                           for m in _sql_escape().finditer(text)]
    return found[:8]


def _detach(args: list[Word], texts: list[str], spec: ArgSpec
            ) -> tuple[list[Word], list[str]]:
    """``-oFILE`` → ``-o FILE`` for each of the spec's ``attached_opts`` (the longest
    prefix first); a word that is itself an option of the spec stays whole."""
    prefixes = sorted(spec.attached_opts, key=len, reverse=True)
    known = spec.value_opts | spec.optional_opts | spec.pair_opts | frozenset(spec.risky)
    out_args: list[Word] = []
    out_texts: list[str] = []
    value_next = False  # the word is the value of the option before it (-Xclang -load)
    for word, text in zip(args, texts, strict=True):
        prefix = next((p for p in prefixes if text.startswith(p) and len(text) > len(p)), None)
        taken, value_next = value_next, text in spec.value_opts
        if prefix is None or taken or text in known or text.partition("=")[0] in known:
            out_args.append(word)
            out_texts.append(text)
            continue
        out_args += [word._replace(text=prefix), word._replace(text=text[len(prefix):])]
        out_texts += [prefix, text[len(prefix):]]
    return out_args, out_texts


def _git_path(text: str, after_dashdash: bool) -> str | None:
    """The file a git operand reads, if any: a path after ``--``, the PATH of
    ``REV:PATH`` / ``:PATH`` / ``:N:PATH``, or a word that looks like a path."""
    if after_dashdash:
        return text
    rev, colon, path = text.partition(":")
    if colon and "/" not in rev[:1]:
        path = path[2:] if re.match(r"[0-3]:", path) else path
        return path or None
    if "." in text.replace("..", "") or text[:1] in ("/", "~") or "/" in text:
        return text
    return None


def _until_terminator(words: list[Word], start: int) -> list[Word]:
    """The command after ``find -exec`` (at ``start``): up to ``;`` (or ``+`` right after
    ``{}``)."""
    for i in range(start, len(words)):
        if words[i].text == ";" or (words[i].text == "+" and i > start
                                    and words[i - 1].text == "{}"):
            return words[start:i]
    return words[start:]


def _file_path(url: str) -> str:
    """The file a ``file:`` URL reads, as curl 7.88 reads it: ``file:///etc/passwd``,
    ``file:/etc/passwd``, ``file://localhost/…`` and ``file://127.0.0.1/…`` all read
    ``/etc/passwd``; ``%xx`` escapes are decoded and a query or fragment is dropped."""
    from urllib.parse import unquote  # only for file: URLs: keep start-up light

    rest = re.sub(_URL_PATH, "", url, count=1)
    if rest.startswith("//"):  # an authority: the path starts at the next slash
        slash = rest.find("/", 2)
        rest = rest[slash:] if slash >= 0 else "/"
    return unquote(re.split(r"[?#]", rest, maxsplit=1)[0]) or "/"


def _at_file(value: str) -> str | None:
    """The file in a curl data value: ``@FILE``, ``name=@FILE;type=x``, ``name=<FILE``."""
    for mark in "@<":
        if mark in value:
            return value.split(mark, 1)[1].split(";", 1)[0] or None
    return None


@cache
def _command_keys(program: str) -> re.Pattern[str] | None:
    keys = COMMAND_SETTINGS.get(program)
    return re.compile(keys) if keys else None


def runs_setting(key: str, program: str = "git") -> bool:
    """Is ``program``'s setting ``key`` a command it runs (``COMMAND_SETTINGS``)?"""
    keys = _command_keys(program)
    return keys is not None and keys.fullmatch(key.lower()) is not None


def setting_command(program: str, key: str, value: str) -> str | None:
    """The command ``program`` runs for its setting ``key`` set to ``value`` (a git
    ``!`` alias; a TOML string or array of strings for cargo), or None."""
    key = key.lower()
    if program == "git" and key.startswith("alias."):
        return value[1:] or None if value.startswith("!") else None
    if not runs_setting(key, program):
        return None
    quoted = re.findall(r"\"((?:\\.|[^\"])*)\"|'([^']*)'", value) if program == "cargo" else []
    command = " ".join(a or b for a, b in quoted) if quoted else value.lstrip("!")
    return command or None


@cache
def _make_assignment() -> re.Pattern[str]:
    """A variable set on make's command line, with any of its assignment operators (GNU
    make 4.3 manual, "Setting Variables": ``=``, ``:=``, ``::=``, ``:::=``, ``+=``, ``?=``,
    ``!=``): its name and value."""
    return re.compile(r"([A-Za-z_.][\w.-]*)\s*(?::{1,3}|[+?!])?=(.*)", re.S)


#: curl(1) 7.88 options whose value is another host the request goes through: proxies
#: (``-x``, ``--preproxy``, the SOCKS ones), a DNS-over-HTTPS server; ``--connect-to
#: H1:P1:H2:P2`` and ``--resolve HOST:PORT:ADDR`` send it to H2 or ADDR.
_RELAYS = frozenset({"-x", "--proxy", "--preproxy", "--socks4", "--socks4a", "--socks5",
                     "--socks5-hostname", "--proxy1.0", "--doh-url"})


MAX_GLOBBED = 64  # URLs one curl glob is read as: past it, each part's first alternatives


def curl_globbed(url: str) -> list[str] | None:
    """The URLs curl makes of one with its globbing (curl(1) "URL": ``{one,two}`` sets
    and ``[a-z]``, ``[1-10:2]`` ranges, any part of the URL, the host too; ``\\``
    escapes one): every combination, or past MAX_GLOBBED each alternative once, with the
    first alternative of every other part (a range is read to MAX_GLOBBED values); None
    past 4 * MAX_GLOBBED alternatives in all."""
    if "{" not in url and "[" not in url:
        return [url]
    parts: list[list[str]] = []
    literal, i = "", 0
    while i < len(url):
        char = url[i]
        if char == "\\" and i + 1 < len(url):
            literal, i = literal + url[i + 1], i + 2
            continue
        close = url.find("}" if char == "{" else "]", i) if char in "{[" else -1
        if close < 0:
            literal, i = literal + char, i + 1
            continue
        body = url[i + 1:close]
        choices = body.split(",") if char == "{" else _curl_range(body)
        if char == "[" and not choices:  # an IPv6 address or no range: as written
            literal, i = literal + url[i:close + 1], close + 1
            continue
        parts += [[literal], choices]
        literal, i = "", close + 1
        if len(parts) + sum(len(choices) for choices in parts[1::2]) > 4 * MAX_GLOBBED:
            return None  # too many to read one by one
    parts.append([literal])
    count = 1
    for choices in parts:
        count *= len(choices)
    if count <= MAX_GLOBBED:
        found = [""]
        for choices in parts:
            found = [f + c for f in found for c in choices]
        return list(dict.fromkeys(found))
    # too many: each alternative once, with the first of every other part
    firsts = [choices[0] for choices in parts]
    return list(dict.fromkeys("".join([*firsts[:at], choice, *firsts[at + 1:]])
                              for at, choices in enumerate(parts) for choice in choices))


def _curl_range(body: str) -> list[str]:
    """A curl range's alternatives (``a-z``, ``1-10``, ``001-100:10``), at most
    MAX_GLOBBED; none when ``body`` is no range."""
    m = re.fullmatch(r"([a-zA-Z])-([a-zA-Z])(?::(\d+))?|(\d+)-(\d+)(?::(\d+))?", body)
    if m is None:
        return []
    if m.group(1):
        step = int(m.group(3) or 1) or 1
        return [chr(c) for c in range(ord(m.group(1)), ord(m.group(2)) + 1, step)][:MAX_GLOBBED]
    start, end, step = int(m.group(4)), int(m.group(5)), int(m.group(6) or 1) or 1
    width = len(m.group(4)) if m.group(4)[:1] == "0" else 0
    values = range(start, min(end, start + step * MAX_GLOBBED) + 1, step)
    return [str(v).zfill(width) for v in values]


def _relay(flag: str, word: Word, value: str) -> Word | None:
    """The host an option of a network client names, or None."""
    if flag in _RELAYS:
        return word._replace(text=value)
    if flag == "--connect-to" and value.count(":") >= 3:
        return word._replace(text=value.split(":", 2)[2].rpartition(":")[0])
    if flag == "--resolve" and value.count(":") >= 2:
        return word._replace(text=value.split(":", 2)[2])
    return None


@cache
def _escape_re() -> re.Pattern[str]:
    """An editor's or pager's shell escape: ``!CMD``, ``:!CMD``, ``:silent !CMD``,
    ``:r !CMD``, ``:w !CMD`` (vim's ``:help :!``, less(1) ``! shell-command``)."""
    return re.compile(r"\s*:*\s*(?:(?:sil(?:ent)?!?|r(?:ead)?|w(?:rite)?)\s*)?!(.+)", re.S)


def _shell_escape(command: str) -> str | None:
    """The shell command an editor or pager command runs, or None."""
    found = _escape_re().match(command)
    return found.group(1) if found else None


@cache
def _ssh_command() -> re.Pattern[str]:
    """An ssh_config(5) option whose value is a command run locally through the shell."""
    return re.compile(r"(?is)\s*(?:proxycommand|localcommand|knownhostscommand)\s*[= ]\s*(.+)")
