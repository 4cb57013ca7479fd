"""Bash syntax to records: the walk stage of :mod:`dm_cc.permissions.shell`.

:func:`walk` visits every node of a tree from :func:`~.source.syntax_tree` once (an explicit
stack, no recursion), so commands in lists, pipelines, subshells, groups, ``$( )``,
backticks, ``<( )``, heredocs, arithmetic, ``[[ ]]``, loops and functions are all found, and
yields plain records (:mod:`.records`) in source order: each simple command as
:class:`~.quoting.Word` s with its stdin and risky assignments, redirect targets, strings
bash runs as code (backticks in a heredoc body, evaluated subscripts), declarations it
understood itself. It knows syntax, not programs: what the words mean is for the judge. A
word is rebuilt from its nodes: quotes and escapes removed, ``$'..'`` decoded, expansions,
unquoted globs and brace expansion (what only the running shell knows) recorded, with the
helpers of :mod:`.quoting`.

The parser is not trusted blindly (it can crash on some non-ASCII input, drop a token, glue
two words, or orphan a command name in an ERROR node): non-ASCII bytes are masked before
parsing, every node's text must be covered by its children (else the last record is
:class:`~.records.Broken`), and records found in broken text carry a ``suspect`` reason,
which makes their commands dynamic.

A positive model: every node's kind, named or a token, must be on the one allowlist
:data:`~.tables.syntax.MODELLED` (checked as the walk passes, no second traversal), and
the shapes tree-sitter reads as other kinds (``coproc``, ``{fd}>``, ``>&$fd``, extglob)
are recognised where they are read; anything else makes the last record
:class:`~.records.Broken` with the reason, so the line asks and is word-scanned for the
deny rules like a line that does not parse.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterable, Iterator, Sequence
from functools import cache
from itertools import pairwise
from typing import TYPE_CHECKING

from dm_cc.permissions.shell.evaluation import (
    arithmetic,
    arithmetic_names,
    assigned_name,
    backtick_escape,
    code_value,
    may_hold_code,
    may_hold_code_at,
    positional,
    substitutions,
    test_evaluates,
)
from dm_cc.permissions.shell.quoting import (
    BRACE,
    EVALUATES,
    SHOWN,
    Word,
    WordBuilder,
    ansi_c,
    evaluated,
    evaluates,
    globs,
    hides_expansion,
    unescape,
    unescape_double_quoted,
)
from dm_cc.permissions.shell.records import (
    Assigned,
    Broken,
    Command,
    Deferred,
    FileUse,
    Noted,
    Record,
    Redirected,
    Script,
    Stdin,
)
from dm_cc.permissions.shell.spans import SourceText, View, decode
from dm_cc.permissions.shell.tables.environment import COMMAND_TABLES, risky_env
from dm_cc.permissions.shell.tables.syntax import MODELLED

if TYPE_CHECKING:
    from tree_sitter import Node

BROKEN_TEXT = "found inside text that could not be parsed"

_EXPANSIONS = frozenset({"simple_expansion", "expansion", "command_substitution",
                         "arithmetic_expansion"})
_WORDISH = _EXPANSIONS | {"word", "string", "raw_string", "ansi_c_string", "concatenation",
                          "number", "process_substitution", "translated_string",
                          "brace_expression"}
_REDIRECTS = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})
_PIPES = frozenset({"|", "|&", ">("})  # what precedes a command whose stdin is a pipe
_PLAIN = rb"[\w./:@%+=,-]+(?:\s+[\w./:@%+=,-]+)*"
_BLANKS = b" \t\r\n\\"  # what may lie between a node's children (a backslash: a continuation)
_BLANK_BYTES = frozenset(_BLANKS)
_GAPS_ALLOWED = frozenset({"string", "translated_string", "heredoc_body", "heredoc_redirect"})
_SPECIAL = frozenset("`$*?[{")  # what an expansion or a glob needs (see quoting)
_PLAIN_WORD = _SPECIAL | {"\\", "\n"}  # none of these: a word is its own text
# the node kinds _Walk._visit makes records of
_VISITED = frozenset({"command", "declaration_command", "unset_command", "test_command",
                      "heredoc_redirect", "variable_assignment", "file_redirect", "ERROR"})
# the node kinds _Walk.deferred looks at: values stored and places that evaluate them later
_DEFERRED = frozenset({"variable_assignment", "expansion", "arithmetic_expansion",
                       "compound_statement", "c_style_for_statement", "for_statement",
                       "test_command", "subscript", "command_substitution",
                       "declaration_command"})  # (a command's: found by _Walk.command)
_STORES_INPUT = frozenset({"read", "mapfile", "readarray"})
_PREFIXES = frozenset({"time", "command", "builtin"})  # run the builtin that follows
_NAMES_STORING = _STORES_INPUT | {"printf", "let", "getopts"}  # the names _stored looks at
_LONGEST = 1 + max(len(name) for name in _NAMES_STORING | _PREFIXES)
# the first two characters of the names _stored looks at (each has three or more)
_STORING_STARTS = frozenset(name[:2].encode() for name in _NAMES_STORING | _PREFIXES | {"set"})
_NAMED_WORDISH = _WORDISH | {"command_name"}
_ENCLOSING = frozenset({"function_definition", "redirected_statement"})  # see _encloses
_PIPED = Stdin("pipe", None, True)
_CALL_SITE = Stdin("inherited", None, True)  # a function body reads its caller's input
_DESCRIPTOR = Stdin("inherited", None, True)  # `<&3`: a descriptor opened elsewhere
OUTSIDE_MODEL = "outside the modelled subset of bash (docs/shell.md)"
_MODELLED = frozenset(MODELLED)  # (a set: asked of every node)
_USUAL_LEAVES = _MODELLED - {"extglob_pattern"}  # leaves _Walk._leaf_outside need not see
# the modelled kinds that only hold others (`program`, `pipeline`, `command_name`,
# `concatenation` ...): no records of their own, nothing changed for their children
# (_Walk._records asks this one set of most nodes, and nothing more of their own)
_HOLDING = _MODELLED - _VISITED - _DEFERRED - _REDIRECTS - _ENCLOSING - {
    "command", "negated_command", "list", "ERROR"}


def walk(src: bytes, root: Node | None) -> Iterator[Record]:
    """The records of the tree ``root`` parsed from ``src``, in source order; the last is
    :class:`~.records.Broken` when the parser reported an error or silently dropped text
    (the only one when it gave up: no tree)."""
    return iter([Broken()]) if root is None else _Walk(src).records(root)


def _backticks(src: bytes, start: int) -> bool:
    """Whether the command substitution at ``start`` is written with backticks (or
    ``$`` before them): the only kind _Walk.deferred reads again."""
    return src[start] == 0x60 or src.startswith(b"$`", start)


def _redirects_body(node: Node) -> bool:
    """Whether a redirected statement's (or a function definition's) redirect reaches
    the commands inside a compound body: a simple command's own (or a negation's, a
    list's last command's) are found with the command (_Walk.command)."""
    body = node.child_by_field_name("body")
    return (body is None or body.type not in ("command", "negated_command", "list")) \
        and any(c.type in _REDIRECTS for c in node.children)


@cache
def _extglob() -> re.Pattern[str]:
    """An extglob operator (bash(1) "Pattern Matching"): ``@(a|b)``, ``!(x)`` ..."""
    return re.compile(r"[?*+@!]\(")


@cache
def _named_descriptor() -> re.Pattern[str]:
    """``{fd}`` written right before a redirect: bash stores the descriptor it opens."""
    return re.compile(r"\{\w+\}")


@cache
def _redirect_op() -> re.Pattern[str]:
    """The operator at the start of a redirect (compiled once, on first use)."""
    return re.compile(r"(?:\d+|\{\w+\})?(&>>|&>|>>|>\||>&-|<&-|>&|<&|<>|>|<)")


# the patterns asked of a node's text by position (:mod:`.spans`): none depends on where
# a search starts
@cache
def _option_v() -> re.Pattern[str]:
    return re.compile("-v")


@cache
def _substitution() -> re.Pattern[str]:
    return re.compile(r"\$\(")


@cache
def _backtick() -> re.Pattern[str]:
    return re.compile("`")


@cache
def _glob() -> re.Pattern[str]:
    return re.compile(r"[*?\[]")  # what globs() looks for, with the brace expansion below


@cache
def _brace() -> re.Pattern[str]:
    return re.compile(BRACE)


def _groups(nodes: list[Node]) -> Iterable[list[Node]]:
    """Adjacent nodes (no blank between them) form one shell word."""
    group: list[Node] = []
    for node in nodes:
        if group and node.start_byte != group[-1].end_byte:
            yield group
            group = []
        group.append(node)
    if group:
        yield group


# --------------------------------------------------------------------------- tree walk
class _Walk:
    """Turns one parsed tree into records."""

    def __init__(self, src: bytes) -> None:
        self.src = src
        self.dropped: dict[int, list[Word]] = {}  # command start -> words the parser lost
        self.exec_stdin: Stdin | None = None  # what `exec <<< CODE` gives later commands
        self.redirected = False  # a redirect was seen (Redirected yielded)
        # the text decoded once, read by position (nested nodes are not sliced to be asked)
        self.source = SourceText(src)
        # ASCII source (the usual case): its byte offsets are string offsets
        self.ascii = self.source.text if src.isascii() else None
        # test commands a test around them examined: whether each holds an evaluated word
        self.tests_within: dict[tuple[int, int], bool] = {}
        # the first construct found that tables.syntax does not list as MODELLED
        self.outside: str | None = None
        self._parts: dict[tuple[int, int, int], tuple[str, Node | None, list[Node]]] = {}

    def text(self, node: Node, cap: int | None = None) -> str:
        if self.ascii is not None:
            start = node.start_byte
            return self.ascii[start:node.end_byte if cap is None else
                              min(node.end_byte, start + cap)]
        return self.source.slice(node, cap)

    def shown(self, view: View) -> str:
        """The first SHOWN characters of a node's text."""
        return view.string[view.start:min(view.end, view.start + SHOWN)]

    def records(self, root: Node) -> Iterator[Record]:
        found = self._records(root)
        if self.exec_stdin is not None:  # `exec <<< CODE; bash`: every later command (and,
            # in a loop, every earlier one) reads what exec supplied
            found = [r._replace(stdin=self.exec_stdin)
                     if isinstance(r, Command) and r.stdin is None else r for r in found]
        return iter(found)

    def _records(self, root: Node) -> list[Record]:
        intact, src = True, self.src
        out: list[Record] = []  # (a list, not a generator: all of them are wanted)
        # (node, its start and end byte, parent, the stdin an enclosing construct supplies,
        # inside an ERROR node, inside a compound command with a redirect); Node.parent and
        # Node.prev_sibling cost O(depth), so the walk carries what it needs (and each
        # node's bytes, read once: they are asked of every node).
        stack: list[tuple[Node, int, int, Node | None, Stdin | None, bool, bool]] = []
        # the next node, when it is the only child to visit (`$($(…))`: not stacked)
        following: tuple[Node, int, int, Node | None, Stdin | None, bool, bool] | None = (
            root, root.start_byte, root.end_byte, None, None, False, False)
        while following is not None or stack:
            node, first_byte, end_byte, parent, piped, broken, redirected = \
                following or stack.pop()
            following = None
            children = node.children
            if not children:
                continue  # tokens and leaf words: nothing to do
            kind = node.type
            inherit, owner, last = piped, node, None  # what the children are told
            if kind not in _HOLDING and (  # (a kind that only holds others: nothing to do;
                    # nor for `$(..)`, which deferred does not read again, unlike backticks)
                    kind != "command_substitution" or _backticks(src, first_byte)):
                broken = broken or kind == "ERROR"
                if kind not in _MODELLED and self.outside is None:  # the positive model:
                    self.outside = f"'{kind}'"  # every node's kind is on the one allowlist
                if kind == "command":  # (the usual node: what _visit and deferred do with it)
                    found = self.command(node, parent, piped, redirected)
                else:
                    found = self._visit(node, kind, parent, piped, redirected) \
                        if kind in _VISITED else []
                    if kind in _DEFERRED:
                        found += self.deferred(node, kind)
                if kind in _REDIRECTS and not self.redirected:  # (the first: `> f`, `2>&1`)
                    self.redirected = True
                    found = [*found, Redirected()]
                if found:
                    if broken or (kind == "command" and node.has_error):
                        found = [r._replace(suspect=BROKEN_TEXT)
                                 if isinstance(r, (Command, Noted, Script)) else r for r in found]
                    out += found
                # a pipe or an enclosing construct's input reaches every command inside
                # (`cat x | { bash; }`, `{ sh; } <<< CODE`, `f() { sh; }; f <<< CODE`)
                if kind in _ENCLOSING:
                    inherit = piped or self._encloses(node, kind)
                    # ... and its redirect: every command inside runs redirected (`{ a; } > f`)
                    redirected = redirected or _redirects_body(node)
                if kind in ("negated_command", "list") and parent is not None \
                        and parent.type == "redirected_statement":
                    if kind == "negated_command":  # `! bash <<EOF`: the redirect belongs to the
                        owner = parent  # statement around the negation
                    else:  # `a && bash <<EOF`: tree-sitter hangs the heredoc on the list; bash
                        last = children[-1]  # gives it to the list's last command
            if len(children) == 1:  # a command of one name, a name of one part (`ls`, `$(…)`):
                only = children[0]  # a child that covers all its parent's text leaves no gap
                if only.start_byte == first_byte and only.end_byte == end_byte:  # to check
                    if only.child_count:  # visited next (not stacked: `$($(…))`)
                        following = (only, first_byte, end_byte,
                                     parent if only is last else owner, inherit, broken,
                                     redirected)
                    elif (leaf := only.type) not in _USUAL_LEAVES:  # a leaf: its kind allowed
                        self._leaf_outside(only, leaf)
                    continue
            elif kind == "command_substitution" and len(children) == 3:  # `$(cmd)` written
                opening, body, closing = children  # tight (no gap, tokens allowed): its one
                start, end = body.start_byte, body.end_byte  # statement is visited next
                if opening.start_byte == first_byte and opening.end_byte == start \
                        and end == closing.start_byte and closing.end_byte == end_byte \
                        and body.child_count and opening.type == "$(" and closing.type == ")":
                    following = (body, start, end, owner, inherit, broken, redirected)
                    continue
            after_pipe = False  # the previous child is a pipe token (a leaf)
            entries = []
            before: Node | None = None  # the command before the pipe token
            # the text between the children, read in the same loop: no gap or one blank
            # is the usual case; any other is checked in full (_gaps)
            gaps = kind not in _GAPS_ALLOWED
            pos, odd = first_byte, False
            for child in children:
                start, end = child.start_byte, child.end_byte
                if gaps:
                    if start > pos and (start != pos + 1 or src[pos] not in _BLANK_BYTES
                                        or kind == "concatenation"):
                        odd = True
                    if end > pos:
                        pos = end
                if child.child_count:  # leaves (tokens, plain words) need no visit
                    fed = self._piped(before) if after_pipe else None
                    entries.append((child, start, end, parent if child is last else owner,
                                    inherit or fed, broken, redirected))
                    after_pipe, before = False, child
                else:
                    leaf = child.type
                    after_pipe = leaf in _PIPES
                    if leaf not in _USUAL_LEAVES:
                        self._leaf_outside(child, leaf)
            if gaps and (odd or end_byte > pos) and not self._gaps(node, kind, children):
                intact = False
            if len(entries) == 1:
                following = entries[0]
            else:
                stack.extend(reversed(entries))
        if self.source.spent:  # past the allowance some nested text was not examined
            out.append(Noted([Word(self.text(root, SHOWN))], (),
                             "nested too deeply to examine every part", dynamic=True))
        if root.has_error or not intact:
            out.append(Broken())
        elif self.outside is not None:
            out.append(Broken(f"uses {self.outside}, {OUTSIDE_MODEL}"))
        return out

    def _leaf_outside(self, leaf: Node, kind: str) -> None:
        """A token or leaf word not on the allowlist, or a pattern using extglob."""
        if self.outside is not None or kind == "ERROR":
            return
        if kind != "extglob_pattern":
            self.outside = f"'{kind}'"
        elif _extglob().search(self.text(leaf)):
            self.outside = "an extglob pattern"

    def _encloses(self, node: Node, kind: str) -> Stdin | None:
        """The input a compound command's redirect (or a function's call site) gives the
        commands inside: static text or not, never their own (so a shell there is
        dynamic; the text is still judged, for the deny rules)."""
        if kind == "function_definition":
            return _CALL_SITE
        body = node.child_by_field_name("body")
        if body is None or body.type in ("command", "negated_command", "list"):
            return None  # the command's own redirect (see command())
        stdin = self._stdin([c for c in node.children if c.type in _REDIRECTS], None)
        return stdin._replace(dynamic=True) if stdin is not None else None

    def _visit(self, node: Node, kind: str, parent: Node | None,
               piped: Stdin | None, redirected: bool = False) -> list[Record]:
        """The records of one node (not of its children)."""
        if kind == "command":
            return self.command(node, parent, piped, redirected)
        if kind in ("declaration_command", "unset_command"):
            return self.declaration(node)
        if kind == "test_command":
            return self.test(node)
        if kind == "heredoc_redirect":
            return self.heredoc(node)
        if kind == "variable_assignment" and (
                parent is None or parent.type not in ("command", "declaration_command")):
            name, word = self.assignment(node)
            value = word.text.partition("=")[2]
            found: list[Record] = [] if word.expand or word.glob or word.procsub \
                else [Assigned(name, value)]
            if risky_env(name):
                found += [Noted([word], (name,), f"sets {name}"), *code_value(name, word)]
            return found
        if kind == "file_redirect":
            return self.redirect(node)
        if kind == "ERROR":
            return self.orphans(node)
        return []

    def _gaps(self, node: Node, kind: str, children: list[Node]) -> bool:
        """Check that the children of ``node`` account for all of its text.

        tree-sitter-bash sometimes drops a token without reporting an error (``python3 -
        <<EOF`` loses the ``-``) or glues words into one (``echo ``rm``). A dropped plain
        word between a command and its redirects is recovered as an argument; any other
        unaccounted text could be anything, so the caller treats it as a parse error.
        """
        pos, src = node.start_byte, self.src
        missing: list[bytes] = []
        for child in children:
            start, end = child.start_byte, child.end_byte
            if start > pos:
                if kind == "concatenation":
                    return False  # one shell word cannot contain a blank
                if start == pos + 1 and src[pos] in _BLANK_BYTES:
                    pass  # the usual gap: one blank
                elif text := src[pos:start].strip(_BLANKS):
                    missing.append(text)
            if end > pos:
                pos = end
        if node.end_byte > pos:  # the end of the node
            if kind == "concatenation":
                return False
            if text := src[pos:node.end_byte].strip(_BLANKS):
                missing.append(text)
        if not missing:
            return True
        body = node.child_by_field_name("body") if kind == "redirected_statement" else None
        if body is None or body.type != "command" or not all(re.fullmatch(_PLAIN, m) for m in missing):
            return False
        self.dropped[body.start_byte] = [Word(w) for m in missing for w in decode(m).split()]
        return True

    # words ----------------------------------------------------------------
    def word(self, nodes: Sequence[Node]) -> Word:
        quick = self._quick(nodes)
        return quick if quick is not None else self._built(nodes).word()

    def _quick(self, nodes: Sequence[Node]) -> Word | None:
        """The common cases, read directly: one plain word, one expansion, one process
        substitution."""
        if len(nodes) != 1:
            return None
        node = nodes[0]
        kind = node.type
        if kind == "command_name" and node.child_count == 1:
            node = node.children[0]  # what _collect would read
            kind = node.type
        return self._quick1(node, kind)

    def _quick1(self, node: Node, kind: str) -> Word | None:
        """:meth:`_quick` of one node of this kind."""
        if kind == "word" and "\\" not in (raw := self.text(node)):
            if _SPECIAL.isdisjoint(raw) and "\n" not in raw:
                return Word(raw)
            return Word(raw, hides_expansion(raw), globs(raw))
        if kind in _EXPANSIONS:  # `$x`, `$(cmd)`: what _collect makes of it, directly
            if kind != "command_substitution":
                return Word(self.text(node, SHOWN), True)
            for child in node.children:  # (a loop, not any(): one per level of `$($(…))`)
                if child.is_named:
                    return Word(self.text(node, SHOWN), True)
        elif kind == "process_substitution":  # `<(cmd)`: read from a pipe, its text shown
            return Word(self.text(node, SHOWN), procsub=True)
        return None

    def _built(self, nodes: Sequence[Node]) -> WordBuilder:
        builder = WordBuilder()
        self._collect_all(nodes, builder)
        return builder

    def words1(self, node: Node) -> list[Word]:
        """:meth:`words` of one node; a plain word without braces, or any word
        :meth:`_quick` reads that has no brace expansion, the quick way."""
        kind = node.type
        if kind == "word" and self.ascii is not None:
            raw = self.ascii[node.start_byte:node.end_byte]
            if _PLAIN_WORD.isdisjoint(raw):
                return [Word(raw)]
        word = self._quick1(node, kind)
        if word is not None and (not word.glob or "{" not in word.text):
            return [word]
        return self.words([node])

    def words(self, nodes: Sequence[Node]) -> list[Word]:
        """The words one shell word becomes after brace expansion (``r{m,}`` → ``rm r``)."""
        word = self._quick(nodes)
        builder = None
        if word is None:
            builder = self._built(nodes)  # built once for both
            word = builder.word()
        if not word.glob or "{" not in word.text:
            return [word]
        return (builder or self._built(nodes)).words()

    def _collect_all(self, nodes: Sequence[Node], b: WordBuilder) -> None:
        for i, node in enumerate(nodes):
            kind = node.type
            if kind == "word":  # (the usual part, read here: a word may have thousands)
                b.unquoted_word(self.text(node))
            elif kind != "$" or i + 1 == len(nodes) or nodes[i + 1].type != "string":
                self._collect(node, b)
            # else `$"..."`: a translated string, the same text as "..."

    def _collect(self, node: Node, b: WordBuilder) -> None:
        kind = node.type
        if kind == "word":
            b.unquoted_word(self.text(node))
        elif kind == "number":
            b.plain(self.text(node))
        elif not node.is_named:  # a stray token such as a lone "$" or "``"
            raw = self.text(node)
            b.expand = b.expand or (raw != "``" and hides_expansion(raw))
            b.quoted("") if raw == "``" else b.plain(raw)
        elif kind == "raw_string":
            b.single_quoted(self.text(node)[1:-1])
        elif kind == "ansi_c_string":
            b.single_quoted(ansi_c(self.text(node)[2:-1]))
        elif kind == "string":
            for part in node.children:
                if part.type == "string_content":
                    b.quoted(unescape_double_quoted(self.text(part)))
                elif part.type in _EXPANSIONS or part.is_named:
                    b.expand = True
                    b.quoted(self.text(part, SHOWN))
                elif part.type != '"':
                    b.quoted(self.text(part))
        elif kind in ("concatenation", "command_name", "translated_string"):
            children = node.children
            if any(a.end_byte != z.start_byte for a, z in pairwise(children)):
                b.expand = True  # a blank inside one word: the parser glued words together
            self._collect_all(children, b)
        elif kind == "process_substitution":
            b.procsub = True
            b.quoted(self.text(node, SHOWN))
        elif kind == "command_substitution" and not any(c.is_named for c in node.children):
            b.quoted("")  # `` or $( ): statically empty, a known way to splice words
        elif kind == "brace_expression":
            b.plain(self.text(node))
        else:  # expansions, and anything unexpected: static only if it cannot expand
            raw = self.text(node, SHOWN)
            b.expand = b.expand or kind in _EXPANSIONS or "$" in raw or "`" in raw
            b.quoted(raw)

    def assignment(self, node: Node) -> tuple[str, Word]:
        """``NAME=VALUE`` as (NAME, word); NAME of ``a[i]=x`` is ``a``."""
        name_node = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        if name_node is None:
            return "", self.word([node])
        base = name_node.child_by_field_name("name") if name_node.type == "subscript" else None
        name = self.text(base or name_node)
        stop = value.start_byte if value is not None else node.end_byte
        prefix = decode(self.src[node.start_byte:stop])
        val = self.word([value]) if value is not None else Word("")
        expand = val.expand or "$" in prefix or "`" in prefix
        return name, Word(prefix + val.text, expand, val.glob, val.procsub)

    def _piped(self, before: Node | None) -> Stdin:
        """What a pipe from ``before`` carries: the words of a plain ``echo`` of static
        words (``echo ~/.ssh/id_rsa | xargs cat`` reads that file; a shell fed so is still
        dynamic, its text judged by the deny rules), else output known only when it runs."""
        if before is None or before.type != "command":
            return _PIPED
        name = before.child_by_field_name("name")  # (asked first: the usual name is no echo)
        # (its bytes, not its text: a name may hold all the line; asked of every pipe)
        if name is None or name.end_byte - name.start_byte != 4 \
                or self.src[name.start_byte:name.end_byte] != b"echo":
            return _PIPED
        if any(c.type in _REDIRECTS or c.type == "variable_assignment"
               for c in before.children):
            return _PIPED
        words = [w for arg in before.children_by_field_name("argument")
                 for w in self.words([arg])]
        texts = [w.text for w in words]
        while texts[:1] == ["-n"]:
            texts.pop(0)
        if not texts or any(w.expand or w.glob or w.procsub for w in words) \
                or texts[0].startswith("-"):  # echo -e: escapes decoded
            return _PIPED
        return Stdin("pipe", " ".join(texts), True)

    # statements -------------------------------------------------------------
    def command(self, node: Node, parent: Node | None, piped: Stdin | None,
                redirected: bool = False) -> list[Record]:
        """A simple command's record, then what it stores (:meth:`_stored`, told its
        first word, found by the same loop); ``redirected``: an enclosing compound command
        has a redirect (its own are found here)."""
        children = node.children
        if len(children) == 1 and (parent is None or parent.type != "redirected_statement"):
            alone = children[0]  # the usual command is its name alone (`ls`, `$(…)`): nothing
            if alone.type == "command_name":  # to sort out, the name's words are its words
                words = self.words1(alone.children[0]) if alone.child_count == 1 \
                    else self.words([alone])
                return self._command(node, alone, words, (), piped, piped, redirected)
        assigns: list[Node] = []
        name: Node | None = None
        first: Node | None = None  # the first word (a name, or what stands for one)
        args: list[Node] = []
        redirects: list[Node] = []
        for child in children:
            kind = child.type
            if first is None and kind in _NAMED_WORDISH:
                first = child
            if kind == "command_name":
                name = child
            elif kind == "variable_assignment" and name is None:
                assigns.append(child)
            elif kind in _REDIRECTS:
                redirects.append(child)
            elif name is not None and kind != "comment":
                args.append(child)
        if parent is not None and parent.type == "redirected_statement":
            body = parent.child_by_field_name("body")
            if body is not None and (body.start_byte == node.start_byte
                                     or body.type in ("negated_command", "list")):
                redirects.extend(c for c in parent.children if c.type in _REDIRECTS)
        for redirect in redirects:  # tree-sitter hangs `cmd >f -rf x`'s `-rf x` on the redirect
            args.extend(self._redirect_parts(redirect)[2])
        # `bash 0<<< CODE`: tree-sitter reads the descriptor as an argument
        fds: dict[int, str] = {}
        if redirects:
            starts = {r.start_byte for r in redirects}
            kept = []
            for arg in args:
                if arg.type == "number" and arg.end_byte in starts:
                    fds[arg.end_byte] = self.text(arg)
                else:
                    if arg.end_byte in starts and self.outside is None and \
                            _named_descriptor().fullmatch(self.text(arg, 64)):
                        self.outside = "a named descriptor (`{fd}>`)"
                    kept.append(arg)
            args = kept
        if name is None:
            found: list[Record] = []
            for var, word in map(self.assignment, assigns):
                if risky_env(var):
                    found += [Noted([word], (var,), f"sets {var}"), *code_value(var, word)]
            return found + self._stored(node, first) \
                if first is not None and self._may_store(first) else found
        if redirects:  # words taken from redirects go back to where they were written
            args.sort(key=lambda n: n.start_byte)
        # (a name of one part, the usual one, read as that part)
        words = self.words1(name.children[0]) if name.child_count == 1 else self.words([name])
        group: list[Node] = []  # adjacent nodes (no blank between them) form one word
        for arg in args:
            if group and arg.start_byte != group[-1].end_byte:
                words += self.words(group) if len(group) > 1 else self.words1(group[0])
                group = []
            group.append(arg)
        if group:
            words += self.words(group) if len(group) > 1 else self.words1(group[0])
        env = tuple((var, w) for var, w in map(self.assignment, assigns) if risky_env(var)) \
            if assigns else ()
        stdin = self._stdin(redirects, piped, fds) if redirects else piped
        return self._command(node, name if first is None else first, words, env, stdin, piped,
                             redirected or bool(redirects))

    def _command(self, node: Node, first: Node, words: list[Word],
                 env: tuple[tuple[str, Word], ...], stdin: Stdin | None, piped: Stdin | None,
                 redirected: bool) -> list[Record]:
        """:meth:`command`'s record of the command ``node`` whose words are read, then what
        it stores; ``first``: its first word, ``piped``: the input it was given."""
        if words[0].text == "coproc" and self.outside is None:
            self.outside = "`coproc`"  # wired to descriptors in an array: see tables.syntax
        if self.dropped:
            words += self.dropped.get(node.start_byte, ())
        if words[0].text == "exec" and stdin is not None and stdin is not piped and all(
                w.text[:1] == "{" for w in words[1:]):  # `exec <<< CODE`, `exec {fd}<&0`
            self.exec_stdin = stdin._replace(dynamic=True)
        # (the judge judges env's code values; positional: built for every command)
        found: list[Record] = [Command(words, stdin, env, None, None, None, redirected)]
        return found + self._stored(node, first) if self._may_store(first) else found

    def _may_store(self, first: Node) -> bool:
        """Whether a command whose first word is ``first`` may be one :meth:`_stored` looks
        at (an option, or a name it knows): told by its first two bytes, most commands
        (`cat`, `cd`, `ls`, `$(…)`) without slicing the word."""
        start = self.src[first.start_byte:first.start_byte + 2]
        return start in _STORING_STARTS or start[:1] == b"-"

    def orphans(self, node: Node) -> list[Record]:
        """Inside an ERROR node, a ``command_name`` may appear without its ``command``
        (````rm -rf x````); rebuild such commands from the words that follow it."""
        children = node.children
        found: list[Record] = []
        for i, child in enumerate(children):
            if child.type != "command_name":
                continue
            end = i + 1
            while end < len(children) and children[end].type in _WORDISH:
                end += 1
            args = children[i + 1:end]
            words = [*self.words([child]), *(w for g in _groups(args) for w in self.words(g))]
            found.append(Command(words))
        return found

    def heredoc(self, node: Node) -> list[Record]:
        """tree-sitter-bash does not parse backticks in a heredoc body; bash runs them
        when the delimiter is unquoted: each ```...``` span is parsed as a script."""
        start = next((c for c in node.children if c.type == "heredoc_start"), None)
        body = next((c for c in node.children if c.type == "heredoc_body"), None)
        if start is not None and any(b"\n" in self.src[start.end_byte:c.start_byte]
                                     for c in node.children if c.type in _WORDISH):
            # a body line starting with a backslash: tree-sitter reads it as words of the
            # redirect (a continuation line) and leaves the body empty
            return [Noted([Word(self.text(node, SHOWN))], (), "a heredoc the parser misread",
                          dynamic=True)]
        if start is None or body is None or any(q in self.text(start) for q in "'\"\\"):
            return []
        text = self.text(body)
        if "`" not in text:
            return []
        spans = re.split(r"(?<!\\)`", text)
        found: list[Record] = [Script(Word(unescape(inner))) for inner in spans[1::2]]
        if len(spans) % 2 == 0:  # an unmatched backtick: what runs is unclear
            found.append(Noted([Word(text[:SHOWN])], (), "a heredoc with an unmatched backtick",
                               dynamic=True))
        return found

    def test(self, node: Node) -> list[Record]:
        """``[ ]``/``[[ ]]``: operands such as ``-v 'a[$(cmd)]'`` or ``x -eq 'a[$(cmd)]'``
        are evaluated; they make the test a dynamic command. Every word below the test
        counts. A test below it is examined with it, once: its words are judged here, and
        whether it holds an evaluated one is kept for its own note."""
        inner = self.tests_within.pop((node.start_byte, node.end_byte), None)
        if inner is not None:  # examined with the test around it
            return [Noted([Word(self.text(node, SHOWN))], (), EVALUATES, dynamic=True)] \
                if inner else []
        stack, words, tests = [node], [], []
        while stack:
            current = stack.pop()
            if current.type in ("raw_string", "string", "ansi_c_string", "word"):
                words.append((current.start_byte, self.word([current])))
            else:
                if current.type == "test_command" and current is not node:
                    tests.append(current)
                stack.extend(current.children)
        found: list[Record] = [Script(w) for w in evaluated([w for _, w in words])]
        places = sorted(at for at, w in words if evaluated([w]))
        for test in tests:
            first = bisect_left(places, test.start_byte)
            self.tests_within[test.start_byte, test.end_byte] = \
                first < len(places) and places[first] < test.end_byte
        if found:
            found.append(Noted([Word(self.text(node, SHOWN))], (), EVALUATES, dynamic=True))
        return found

    def declaration(self, node: Node) -> list[Record]:
        """``export``/``declare``/``local``/``readonly``/``typeset``/``unset``."""
        words: list[Word] = []
        sensitive: list[str] = []
        code: list[Record] = []
        for child in node.children:
            if child.type == "variable_assignment":
                var, word = self.assignment(child)
                words.append(word)
            elif child.type in _WORDISH or child.type == "variable_name" or not words:
                word = self.word([child])
                words.append(word)
                if child.type == "variable_name":
                    var = self.text(child)
                else:
                    var = word.text.partition("=")[0]  # export "LD_PRELOAD=x"
                    flag = word.text[:1] == "-" and word.text[1:].isalpha()
                    if flag and "n" in word.text and node.type == "declaration_command":
                        sensitive.append("-n")  # declare -n r=PATH: a nameref to anything
                    if not word.text or word.text[0] in "-+" or len(words) == 1:
                        continue
            else:
                continue
            if node.type == "declaration_command" and risky_env(var):
                sensitive.append(var)
                code += code_value(var, word)
        if "-n" in sensitive:  # a nameref to bash's command tables (or to a name not
            # static) re-points command names through it: `declare -n r=BASH_CMDS; r[ls]=..`
            for word in words[1:]:
                target = word.text.partition("=")[2].partition("[")[0]
                if target in COMMAND_TABLES or (word.expand and "=" in word.text):
                    sensitive.append(target if target in COMMAND_TABLES else "BASH_CMDS")
        found: list[Record] = [Script(w) for w in evaluated(words[1:])]
        note = f"sets {', '.join(sensitive)}" if sensitive else None
        if found:
            note = EVALUATES
        found.append(Noted(words, tuple(sensitive), note, bool(found)))
        return found + code

    # deferred evaluation -----------------------------------------------------
    def deferred(self, node: Node, kind: str) -> list[Record]:
        """Values stored that may hold code, places where bash evaluates a stored value
        (:class:`~.records.Deferred`), and what tree-sitter does not parse the way bash
        runs it: escaped backticks inside backticks, substitutions inside ``${..}``,
        risky variables set by a loop or by arithmetic. (A node's text is asked by
        position, not sliced: these nest, and each level would cost all it holds.)"""
        if kind == "declaration_command":
            return self._declared(node)  # the common case: its text is rarely needed
        if kind == "command_substitution" and not _backticks(self.src, node.start_byte):
            return []  # `$(..)`: only backticks are read again (the common case)
        view = self.source.view(node)
        if kind == "variable_assignment":
            value = node.child_by_field_name("value")
            if value is None or not may_hold_code_at(self.source, self.source.view(value)):
                return []
            word = self.word([value])
            code = word.text if not word.expand and evaluates(word.text) else None
            return [Deferred(self.shown(view), True, code)]
        if kind == "subscript":
            bracket = view.string.find("[", view.start, view.end)  # after the name
            index = View(view.string, view.start if bracket < 0 else bracket + 1, view.end - 1)
            return [Deferred(self.shown(view), False)] if arithmetic_names(index) else []
        if kind == "command_substitution":
            return self._backticks(view)
        if kind == "expansion":
            return self._expansion(node, view)
        if kind in ("arithmetic_expansion", "compound_statement", "c_style_for_statement"):
            if kind == "compound_statement" and not view.string.startswith("((", *view[1:]):
                return []
            if kind == "c_style_for_statement":  # `for (( .. ))`: up to the first `))`
                close = self.source.find("))", view)
                view = view._replace(end=close + 2 if close >= 0 else min(view.end,
                                                                          view.start + 1))
            return arithmetic(self.source, view)
        if kind == "for_statement":
            return self._loop(node, self.shown(view))
        if kind == "test_command":
            # `[[ x -eq 1 ]]` evaluates both sides as arithmetic; `[ ]` (the test builtin)
            # only evaluates the subscript of `-v a[..]`
            found = self.source.first(test_evaluates(), view)
            if found is not None and found.end() >= view.end:
                found = None  # (its lookahead needs a blank inside the node)
            if found is None or (not view.string.startswith("[[", *view[1:])
                                 and found.group(0).strip() != "-v"):
                return []
            shown = self.shown(view)
            return [Deferred(shown, False), *([Deferred(shown, True)]
                                              if self.source.first(positional(), view) else [])]
        return []

    def _declared(self, node: Node) -> list[Record]:
        """A declaration that stores a value bash evaluates later (``declare -i``, ``-n``)."""
        flags = [self.text(c) for c in node.children[1:] if self.text(c, 1) in ("-", "+")]
        integer_or_ref = any(f[:1] == "-" and ("i" in f or "n" in f) for f in flags)
        return [Deferred(self.text(node, SHOWN), False)] if integer_or_ref else []

    def _stored(self, node: Node, word: Node) -> list[Record]:
        """A command that stores a value bash may evaluate later; ``word``: its first."""
        first = self.text(word, _LONGEST)
        if first[:1] != "-" and first not in _PREFIXES and first != "set" \
                and first not in _NAMES_STORING:
            return []  # the usual command: its name is none of those asked about below
        children = node.children
        words = [c for c in children if c.type in _NAMED_WORDISH]
        # a name longer than _LONGEST is none of those asked about (and may be all the
        # rest of a nested line: `$($($(…)))`)
        name = self.text(words[0], _LONGEST) if words else ""
        while name in _PREFIXES or (len(words) > 1 and name[:1] == "-"):
            words = words[1:]  # `time read x`, `command -p read x`, `builtin read x`
            name = self.text(words[0], _LONGEST) if words else ""
        if name == "set" and len(words) > 1:  # set -- 'a[$(cmd)]': $1 holds that code
            values = [w for n in words[1:] for w in self.words([n])]
            shown = self.shown(self.source.view(node))
            stored: list[Record] = [
                Deferred(shown, True, w.text if not w.expand and evaluates(w.text) else None)
                for w in values if may_hold_code(w.text)]
            return stored[:8]
        if name not in _NAMES_STORING:
            return []
        view = self.source.view(node)
        shown = self.shown(view)
        if name in _STORES_INPUT or (name == "printf" and self.source.first(_option_v(), view)
                                     and may_hold_code_at(self.source, view)):
            return [Deferred(shown, True)]
        if name == "let":
            return [Deferred(shown, False)]
        if name == "getopts" and len(words) > 2 and risky_env(var := self.text(words[2])):
            return [Noted([Word(shown)], (var,), f"sets {var}")]
        return []

    def _backticks(self, view: View) -> list[Record]:
        r"""Inside backticks bash removes the backslash before ``$``, a backtick or a
        backslash before running the text, so ```echo \`rm x\```` runs ``rm x``;
        tree-sitter reads the escaped text as it stands: the unescaped text is parsed too."""
        string, start, end = view
        if string.startswith("$`", start, end):  # `$` is literal (tables.syntax: outside)
            start += 1
            view = view._replace(start=start)
        if not string.startswith("`", start, end) or \
                self.source.first(backtick_escape(), view) is None:
            return []
        if not self.source.spend(view.size):
            return []
        return [Script(Word(backtick_escape().sub(r"\1", string[start + 1:end - 1])))]

    def _expansion(self, node: Node, view: View) -> list[Record]:
        string, start, end = view
        shown = self.shown(view)
        found: list[Record] = []
        if string.startswith("${!", start, end) or string.endswith("@P}", start, end):
            found.append(Deferred(shown, False))  # ${!x}: x names what to read
        named = assigned_name(self.source, view)
        if named is not None:
            found.append(Deferred(shown, True))  # ${x:=value}
            bracket = self.source.find("[", named)  # an element sets its array
            if risky_env(string[named.start:bracket if bracket >= 0 else named.end]) \
                    and self.source.spend(named.size):
                name = string[named.start:named.end]
                found.append(Noted([Word(shown, True)], (name,), f"sets {name}", True))
        if not any(c.type == "command_substitution" for c in node.children) and (
                self.source.first(_substitution(), view._replace(start=start + 2))
                or self.source.first(_backtick(), view)):
            if not self.source.spend(view.size):
                return found
            inner = substitutions(string[start + 2:end - 1])  # ${x#$(cmd)}: a word to it
            if inner is None:
                found.append(Noted([Word(shown, True)], (),
                                   "a substitution inside ${..} that could not be read", True))
            else:
                found += [Script(Word(body)) for body in inner]
        return found

    def _loop(self, node: Node, shown: str) -> list[Record]:
        """``for x in ITEMS`` / ``select x in ITEMS``: x takes each item (the positional
        parameters without ``in``)."""
        var_node = node.child_by_field_name("variable")
        if var_node is None:
            return []
        var = self.text(var_node)
        items = [self.source.view(c) for c in node.children if c.type in _WORDISH]
        has_in = any(c.type == "in" for c in node.children)
        found: list[Record] = []
        if not has_in or any(may_hold_code_at(self.source, item)
                             or self.source.first(_glob(), item)
                             or self.source.first(_brace(), item) for item in items):
            found.append(Deferred(shown, True))
        if risky_env(var):
            found.append(Noted([Word(shown.split(";", 1)[0].split("\n", 1)[0])], (var,),
                               f"sets {var}"))
        return found

    def _redirect_parts(self, node: Node) -> tuple[str, Node | None, list[Node]]:
        """(operator, target, words that are really arguments of the command): asked up to
        three times of each redirect (its command's words, its file, the input), read once."""
        key = (node.id, node.start_byte, node.end_byte)
        found = self._parts.get(key)
        if found is None:
            found = self._parts[key] = self._read_redirect(node)
        return found

    def _read_redirect(self, node: Node) -> tuple[str, Node | None, list[Node]]:
        words = [c for c in node.children if c.type in _WORDISH]
        if node.type == "heredoc_redirect":
            return "<<", None, words
        if node.type == "herestring_redirect":
            return "<<<", words[0] if words else None, words[1:]
        m = _redirect_op().match(self.text(node, 16))
        op = m.group(1) if m else ">"
        if op in (">&-", "<&-") or not words:
            return op, None, words
        return op, words[0], words[1:]

    def redirect(self, node: Node) -> list[Record]:
        op, target, _ = self._redirect_parts(node)
        if target is None:
            return []
        word = self.word([target])
        if op in (">&", "<&"):
            if word.text.isdigit() or word.text == "-":
                return []  # duplicating a descriptor, not a file
            if op == "<&" or word.expand or word.glob or word.procsub or (
                    word.text[:-1].isdigit() and word.text[-1] == "-"):
                # `<&foo`, `>&$fd`, `2>&3-` (moved): a descriptor the model does not follow
                self.outside = self.outside or f"'{op}{word.text[:SHOWN]}'"
                return []
        return [FileUse(word, "read" if op == "<" else "edit")]

    def _stdin(self, redirects: list[Node], piped: Stdin | None,
               fds: dict[int, str] | None = None) -> Stdin | None:
        """Where the command's standard input comes from, when that can matter.
        (A heredoc on another descriptor counts too: ``bash /dev/fd/3 3<<< CODE``.)"""
        for redirect in redirects:
            fd = redirect.child_by_field_name("descriptor")
            number = self.text(fd) if fd is not None else (fds or {}).get(redirect.start_byte)
            if number is not None and number != "0" and redirect.type == "file_redirect":
                continue
            if redirect.type == "heredoc_redirect":
                body = next((c for c in redirect.children if c.type == "heredoc_body"), None)
                return Stdin("heredoc", self.text(body) if body is not None else "")
            op, target, _ = self._redirect_parts(redirect)
            if op == "<&" and target is not None and self.text(target) not in ("0", "-"):
                return _DESCRIPTOR  # `bash <&3`: whatever descriptor 3 holds
            if target is not None and op in ("<<<", "<", "<>"):
                word = self.word([target])
                if op == "<<<":
                    return Stdin("herestring", word.text, word.expand or word.glob)
                return Stdin("pipe" if word.procsub else "file", None, word.procsub)
        return piped

