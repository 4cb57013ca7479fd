"""YAML documents that remember where each value came from.

``load_yaml(text, path)`` returns the plain data (safe types only) and a map from
a key path (``("rules", 3, "action")``) to its 1-based line, so schema errors can
name ``file:line``. Tabs in indentation, duplicate keys, several documents and
YAML syntax errors are reported as :class:`~dm_cc.errors.ConfigError` subclasses;
:func:`validation_error` turns a pydantic error into one naming the line of each
problem. Every file format of dm_cc (policies, agents, settings) reads through here.

PyYAML is imported at the first document read: a command that reads no file
(``dm_cc approvals add`` in a project without policy or agent files) does not load
it, though it names paths and lines through this module.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from dm_cc.config.words import did_you_mean
from dm_cc.errors import ConfigError

if TYPE_CHECKING:
    import yaml
    from pydantic_core import ValidationError

    from dm_cc.config.yaml_stream import LinePath

_T = TypeVar("_T")


@cache
def _loader_class() -> type[Any]:
    """SafeLoader (libyaml's when PyYAML was built with it), as a subclass of our own so
    nothing registered globally leaks in; made at the first document read."""
    import yaml

    safe: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class _Loader(safe):
        """SafeLoader; kept as a subclass so nothing registered globally leaks in."""

    return _Loader


def _check_tabs(text: str, path: str, error: type[ConfigError]) -> None:
    if "\t" not in text:
        return
    for number, line in enumerate(text.splitlines(), start=1):
        indent = line[: len(line) - len(line.lstrip(" \t"))]
        if "\t" in indent and line.strip():
            raise error(path, number, "tab character in indentation (YAML needs spaces)")


def load_yaml(text: str, path: str, error: type[ConfigError] = ConfigError
              ) -> tuple[Any, dict[LinePath, int]]:
    """Parse one YAML document; return ``(data, lines)``. Empty text gives ``None``.
    The data is what ``yaml.safe_load`` gives, read in one pass over the events
    with alias expansion and nesting bounded (:mod:`dm_cc.config.yaml_stream`)."""
    from dm_cc.config.yaml_stream import read_document

    _check_tabs(text, path, error)
    read = _read(text, path, error, lambda loader: read_document(loader, path, error))
    if read.duplicate is not None:
        raise error(path, *read.duplicate)
    if read.plain:
        return read.data, read.lines
    return _read(text, path, error, lambda loader: _construct(loader, path, error)), read.lines


def _read(text: str, path: str, error: type[ConfigError], how: Callable[[Any], _T]) -> _T:
    """``how(loader)`` with a loader on ``text``, YAML's errors turned into ``error``
    naming the line."""
    import yaml

    loader = _loader_class()(text)
    try:
        return how(loader)
    except yaml.MarkedYAMLError as exc:
        raise _syntax_error(exc, text, path, error) from None
    except yaml.YAMLError as exc:
        raise error(path, None, f"invalid YAML: {exc}") from None
    finally:
        loader.dispose()


def _construct(loader: Any, path: str, error: type[ConfigError]) -> Any:
    """What SafeLoader builds of a document :func:`read_document` read within its
    bounds but left to it (merge keys, explicit tags): composing and constructing
    it cost no more than those bounds allow."""
    try:
        return loader.construct_document(loader.get_single_node())
    except ValueError as exc:                # an int too long for Python: no YAML error
        raise error(path, None, f"invalid value: {exc}") from None


def _syntax_error(exc: yaml.MarkedYAMLError, text: str, path: str,
                  error: type[ConfigError]) -> ConfigError:
    """A YAML syntax error at ``file:line:column``. A quote never closed is reported
    where it opens (YAML only notices at the end of the file); otherwise where YAML
    stopped, naming the line of what it was reading when that began elsewhere."""
    context, problem = exc.context_mark, exc.problem_mark
    if context is not None and exc.context == "while scanning a quoted scalar" \
            and "end of stream" in (exc.problem or ""):
        quote = text[context.index] if context.index < len(text) else "quote"
        return error(path, context.line + 1, f"invalid YAML: the {quote} opened here is never "
                     "closed (the file ends first)", context.column + 1)
    what = exc.problem or str(exc)
    if "expected a single document" in f"{exc.context} {exc.problem}":
        what = "only one YAML document is allowed (found a second '---')"
    elif exc.context and context is not None and problem is not None \
            and context.line != problem.line:
        what += (f" ({exc.context} that starts at line {context.line + 1}, column "
                 f"{context.column + 1})")
    elif exc.context:
        what = f"{exc.context} {what}"
    mark = problem or context
    if mark is None:
        return error(path, None, f"invalid YAML: {what}")
    return error(path, mark.line + 1, f"invalid YAML: {what}{_closed_late(text, mark.line)}",
                 mark.column + 1)


def _closed_late(text: str, line: int) -> str:
    """A word on a quote opened on an earlier line and closed on ``line``, where YAML
    stopped: a quote left open takes the text up to the next one as its own (the
    next rule's opening quote closes it), and YAML stops only there."""
    import yaml

    quoted = None
    try:
        for token in yaml.scan(text):
            if token.start_mark.line > line:
                break
            if isinstance(token, yaml.ScalarToken) and token.style in ("'", '"') \
                    and token.start_mark.line < line == token.end_mark.line:
                quoted = token
    except yaml.YAMLError:
        pass                                 # the error itself: what came before is read
    if quoted is None:
        return ""
    start = quoted.start_mark
    return (f"; the {quoted.style} opened at line {start.line + 1}, column {start.column + 1} "
            f"is closed only on line {line + 1}: is its closing {quoted.style} missing?")


def line_of(lines: dict[LinePath, int], loc: LinePath) -> int | None:
    """The line of the deepest known prefix of ``loc``."""
    for end in range(len(loc), -1, -1):
        line = lines.get(tuple(loc[:end]))
        if line is not None:
            return line
    return None


def display_path(path: Path) -> str:
    """A path as the user would write it: relative to the cwd when below it."""
    try:
        relative = os.path.relpath(path)
    except ValueError:
        return str(path)
    return relative if not relative.startswith("..") else str(path)


def known_keys(schema: Mapping[str, Any], loc: LinePath) -> set[str]:
    """The keys a mapping at ``loc`` may have, by the pydantic core ``schema`` of the
    whole document (every branch of a union; none where it says nothing)."""
    found: set[str] = set()
    for fields in _fields_at(schema, tuple(loc), {}, 0):
        found.update(map(str, fields))
    return found


def _fields_at(schema: Mapping[str, Any], loc: LinePath, refs: dict[str, Any],
               depth: int) -> Iterator[Mapping[str, Any]]:
    """The ``fields`` of each typed dict or model ``loc`` leads to in ``schema``."""
    kind = schema.get("type")
    if depth > 100:
        return
    if kind == "definitions":
        refs = {**refs, **{item["ref"]: item for item in schema.get("definitions", ())}}
    if kind == "definition-ref" and schema.get("schema_ref") in refs:
        yield from _fields_at(refs[schema["schema_ref"]], loc, refs, depth + 1)
    elif kind in ("union", "tagged-union"):
        choices = schema.get("choices", ())
        for choice in choices.values() if isinstance(choices, Mapping) else choices:
            yield from _fields_at(choice[0] if isinstance(choice, tuple) else choice, loc, refs,
                                  depth + 1)
    elif kind == "chain":
        for step in schema.get("steps", ()):
            yield from _fields_at(step, loc, refs, depth + 1)
    elif isinstance(schema.get("fields"), Mapping):
        fields = schema["fields"]
        if not loc:
            yield fields
        elif isinstance(fields.get(loc[0]), Mapping):
            yield from _fields_at(fields[loc[0]].get("schema", {}), loc[1:], refs, depth + 1)
    elif kind == "dict" and loc:
        yield from _fields_at(schema.get("values_schema", {}), loc[1:], refs, depth + 1)
    elif kind in ("list", "set", "frozenset", "tuple") and loc and isinstance(loc[0], int):
        yield from _fields_at(schema.get("items_schema", {}), loc[1:], refs, depth + 1)
    elif isinstance(schema.get("schema"), Mapping):   # model, nullable, default, validators
        yield from _fields_at(schema["schema"], loc, refs, depth + 1)


def _loc_text(loc: tuple[Any, ...]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(top level)"


def validation_error(exc: ValidationError, shown: str, lines: dict[LinePath, int],
                     error: type[ConfigError] = ConfigError,
                     schema: Mapping[str, Any] | None = None) -> ConfigError:
    """A pydantic error as ``error`` naming the file and the line of each problem;
    an unknown key with the known key it is close to, when ``schema`` (the pydantic
    core schema the data was validated with) says which keys are known there. Unknown
    keys come first: a misspelt key is usually why a required one is missing."""
    messages = []
    for problem in sorted(exc.errors(), key=lambda problem: problem["type"] != "extra_forbidden"):
        loc = tuple(part for part in problem["loc"] if not (isinstance(part, str) and "[" in part))
        message = problem["msg"]
        if problem["type"] == "extra_forbidden":
            known = known_keys(schema, loc[:-1]) if schema is not None else set()
            message = f"unknown key {loc[-1]!r}{did_you_mean(str(loc[-1]), known)}"
        elif problem["type"] == "missing":
            message = f"missing required field {loc[-1]!r}"
        messages.append((line_of(lines, loc), f"{_loc_text(loc)}: {message}"))
    line, first = messages[0]
    more = "".join(f"\n{shown}:{n}: {m}" for n, m in messages[1:])
    return error(shown, line, first + more)
