"""Wrappers: programs that run another command (``sudo``, ``timeout``, ``uv run`` ...).

:func:`wrapper_lookup` finds a command's :class:`~.Wrapper` (global options may sit
between its key words); :func:`unwrap` reads the wrapper's own options with
:func:`~.flags.scan_options` and returns where its words end and an
:class:`~.records.Outcome`: the command it runs (a :class:`~.records.Command`, with risky
assignments and a directory when it sets them), the scripts it runs (``su -c``,
``flock -c``, ``ssh host CMD``) or, for ``sudo -s``-like wrappers given no command, the
shell script read from stdin. Pure: the judge applies the outcome.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

from dm_cc.permissions.shell.flags import Option, scan_options
from dm_cc.permissions.shell.programs import stdin_shell
from dm_cc.permissions.shell.quoting import Word, is_assignment, joined
from dm_cc.permissions.shell.records import Command, Effect, Outcome, Script, Stdin
from dm_cc.permissions.shell.tables import first_words, lookup
from dm_cc.permissions.shell.tables.environment import risky_env
from dm_cc.permissions.shell.tables.wrappers import STDIN_SHELL_WRAPPERS, WRAPPERS, Wrapper

_LOOSE_KEYS: dict[str, list[tuple[str, ...]]] = {}
for _key in WRAPPERS:
    if len(_key) > 1:
        _LOOSE_KEYS.setdefault(_key[0], []).append(_key)
_LOOSE_SPAN = 6  # option words (and values) tolerated before each subcommand word
_HEADS = first_words(WRAPPERS)
_RANGES = tuple(tuple(range(n)) for n in range(4))


def wrapper_lookup(texts: Sequence[str]) -> tuple[tuple[str, ...], Wrapper | None,
                                                   Sequence[int]]:
    """The wrapper for ``texts`` and the indices of its key words.

    Global options may sit between the program and its subcommand words (``kubectl -n prod
    exec``, ``uv -q run``, ``docker compose -f f.yml exec``): option words, and a possible
    value after each, are skipped. A false match only adds a request, so this errs wide.
    """
    if not texts or texts[0] not in _HEADS:
        return (), None, _RANGES[0]
    key, spec = lookup(WRAPPERS, texts)
    if not texts or texts[0] not in _LOOSE_KEYS or not any(t[:1] == "-" for t in texts[1:3]):
        return key, spec, _RANGES[len(key)]
    best: tuple[tuple[str, ...], Sequence[int]] = (key, _RANGES[len(key)])
    for candidate in _LOOSE_KEYS[texts[0]]:
        if len(candidate) <= len(best[0]):
            continue
        found, pos = [0], 1
        for part in candidate[1:]:
            j = pos
            while j < len(texts) and j < pos + _LOOSE_SPAN:
                t = texts[j]
                if t == part:
                    break
                option = len(t) > 1 and t[0] == "-" and t != "--"
                value = j > pos and texts[j - 1][:1] == "-" and "=" not in texts[j - 1]
                if not (option or value):
                    j = len(texts)
                    break
                j += 1
            if j >= len(texts) or texts[j] != part:
                break
            found.append(j)
            pos = j + 1
        else:
            best = (candidate, found)
    if best[0] == key:
        return key, spec, best[1]
    return best[0], WRAPPERS[best[0]], best[1]


@cache
def _long_options(spec: Wrapper) -> tuple[str, ...]:
    """The wrapper's long options this table knows, those that run a script first."""
    runs = sorted(o for o in spec.string_opts | spec.command_opts | spec.program_opts
                  if o[:2] == "--")
    rest = (spec.value_opts | spec.pair_opts | spec.optional_opts | spec.command_flags
            | spec.query_opts | spec.chdir_opts | spec.env_opts)
    return (*runs, *sorted(o for o in rest if o[:2] == "--" and o not in runs))


def _unabbreviate(text: str, spec: Wrapper) -> str:
    """GNU getopt (env, nice, timeout, sudo, flock, su ...) accepts a long option cut to
    any unambiguous prefix: ``--comm=x`` is ``--command=x``. A prefix of an option the
    table knows is read as it (one that runs a script when several fit)."""
    name, eq, value = text.partition("=")
    known = _long_options(spec)
    if len(name) < 3 or name in known:
        return text
    full = next((o for o in known if o.startswith(name)), None)
    return text if full is None else full + eq + value


def unwrap(key: tuple[str, ...], spec: Wrapper, words: list[Word], where: Sequence[int],
           stdin: Stdin | None) -> tuple[int, Outcome]:
    """What a wrapper runs, and where the wrapper's own words end. ``where`` are the
    indices of its key words in ``words``: global options between them are left out,
    but one naming the directory the command runs in (``pnpm -C DIR exec``, ``uv
    --directory DIR run``) is kept as that directory."""
    inner = [words[i] for i in where] + words[where[-1] + 1:]
    between = [words[i] for i in range(where[-1] + 1) if i not in where]
    stop, ran, effects = _runs(key, spec, inner, stdin, _global_place(between, spec))
    stop += where[-1] + 1 - len(key)
    if not ran and len(key) == 1 and key[0] in STDIN_SHELL_WRAPPERS:
        shell = stdin_shell(stdin)  # sudo -s <<< CMD: a shell reading stdin
        return stop, Outcome(shell.note, (*effects, *shell.effects))
    return stop, Outcome(None, tuple(effects))


def _global_place(between: Sequence[Word], spec: Wrapper) -> Word | None:
    """The directory a global option between the key words names (``-C DIR``,
    ``--dir=DIR``), when it is one of the wrapper's ``chdir_opts``."""
    place = None
    for i, word in enumerate(between):
        name, eq, value = word.text.partition("=")
        if name in spec.chdir_opts:
            if eq:
                place = word._replace(text=value)
            elif i + 1 < len(between):
                place = between[i + 1]
    return place


def _command_at(spec: Wrapper, texts: Sequence[str], end: int) -> int:
    """Where the command starts once the options end at ``end``: after assignments,
    positionals and options that may follow them (as :func:`_runs` reads them)."""
    start = end
    while spec.assignments and start < len(texts) and is_assignment(texts[start]):
        start += 1
    start += spec.positionals
    while spec.reopts and start < len(texts):
        if texts[start] == "--":
            return start + 1
        if len(texts[start]) < 2 or texts[start][0] != "-":
            break
        start += 2 if texts[start] in spec.value_opts else 1
    return start


_MAX_READINGS = 4  # options whose other reading is tried (each costs one more scan)


def _other_readings(spec: Wrapper, texts: Sequence[str], options: Sequence[Option],
                    start: int) -> list[int]:
    """Where the command starts if one option is read the other way: one the table says
    takes a value as a flag, any other as taking the next word as its value. The table
    follows each wrapper's documentation, but a version, a platform or an option it does
    not list may read otherwise (``sudo -Q make rm x``): each other start is offered to
    the deny rules (fail closed: a deny holds under every reading; an allow is judged
    on the documented reading, or every ordinary ``sudo -E cmd`` would ask)."""
    values = spec.value_opts | spec.string_opts
    starts: list[int] = []
    for option in dict.fromkeys(o.flag for o in options[:_MAX_READINGS]):
        if option in spec.query_opts or option in spec.command_opts:
            continue
        toggled = values - {option} if option in values else values | {option}
        scan = scan_options(texts, value_opts=toggled, pair_opts=spec.pair_opts,
                            optional_opts=spec.optional_opts - {option},
                            stop_opts=spec.command_opts, stop_at_positional=True,
                            lone_dash_option=spec.lone_dash)
        other = _command_at(spec, texts, scan.end)
        if other != start and other < len(texts) and texts[other][:1] != "-":
            starts.append(other)
    return starts


def _runs(key: tuple[str, ...], spec: Wrapper, words: list[Word], stdin: Stdin | None,
          outer_place: Word | None = None) -> tuple[int, bool, list[Effect]]:
    """(where the wrapper's words end, whether it runs anything, what it runs)."""
    base = len(key)
    args = words[base:]
    texts = [_unabbreviate(w.text, spec) if w.text[:2] == "--" else w.text for w in args]
    scan = scan_options(texts, value_opts=spec.value_opts | spec.string_opts,
                        pair_opts=spec.pair_opts, optional_opts=spec.optional_opts,
                        stop_opts=spec.command_opts, stop_at_positional=spec.rest != "none",
                        lone_dash_option=spec.lone_dash)
    flags = {o.flag for o in scan.options}
    strings = [args[o.at]._replace(text=o.value) for o in scan.options
               if o.flag in spec.string_opts and o.value is not None]
    effects: list[Effect] = [Script(w) for w in strings] if not flags & spec.home_opts else [
        # su - USER -c CMD: CMD runs in the user's home, a directory unknown here
        Command([w._replace(text="sh"), w._replace(text="-c"), w], chdir=Word("~", expand=True))
        for w in strings]
    ran = bool(effects)
    end = scan.end
    if flags & spec.query_opts:
        return base + end, True, effects
    if flags & spec.command_opts:
        return base + end, True, [*effects, Command(args[end:], stdin)]
    if spec.rest == "none":
        if flags & spec.command_flags:  # runuser -u USER [--] CMD
            first = texts.index("--") + 1 if "--" in texts else (scan.positionals or [end])[0]
            effects.append(Command(args[first:], stdin))
            ran = ran or first < len(args)
        return base + end, ran, effects
    after_dashdash = end > 0 and texts[end - 1] == "--"
    env: list[tuple[str, Word]] = []
    for opt in scan.options:  # systemd-run -E NAME=VALUE, run0 --setenv=NAME=VALUE
        if opt.flag in spec.env_opts and opt.value is not None:
            var = opt.value.split("=", 1)[0]
            if risky_env(var):
                env.append((var, args[opt.at]._replace(text=opt.value)))
    start = end
    while spec.assignments and start < len(args) and is_assignment(args[start].text):
        var, _, value = args[start].text.partition("=")
        if risky_env(var):
            env.append((var, args[start]))
        if var.startswith("BASH_FUNC_"):  # an exported function: its body runs later
            effects.append(Script(args[start]._replace(text="f" + value)))
        start += 1
    start += spec.positionals
    while spec.reopts and start < len(args):  # ssh host -t -p 22 CMD
        text = args[start].text
        if text == "--":
            start += 1
            break
        if len(text) < 2 or text[0] != "-":
            break
        start += 2 if text in spec.value_opts else 1
    rest = args[start:]
    if len(rest) >= 2 and rest[0].text in spec.string_opts:  # flock FILE -c CMD
        return base + end, True, [*effects, Script(rest[1])]
    mode = "command" if flags & spec.command_flags else spec.rest
    if mode == "dashdash" and not after_dashdash and "--" in texts[end:]:
        rest = args[texts.index("--", end) + 1:]
    cut = next((i for i, w in enumerate(rest) if w.text in spec.stop_words), len(rest))
    rest = rest[:cut]
    direct = bool(rest) and start < len(args) and rest[0] is args[start]  # read after options
    ran = ran or bool(rest)
    programs = [o for o in scan.options if o.flag in spec.program_opts and o.value is not None]
    if programs:  # coreutils --coreutils-prog=rm -rf x: rm -rf x (its options are rm's)
        chosen = programs[-1]
        rest = [args[chosen.at]._replace(text=chosen.value or ""), *args[chosen.at + 1:]]
        ran = True
    if spec.stdin_args and stdin is not None and stdin.script is not None and (
            stdin.kind in ("heredoc", "herestring") and not stdin.dynamic
            or stdin.kind == "pipe"):  # xargs cat <<< FILE, echo FILE | xargs cat
        rest = [*(rest or [Word("echo")]), *(Word(part) for part in stdin.script.split())]
        stdin = None
    if mode in ("command", "dashdash"):  # env -C DIR CMD: CMD runs in DIR
        places = [args[o.at]._replace(text=o.value) for o in scan.options
                  if o.flag in spec.chdir_opts and o.value is not None]
        if flags & spec.home_opts:  # sudo -i CMD: in the target user's home, unknown here
            places.append(Word("~", expand=True))
        place = places[-1] if places else outer_place
        effects.append(Command(rest, stdin, tuple(env), chdir=place))
        if direct and not programs:
            effects += [Command(args[other:], guess=f"{key[-1]} may run it, if its options "
                                                   "read otherwise")
                        for other in _other_readings(spec, texts, scan.options, start)]
    elif mode == "script" and rest:
        effects.append(Script(joined(rest)))
    elif mode == "shell-args" and after_dashdash and rest:  # capsh -- -c CMD: bash -c CMD
        effects.append(Command([rest[0]._replace(text="bash"), *rest], stdin))
    elif mode == "scripts":
        effects += [Script(word) for word in rest]
    return base + end, ran, effects
