"""What a command leaves behind for the rest of its line: where it may have made links.

Two kinds, read from a command's words (pure: the judge keeps the line's state):

* :func:`landing` -- a program that writes entries whose names the line does not show
  (an archive extracted, a patch applied, a branch checked out, a tree copied): the
  directories they land in (``tables.planting``). Any of them may be a symlink.
* :func:`made_links` -- ``ln``, ``cp -s``/``-l``, ``link``: the names it makes and what
  each is a second name of (a symlink's target from the link's directory; a hard link's
  source as written, whose reads and writes are the source's).
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence

from dm_cc.permissions.shell.flags import scan_options
from dm_cc.permissions.shell.quoting import Word
from dm_cc.permissions.shell.tables.arguments import ArgSpec
from dm_cc.permissions.shell.tables.planting import Plants

# ln(1) and cp(1) (coreutils 9.1): options that take a value, and those that make links
_LINK_VALUES = frozenset({"-t", "--target-directory", "-S", "--suffix"})
_SYMBOLIC = frozenset({"-s", "--symbolic", "--symbolic-link"})
_HARD = frozenset({"-l", "--link"})


def landing(key: tuple[str, ...], plants: Plants, spec: ArgSpec | None,
            words: Sequence[Word]) -> list[Word]:
    """Where ``words`` (a command of ``plants``'s program) leaves new entries: the
    directories as written (``.`` for the working directory); none when it writes none."""
    args = list(words[len(key):])
    texts = [w.text for w in args]
    if key[0] in ("tar", "gtar", "bsdtar") and texts and texts[0][:1] not in ("-", ""):
        texts[0] = "-" + texts[0]  # old-style bundled mode: tar xzf a.tgz
    scan = scan_options(texts, value_opts=(spec.value_opts | _LINK_VALUES) if spec else
                        _LINK_VALUES, pair_opts=spec.pair_opts if spec else (),
                        optional_opts=spec.optional_opts if spec else ())
    flags = {o.flag for o in scan.options}
    if plants.into == "nowhere" or _given(flags, plants.listing) or \
            (plants.modes and not _given(flags, plants.modes)):
        return []
    here = Word(".")
    named = [args[o.at]._replace(text=o.value) for o in scan.options
             if o.flag in plants.directory and o.value is not None]
    if named:
        return named
    positionals = [args[i] for i in scan.positionals]
    if plants.into == "last":
        return positionals[-1:] if len(positionals) > 1 else [here]
    if plants.into == "operand" and plants.operand < len(positionals):
        return [positionals[plants.operand]]
    if plants.into == "operand" and plants.default is not None:
        return [here._replace(text=plants.default)]
    return [here]


def _given(flags: set[str], options: frozenset[str]) -> bool:
    """Whether one of ``options`` is among ``flags``, a GNU long option also when cut to
    a prefix of 4 or more characters (``--extr`` is ``--extract``)."""
    return bool(flags & options) or any(
        len(flag) >= 4 and flag[:2] == "--" and option.startswith(flag)
        for flag in flags for option in options)


def made_links(name: str, words: Sequence[Word]) -> list[tuple[Word, str | None]]:
    """The names ``ln``/``cp -s``/``cp -l``/``link`` makes, each with the path it is a
    second name of (None when that is not static). ``ln`` without ``-s`` makes hard
    links (ln(1)); ``ln -t DIR SRC`` and ``ln SRC… DIR`` make ``DIR/basename(SRC)``,
    ``ln SRC`` makes ``./basename(SRC)``; a destination that may be an existing
    directory is named both ways."""
    texts = [w.text for w in words[1:]]
    scan = scan_options(texts, value_opts=_LINK_VALUES)
    flags = {o.flag for o in scan.options}
    symbolic = bool(flags & _SYMBOLIC)
    if name == "cp" and not symbolic and not flags & _HARD:
        return []
    operands = [words[1 + i] for i in scan.positionals]
    into = [words[1 + o.at]._replace(text=o.value) for o in scan.options
            if o.flag in ("-t", "--target-directory") and o.value is not None]
    if into:
        sources, destination = operands, into[-1]
    elif len(operands) >= 2:
        sources, destination = operands[:-1], operands[-1]
    elif operands:
        sources, destination = operands, Word(".")
    else:
        return []
    found: list[tuple[Word, str | None]] = []
    for source in sources:
        base = posixpath.basename(source.text.rstrip("/")) or source.text
        names = [destination._replace(text=base if destination.text == "." else
                                      posixpath.join(destination.text, base))]
        if not into and len(sources) == 1 and destination.text != ".":
            names.append(destination)  # LINK itself, unless it is an existing directory
        found += [(link, _reached(link.text, source, symbolic)) for link in names]
    return found


def _reached(link: str, source: Word, symbolic: bool) -> str | None:
    """What ``link`` is a second name of: a symlink's target from the link's directory,
    a hard link's source as written; None when that is not static."""
    if source.expand or source.glob or not source.text:
        return None
    return _link_target(link, source.text) if symbolic else source.text.rstrip("/") or "/"


def _link_target(link: str, target: str) -> str | None:
    """Where ``ln -s TARGET LINK`` points, as a path from here (None when unknown)."""
    if "$" in target or "`" in target:
        return None
    if target.startswith(("/", "~")):
        return target.rstrip("/") or target
    base = link.rsplit("/", 1)[0] if "/" in link else "."
    return f"{base}/{target}".rstrip("/")
