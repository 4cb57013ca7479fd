"""YAML documents that remember where each value came from.

``load_yaml(text, path)`` returns the plain data (safe types only) and a map from
a key path (``("rules", 3, "action")``) to its 1-based line, so schema errors can
name ``file:line``. Tabs in indentation, duplicate keys, several documents and
YAML syntax errors are reported as :class:`~dm_cc.errors.ConfigError` subclasses;
:func:`validation_error` turns a pydantic error into one naming the line of each
problem. Every file format of dm_cc (policies, agents, settings) reads through here.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from dm_cc.errors import ConfigError

if TYPE_CHECKING:
    from pydantic_core import ValidationError

LinePath = tuple[Any, ...]


_SafeLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when built with it


class _Loader(_SafeLoader):
    """SafeLoader; kept as a subclass so nothing registered globally leaks in."""


def _check_tabs(text: str, path: str, error: type[ConfigError]) -> None:
    for number, line in enumerate(text.splitlines(), start=1):
        indent = line[: len(line) - len(line.lstrip(" \t"))]
        if "\t" in indent and line.strip():
            raise error(path, number, "tab character in indentation (YAML needs spaces)")


MAX_EXPANDED_NODES = 100_000


def _expanded_size(node: yaml.Node, sizes: dict[int, int], path: str,
                   error: type[ConfigError]) -> int:
    """Nodes after alias expansion, memoised per node, so a "billion laughs" file
    is refused in linear time instead of hanging whoever walks the data."""
    known = sizes.get(id(node))
    if known is not None:
        return known
    sizes[id(node)] = 1  # a recursive alias counts once while it is being sized
    if isinstance(node, yaml.MappingNode):
        children = [child for pair in node.value for child in pair]
    elif isinstance(node, yaml.SequenceNode):
        children = node.value
    else:
        children = []
    total = 1 + sum(_expanded_size(child, sizes, path, error) for child in children)
    if total > MAX_EXPANDED_NODES:
        raise error(path, node.start_mark.line + 1,
                    f"document too large after expanding aliases (over {MAX_EXPANDED_NODES} "
                    "values)")
    sizes[id(node)] = total
    return total


def _index_lines(node: yaml.Node, here: LinePath, lines: dict[LinePath, int], path: str,
                 error: type[ConfigError]) -> None:
    lines.setdefault(here, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        seen: dict[Any, int] = {}
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else repr(key_node)
            line = key_node.start_mark.line + 1
            if key in seen:
                raise error(path, line, f"duplicate key {key!r} (first at line {seen[key]})")
            seen[key] = line
            lines[(*here, key)] = line
            _index_lines(value_node, (*here, key), lines, path, error)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            lines[(*here, index)] = item.start_mark.line + 1
            _index_lines(item, (*here, index), lines, path, error)


def load_yaml(text: str, path: str, error: type[ConfigError] = ConfigError
              ) -> tuple[Any, dict[LinePath, int]]:
    """Parse one YAML document; return ``(data, lines)``. Empty text gives ``None``."""
    _check_tabs(text, path, error)
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None, {}
        _expanded_size(node, {}, path, error)
        lines: dict[LinePath, int] = {}
        _index_lines(node, (), lines, path, error)
        data = loader.construct_document(node)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = " ".join(p for p in (exc.context, exc.problem) if p) or str(exc)
        if "expected a single document" in problem:
            problem = "only one YAML document is allowed (found a second '---')"
        raise error(path, line, f"invalid YAML: {problem}") from None
    except yaml.YAMLError as exc:
        raise error(path, None, f"invalid YAML: {exc}") from None
    finally:
        loader.dispose()
    return data, lines


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


def _loc_text(loc: tuple[Any, ...]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(top level)"


def validation_error(exc: ValidationError, shown: str, lines: dict[LinePath, int],
                     error: type[ConfigError] = ConfigError) -> ConfigError:
    """A pydantic error as ``error`` naming the file and the line of each problem."""
    messages = []
    for problem in exc.errors():
        loc = tuple(part for part in problem["loc"] if not (isinstance(part, str) and "[" in part))
        message = problem["msg"]
        if problem["type"] == "extra_forbidden":
            message = f"unknown key {loc[-1]!r}"
        elif problem["type"] == "missing":
            message = f"missing required field {loc[-1]!r}"
        messages.append((line_of(lines, loc), f"{_loc_text(loc)}: {message}"))
    line, first = messages[0]
    more = "".join(f"\n{shown}:{n}: {m}" for n, m in messages[1:])
    return error(shown, line, first + more)
