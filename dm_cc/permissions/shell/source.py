"""Bash source text before parsing: what bash does to it first, and the parser call.

:func:`join_continuations` deletes every backslash-newline bash removes before tokenising
and rewrites ``<<-`` heredocs as ``<<`` with the body's leading tabs removed (a small
quote-aware scanner); :func:`syntax_tree` parses with tree-sitter-bash, masking non-ASCII
bytes first. The first stage of the pipeline: the judge (:mod:`.judge`) calls both on every
(re-)parsed script, and hands the tree to the walk (:mod:`.walk`).
"""

from __future__ import annotations

import re
from functools import cache
from typing import TYPE_CHECKING, NamedTuple

from dm_cc.permissions.shell.quoting import ansi_c

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

_ASCII_ONLY = bytes(range(128)) + b"x" * 128


_META = frozenset(" \t\n;&|()<>")
_PLAIN_RUN = r"[^\\'\"#()$<\n`\s;&|>{]*"
# after a character that does not end a word a `{` is ordinary too (only a word-initial
# `{` is rewritten; after `"` each character is read on its own): `{{{…` copied in one go
_PLAIN_RUN_IN_WORD = r"[^\\'\"#()$<\n`\s;&|>]*"
# the characters the scanner's branches look at (besides a backslash): any other is
# ordinary, copied with the run that follows it
_BRANCHING = frozenset("'$\"#(){}];<\n")


def _heredoc_word(text: str, i: int) -> tuple[str, bool, int]:
    """The delimiter after ``<<``/``<<-`` at ``i``: (unquoted text, quoted?, end)."""
    n = len(text)
    while i < n and text[i] in " \t":
        i += 1
    out: list[str] = []
    quoted = False
    while i < n and text[i] not in _META:
        ch = text[i]
        if ch == "$" and text.startswith(("$'", '$"'), i):  # $'..' decoded, $".." as ".."
            i += 1
            if text[i] == "'":
                end = i + 1
                while end < n and text[end] != "'":
                    end += 2 if text[end] == "\\" else 1
                out.append(ansi_c(text[i + 1:end]))
                quoted, i = True, end + 1
                continue
            ch = text[i]
        if ch in "'\"":
            end = text.find(ch, i + 1)
            end = n if end < 0 else end
            out.append(text[i + 1:end])
            quoted, i = True, end + 1
        elif ch == "\\":
            out.append(text[i + 1:i + 2])
            quoted, i = True, i + 2
        else:
            out.append(ch)
            i += 1
    return "".join(out), quoted, i


_WORD_END = (" ", "\t", "\n", ";", "&", "|", "(", ")", "<", ">")
_BRACE_END = (" ", "\t", "\n", "}")


@cache
def _rewrite_needed() -> re.Pattern[str]:
    """What the scanner rewrites besides continuations and heredocs: an empty ``$()`` or a
    word-initial ``{`` that is not a group (a quick test before the full scan)."""
    return re.compile(r"\$\([ \t]*\)|(?:^|[\s;&|()<>])\{[^\s}]")


def _drop_descriptor(out: list[str], text: str, i: int) -> list[str]:
    """``out`` without a descriptor number written right before the operator at ``i``.

    tree-sitter cannot read ``sh 0<<EOF`` or ``bash /dev/fd/3 3<<< CODE``; the walk treats a
    heredoc or here-string on any descriptor as the command's input anyway."""
    k = i
    while k > 0 and text[k - 1].isdigit():
        k -= 1
    if k == i or (k > 0 and text[k - 1] not in _META):
        return out
    written = "".join(out)
    return [written[:len(written) - (i - k)]]


@cache
def _empty_sub() -> re.Pattern[str]:
    return re.compile(r"\$\([ \t]*\)")


@cache
def _named_fd() -> re.Pattern[str]:
    """``{fd}>file``: a redirect that names a descriptor variable, not brace expansion."""
    return re.compile(r"\{\w+\}[<>]")


@cache
def _plain_delimiter() -> re.Pattern[str]:
    return re.compile(r"[\w.,:@%+=/-]+")


def join_continuations(text: str) -> str:
    """``text`` with every backslash-newline that bash deletes before tokenising removed.

    bash removes ``\\<newline>`` everywhere except inside single quotes (and ``$'..'``),
    comments and heredoc bodies with a quoted delimiter, so ``r\\<newline>m -rf x`` runs
    ``rm``. A small quote-aware scanner (``$( )`` nesting, comments, heredocs, ``(( ))``).
    ``<<-`` heredocs are rewritten as ``<<`` with the body's leading tabs removed (what bash
    reads), which tree-sitter-bash otherwise mis-parses.
    """
    if "\\\n" not in text and "<<" not in text and (
            ("{" not in text and "$(" not in text) or _rewrite_needed().search(text) is None):
        return text
    return _scan(text)


class HeredocBody(NamedTuple):
    """A here-document's body in a command line, by line (``text.split("\\n")``):
    lines ``first`` to ``end - 1`` are its data; line ``end`` is its delimiter, when
    ``closed`` (an unclosed one is read to the end of the input: ``end`` is past the
    last line)."""

    first: int
    end: int
    closed: bool


def heredoc_bodies(text: str) -> list[HeredocBody]:
    """Where the here-document bodies of ``text`` are, as bash reads them: the same scan
    the analysis parses after (:func:`join_continuations`), so what a person is shown as
    data is what was judged as data. For display only; [] when there is none."""
    if "<<" not in text:
        return []
    bodies: list[tuple[int, int, bool]] = []
    _scan(text, bodies)
    lines = text.count("\n") + 1
    return [HeredocBody(text.count("\n", 0, start),
                        text.count("\n", 0, end) if closed else lines, closed)
            for start, end, closed in bodies]


def _scan(text: str, bodies: list[tuple[int, int, bool]] | None = None) -> str:
    """:func:`join_continuations`' scanner; ``bodies`` collects each here-document's
    (start of its body, start of its delimiter line, closed?) offsets in ``text``."""
    plain_run = re.compile(_PLAIN_RUN).match  # (re keeps the compiled pattern)
    plain_run_in_word = re.compile(_PLAIN_RUN_IN_WORD).match
    out: list[str] = []
    n, i = len(text), 0
    # per $( ) level: [paren depth, arithmetic depth, ${ }/$[ ] depth] (`<<` inside the
    # last two is a shift, not a heredoc: `echo $[1<<2]`, `${a[1<<0]}`)
    stack: list[list[int]] = [[0, 0, 0]]
    dquote: list[int] = []  # stack sizes at which a double-quoted string was opened
    # heredocs: (delimiter, strip tabs, quoted, delimiter as written for the parser)
    pending: list[tuple[str, bool, bool, str]] = []
    prev = "\n"
    while i < n:
        ch = text[i]
        if ch == "\\":
            if text.startswith("\n", i + 1):
                i += 2
                continue
            out.append(text[i:i + 2])
            prev, i = "x", i + 2
            continue
        in_dq = bool(dquote) and dquote[-1] == len(stack)
        if in_dq:
            if ch == '"':
                dquote.pop()
            elif text.startswith("$(", i) and not text.startswith("$((", i):
                stack.append([0, 0, 0])
                out.append("$(")
                prev, i = "(", i + 2
                continue
            out.append(ch)
            prev, i = ch, i + 1
            continue
        top = stack[-1]
        if ch not in _BRANCHING:
            pass  # (an ordinary character: copied with the run below)
        elif ch == "'" or text.startswith("$'", i):
            start = i + (2 if ch == "$" else 1)
            j = start
            while j < n and text[j] != "'":
                j += 2 if ch == "$" and text[j] == "\\" else 1
            out.append(text[i:j + 1])
            prev, i = "'", j + 1
            continue
        elif ch == '"':
            dquote.append(len(stack))
        elif ch == "#" and prev in _META:
            end = text.find("\n", i)
            end = n if end < 0 else end
            out.append(text[i:end])
            prev, i = "#", end
            continue
        elif text.startswith("((", i) or text.startswith("$((", i):
            step = 2 if ch == "(" else 3
            top[1] += 1
            out.append(text[i:i + step])
            prev, i = "(", i + step
            continue
        elif text.startswith(("${", "$["), i):
            top[2] += 1
            out.append(text[i:i + 2])
            prev, i = "x", i + 2
            continue
        elif top[2] and ch in "}]":
            top[2] -= 1
        elif top[1] and text.startswith("))", i):
            top[1] -= 1
            out.append("))")
            prev, i = ")", i + 2
            continue
        elif text.startswith("$(", i) and (m := _empty_sub().match(text, i)) and (
                prev not in _META or not text.startswith(_WORD_END, m.end())):
            out.append("''")  # `r$()m`: an empty substitution inside a word splices it
            prev, i = "'", m.end()
            continue
        elif ch == "{" and prev in _META and not top[1] and not text.startswith(_BRACE_END, i + 1) \
                and not _named_fd().match(text, i):
            out.append('""{')  # `{rm,-rf,x}` is a word (brace expansion), not a group
            prev, i = "{", i + 1
            continue
        elif ch == ";" and pending and not text.startswith((";;", ";&"), i) and not top[1]:
            out.append(" && ")  # `cat <<EOF; rm x`: tree-sitter cannot read `;` after a heredoc
            prev, i = ";", i + 1
            continue
        elif text.startswith("$(", i):
            stack.append([0, 0, 0])
            out.append("$(")
            prev, i = "(", i + 2
            continue
        elif ch == "(":
            top[0] += 1
        elif ch == ")":
            if top[0]:
                top[0] -= 1
            elif len(stack) > 1:
                stack.pop()
        elif text.startswith("<<<", i):
            out = _drop_descriptor(out, text, i)
            out.append("<<<")  # a here-string, not a heredoc
            prev, i = "<", i + 3
            continue
        elif text.startswith("<<", i) and not top[1] and not top[2]:
            out = _drop_descriptor(out, text, i)
            strip = text.startswith("<<-", i)
            delim, quoted, end = _heredoc_word(text, i + (3 if strip else 2))
            # `<<-` strips leading tabs from the body: done here, so the parser sees `<<`.
            # The delimiter is written the one way tree-sitter reads like bash: a plain word,
            # single-quoted when any of it was quoted (`<<E\\OF`, `<<"EOF"x`, `<<$'EOF'`
            # are `<<'EOF'`, `<<'EOFx'`, `<<'EOF'`); a delimiter that is not a plain word
            # (`<<''`, `<<'E F'`, `<<$'\\x45OF'`, `<<E$F`) is replaced by a plain one, on its
            # end line too, so the body is the one bash reads.
            written = delim if _plain_delimiter().fullmatch(delim) else f"DM_CC_EOF_{len(out)}"
            pending.append((delim, strip, quoted, written))
            word = text[i + (3 if strip else 2):end]
            if written != delim or (quoted and word.strip() != f"'{delim}'"):
                word = f"'{written}'" if quoted else written
            out.append(("<< " if strip else "<<") + word)
            prev, i = "x", end
            continue
        elif ch == "\n" and pending:
            out.append("\n")
            i += 1
            for delim, strip, quoted, written in pending:
                last = False
                first = i
                while i < n:
                    line_start = i
                    end = text.find("\n", i)
                    end = n if end < 0 else end
                    line = text[i:end]
                    while not quoted and end < n and (len(line) - len(line.rstrip("\\"))) % 2:
                        nxt = text.find("\n", end + 1)
                        nxt = n if nxt < 0 else nxt
                        line, end = line[:-1] + text[end + 1:nxt], nxt
                    last = (line.lstrip("\t") if strip else line) == delim
                    if last:
                        out.append(written + text[end:end + 1])
                    elif strip:
                        out.append(line.lstrip("\t") + text[end:end + 1])
                    else:
                        out.append(text[i:end + 1] if quoted else line + text[end:end + 1])
                    i = end + 1
                    if last:
                        break
                if bodies is not None:
                    bodies.append((first, line_start if last else n, last))
                if not last:  # bash reads to the end of the input (with a warning)
                    out.append(("" if "".join(out[-1:]).endswith("\n") else "\n") + written)
            pending = []
            prev = "\n"
            continue
        # ordinary characters: copied in one go
        m = (plain_run if ch in _META or ch == '"' else plain_run_in_word)(text, i + 1)
        end = m.end() if m else i + 1
        if text.find("{", i + 1, end) < 0:
            out.append(text[i:end])
        else:  # a piece from each `{` on, as when each was read on its own: a heredoc
            # delimiter replaced is named by the count of pieces written before it
            head, *rest = text[i + 1:end].split("{")
            out += [ch + head, *["{" + piece for piece in rest]]
        prev, i = text[end - 1], end
    return "".join(out)

@cache
def _parser() -> Parser:
    import tree_sitter
    import tree_sitter_bash

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


# What parsing may cost (issue 22, "Bounded cost"). tree-sitter-bash parses a valid line
# in time linear in its length, but recovering from some errors costs the square of it:
# seconds at 100 KB. Guards that count, never time (every machine gives the same answer);
# past one, the line could not be parsed (it asks, and the word scan offers its commands
# to the deny rules):
#
# * The parser reads the source in chunks of CHUNK bytes, and may read at most
#   READS_PER_CHUNK times as many chunks as the source has, plus READS_SLACK (a valid line
#   needs two or three per chunk: the lexer reads ahead and back a little; each read
#   costs some 5 us). Recovering from errors in ``a[a[a[…``, ``rm x )) rm x ))…`` or
#   arrays opened inside arrays (``a=(x a=(x …``) relexes, and reads back far more.
# * A pipeline with an error in it costs the square of its stages in one step of the
#   parser, which cannot be stopped there (tree-sitter-bash 0.25: 768 stages 10 ms, 4,000
#   stages 0.25 s, 40,000 half a minute). A line with more than MAX_PIPES ``|`` anywhere
#   (an ordinary line has a few dozen) is first parsed with each pipe read as ``;`` --
#   the same length, no pipeline to pay for -- and not parsed when that shows an error,
#   or a pipe with no command after it: such a line does not parse anyway.
CHUNK = 1024
READS_PER_CHUNK = 32
READS_SLACK = 1_024
MAX_PIPES = 768


def syntax_tree(src: bytes) -> Node | None:
    """The root node of ``src`` (UTF-8) parsed as bash; None when parsing it would cost
    more than a line of its length may (above).

    tree-sitter-bash can crash on some non-ASCII input ("{" + U+E5C0F segfaults), and bash
    treats every non-ASCII byte as an ordinary word character anyway: parse a copy where
    each such byte is "x" (offsets unchanged); the walk reads words from the original.
    """
    masked = src.translate(_ASCII_ONLY)
    if masked.count(b"|") > MAX_PIPES and _broken_pipeline(masked):
        return None
    return _parsed(masked)


def _parsed(masked: bytes) -> Node | None:
    """``masked`` parsed, within its reads (above)."""
    reads, allowed = 0, READS_PER_CHUNK * (len(masked) // CHUNK + 1) + READS_SLACK

    def read(offset: int, _point: object) -> bytes:
        nonlocal reads
        reads += 1
        return masked[offset:offset + CHUNK]

    parser = _parser()
    try:
        return parser.parse(read, progress_callback=lambda *_: reads > allowed).root_node
    except ValueError:  # stopped ("Parsing failed")
        parser.reset()  # (else the next parse would resume this one)
        return None


def _broken_pipeline(masked: bytes) -> bool:
    """Whether a line with many pipes may hold an error for one of them to pay for: it
    does not parse with each pipe read as ``;`` (``|&`` as ``; ``, ``||`` and ``>|``
    left alone), or a pipe has no command after it (``a |``, ``a | )``: what ``;``
    would accept)."""
    if _dangling_pipe().search(masked):
        return True
    if b"||" in masked or b"|&" in masked or b">|" in masked:
        semicolons = _pipe().sub(lambda m: b"; " if m.group(0) == b"|&" else b";", masked)
    else:  # (every `|` is a pipe: replaced in one go)
        semicolons = masked.replace(b"|", b";")
    probe = _parsed(semicolons)
    return probe is None or probe.has_error


@cache
def _pipe() -> re.Pattern[bytes]:
    return re.compile(rb"(?<![|>])\|&?(?![|&])")


@cache
def _dangling_pipe() -> re.Pattern[bytes]:
    """A pipe followed by blanks, newlines and comments only, then the end, another
    operator or a word that closes a construct."""
    return re.compile(rb"(?<![|>])\|&?(?![|&])(?:[ \t\r\n]|\\\n|#[^\n]*)*"
                      rb"(?:\Z|[;&|)}]|(?:then|do|done|fi|esac|elif|else|in)(?![\w-]))")


# --------------------------------------------------------------------------- word scan
#: Reserved words and openers dropped from the start of a scanned command (bash(1)
#: "RESERVED WORDS"; ``[[``/``]]`` and ``!`` start or negate a command, not name one).
_SCAN_KEYWORDS = frozenset({"!", "[[", "]]", "case", "coproc", "do", "done", "elif", "else",
                            "esac", "fi", "for", "function", "if", "in", "select", "then",
                            "time", "until", "while", "{", "}"})
MAX_SCANNED = 256  # commands a word scan offers: past this, the line asks anyway


@cache
def _scan_split() -> re.Pattern[str]:
    """Where a command may start in text the parser rejected: after an operator, a
    newline, a backtick or ``$(`` (``<(``/``>(`` end in ``(``)."""
    return re.compile(r"\$\(|[;&|(){}\n`]")


@cache
def _scan_words() -> re.Pattern[str]:
    """A word: quoted parts and plain characters up to a blank."""
    return re.compile(r"""(?:\$'(?:\\.|[^'\\])*'?|'[^']*'?|"(?:\\.|[^"\\])*"?|\\.|[^\s'"\\])+""",
                      re.DOTALL)


@cache
def _scan_token() -> re.Pattern[str]:
    return re.compile(r"""\$'(?:\\.|[^'\\])*'?|'[^']*'?|"(?:\\.|[^"\\])*"?|\\.|[^\s'"\\]+""",
                      re.DOTALL)


def _rough_word(token: str) -> str:
    """One word with its quotes removed roughly: ``$'..'`` decoded, quotes and
    backslashes dropped."""
    if "'" not in token and '"' not in token and "\\" not in token:
        return token  # (the usual word: nothing to remove)
    parts = []
    for m in _scan_token().finditer(token):
        part = m.group(0)
        if part.startswith("$'"):
            parts.append(ansi_c(part[2:].removesuffix("'")))
        elif part[:1] in "'\"":
            parts.append(part[1:].removesuffix(part[0]))
        elif part[:1] == "\\":
            parts.append(part[1:])
        else:
            parts.append(part)
    return "".join(parts)


def word_scan(text: str, depth: int = 0) -> list[list[str]]:
    """Every plausible command in ``text`` the parser rejected, for the deny rules: the
    text split at each operator (``; & | ( ) { }``, newlines, backticks, ``$(``), each
    piece split into words with quotes removed roughly, leading reserved words,
    assignments and redirects dropped; a here-string's text is scanned too (a shell may
    read it). Linear in ``text``: the first MAX_SCANNED commands, then as many again
    not among those (a line repeating one command a thousand times still has its last
    one scanned)."""
    found: list[list[str]] = []
    more: dict[tuple[str, ...], list[str]] = {}  # later commands, each once
    for piece in _scan_split().split(text):
        pieces: list[list[str]] = []
        words: list[str] = []
        tokens = _scan_words().findall(piece)
        i = 0
        while i < len(tokens):
            token = tokens[i]
            i += 1
            redirect = _scan_redirect().match(token)
            if redirect is not None:
                target = token[redirect.end():]
                if not target and i < len(tokens):  # the target is the next word
                    target, i = tokens[i], i + 1
                if redirect.group(0).endswith("<<<") and depth == 0:
                    pieces += word_scan(_rough_word(target), 1)
            elif words or not (token in _SCAN_KEYWORDS or _scan_assignment().match(token)):
                words.append(_rough_word(token))
        if words:
            pieces.append(words)
        if len(found) < MAX_SCANNED:
            found += pieces
            if len(found) >= MAX_SCANNED:
                del found[MAX_SCANNED:]
                seen = {tuple(f) for f in found}
            continue
        for command in pieces:
            if tuple(command) not in seen:
                more.setdefault(tuple(command), command)
        if len(more) >= MAX_SCANNED:
            break
    return found + list(more.values())[:MAX_SCANNED]


def scan_pieces(text: str) -> list[str]:
    """The pieces the word scan splits ``text`` into, as written, each once (at most
    2 * MAX_SCANNED), that parse on their own: read by the judge as bash reads them
    (``{rm,-rf,x}``, ``c=rm`` then ``$c -rf x``, ``BASH_CMDS[ls]=/bin/rm`` then ``ls``),
    beside the scan's words, whose quotes are removed only roughly."""
    found: list[str] = []
    coarse = re.split(r"[;&|\n]", text)  # a brace expansion `{rm,-rf,x}` whole too
    for piece in dict.fromkeys([*coarse[:MAX_SCANNED], *_scan_split().split(text)]):
        if len(found) >= 2 * MAX_SCANNED:
            break
        piece = piece.strip()
        if not piece or len(piece) > 4_096:
            continue
        root = syntax_tree(piece.encode("utf-8", "surrogatepass"))
        if root is not None and not root.has_error:
            found.append(piece)
    return found


@cache
def _scan_redirect() -> re.Pattern[str]:
    return re.compile(r"\d*(?:<<<|<<-?|&>>?|>>|>&|<&|<>|>\||[<>])")


@cache
def _scan_assignment() -> re.Pattern[str]:
    return re.compile(r"[A-Za-z_]\w*(?:\[[^]]*\])?\+?=")
