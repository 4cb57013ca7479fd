"""The YAML reader (dm_cc/config/yaml_stream.py): the same data and lines as the
simple way (compose the node graph, index its lines, let SafeLoader construct it),
and the bounds on aliases and nesting that a hostile file meets."""

from __future__ import annotations

import datetime
import time
import tracemalloc
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dm_cc.config import load_yaml
from dm_cc.config.yaml_stream import MAX_DEPTH, MIN_ALIAS_BUDGET, read_document
from dm_cc.errors import ConfigError, PolicyError

LOADERS = [getattr(yaml, "CSafeLoader", yaml.SafeLoader), yaml.SafeLoader]

# --------------------------------------------------------------------------- the reference


class Duplicate(Exception):
    pass


def _reference_lines(node: yaml.Node, here: tuple, lines: dict) -> None:
    """The line index as dm_cc built it before the reader: a walk over the composed
    nodes, aliases walked again at each place they appear."""
    lines.setdefault(here, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        seen: dict = {}
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else repr(key_node)
            line = key_node.start_mark.line + 1
            if key in seen:
                raise Duplicate(line, f"duplicate key {key!r} (first at line {seen[key]})")
            seen[key] = line
            lines[(*here, key)] = line
            _reference_lines(value_node, (*here, key), lines)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            lines[(*here, index)] = item.start_mark.line + 1
            _reference_lines(item, (*here, index), lines)


def reference(text: str, loader: Any) -> tuple[Any, dict]:
    """Data and lines the simple way (small documents only: aliases are expanded)."""
    composer = loader(text)
    try:
        node = composer.get_single_node()
        if node is None:
            return None, {}
        lines: dict = {}
        _reference_lines(node, (), lines)
        return composer.construct_document(node), lines
    finally:
        composer.dispose()


def read(text: str, loader: Any) -> tuple[Any, dict]:
    """What dm_cc reads: the reader, and SafeLoader for what it leaves to it."""
    with_loader = loader(text)
    try:
        found = read_document(with_loader, "t.yaml", ConfigError)
    finally:
        with_loader.dispose()
    if found.duplicate is not None:
        raise Duplicate(*found.duplicate)
    return (found.data if found.plain else yaml.load(text, Loader=loader)), found.lines


def _no_string_keys_of_other_types(lines: dict) -> dict:
    """The reference names a complex key by the node's repr, the reader by a token
    no loc matches: neither is ever looked up, so they are left out of the compare."""
    return {path: line for path, line in lines.items()
            if not any(isinstance(part, (str, int)) is False for part in path)
            and not any(isinstance(part, str) and part.startswith(("MappingNode(",
                                                                   "SequenceNode("))
                        for part in path)}


def assert_same(text: str) -> None:
    for loader in LOADERS:
        try:
            want_data, want_lines = reference(text, loader)
        except Duplicate as duplicate:          # the same key twice: the first one named
            with pytest.raises(Duplicate) as caught:
                read(text, loader)
            assert caught.value.args == duplicate.args
            continue
        data, lines = read(text, loader)
        assert data == want_data, (loader, text)
        assert type(data) is type(want_data)
        assert _no_string_keys_of_other_types(lines) == _no_string_keys_of_other_types(
            want_lines), (loader, text)


SAMPLES = {
    "empty": "",
    "comment only": "# nothing\n",
    "explicit empty document": "---\n",
    "scalar document": "just text\n",
    "types": "a: 1\nb: 1.5\nc: true\nd: ~\ne: 2001-12-14\nf: 2001-12-14t21:59:43.10-05:00\n"
             "g: !!binary aGVsbG8=\nh: 0x1F\ni: 0o17\nj: .inf\nk: -.nan_not\nl: 1_000\n"
             "m: yes\nn: Off\no: ''\np: null\nq: NULL\nr: 0b101\ns: 1:30\n",
    "quoted look-alikes": "a: '1'\nb: \"true\"\nc: '~'\nd: !!str 12\ne: !!int '7'\n",
    "non-string keys": "1: one\ntrue: yes\n~: nothing\n1.5: x\n2001-01-01: d\n",
    "block and flow": "rules:\n  - permission: bash\n    pattern: 'git *'\n    action: allow\n"
                      "  - {permission: read, pattern: \"src/**\", action: deny}\n"
                      "agents:\n  plan: {rules: [{permission: edit, pattern: '*', action: ask}]}\n",
    "multi-line scalars": "a: |\n  one\n  two\nb: >\n  folded\n  text\nc: plain\n  continued\n",
    "nested lists": "- - - a\n    - b\n  - c\n- []\n- {}\n",
    "anchored scalar": "a: &x hello\nb: *x\nc: [*x, *x]\n",
    "anchored mapping": "base: &b {permission: bash, action: allow}\n"
                        "rules:\n  - *b\n  - *b\n  - {pattern: x}\n",
    "anchored list in list": "a: &l [1, [2, 3]]\nb: [*l, [*l]]\n",
    "alias as a key": "a: &k key\n*k : value\n",
    "anchored key": "&k a: 1\nb: *k\n",
    "merge key": "defaults: &d {action: ask, reason: r}\n"
                 "rules:\n  - <<: *d\n    permission: bash\n    pattern: x\n",
    "merge list": "a: &a {x: 1}\nb: &b {y: 2}\nc:\n  <<: [*a, *b]\n  z: 3\n",
    "inline merge": "a:\n  <<: {x: 1}\n  y: 2\n",
    "set": "s: !!set {a, b}\n",
    "omap": "o: !!omap [a: 1, b: 2]\n",
    "pairs": "p: !!pairs [a: 1, a: 2]\n",
    "tagged map and seq": "a: !!map {x: 1}\nb: !!seq [1]\n",
    "non-specific tag": "a: ! 12\nb: ! [1]\n",
    "explicit start and end": "---\na: 1\n...\n",
    "same value twice is not an alias": "a: [1, 2]\nb: [1, 2]\n",
    "null values": "a:\nb: ~\nc: [~, ]\n",
    "duplicate keys": "a: 1\nb: {x: 1, y: 2, x: 3}\na: 2\n",
    "same text, other types": "'1': a\n1: b\n",
    "unicode": "ключ: значение\nemoji: \"\\U0001F600\"\n",
}


@pytest.mark.parametrize("text", SAMPLES.values(), ids=SAMPLES.keys())
def test_reads_what_safe_load_and_the_line_index_gave(text):
    assert_same(text)


REFUSED_BY_SAFE_LOADER = {
    "list as a key": ("? [a, b]\n: list key\n", 1, "found unhashable key"),
    "unknown tag": ("a: 1\nb: !python/object:os.system x\n", 2, "could not determine a constructor"),
    "unknown collection tag": ("a: !thing {x: 1}\n", 1, "could not determine a constructor"),
    "undefined alias": ("a: 1\nb: *nope\n", 2, "found undefined alias"),
    "duplicate anchor": ("a: &x 1\nb: &x 2\n", 2, "second occurrence"),
    "second document": ("a: 1\n---\nb: 2\n", 2, "only one YAML document"),
    "merge of a scalar": ("a: &s x\nb: {<<: *s}\n", 1, "expected a mapping"),
}


@pytest.mark.parametrize("text, line, needle", REFUSED_BY_SAFE_LOADER.values(),
                         ids=REFUSED_BY_SAFE_LOADER.keys())
def test_what_safe_load_refuses_is_refused_naming_the_line(text, line, needle):
    for loader in LOADERS:
        with pytest.raises(yaml.YAMLError):
            yaml.load(text, Loader=loader)
    with pytest.raises(ConfigError) as caught:
        load_yaml(text, "t.yaml")
    assert str(caught.value).startswith(f"t.yaml:{line}:"), caught.value
    assert needle in str(caught.value)


_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-10**30, 10**30),
    st.floats(allow_nan=False), st.dates(),
    st.datetimes(timezones=st.just(datetime.UTC)),
    st.text(max_size=12),
    st.sampled_from(["yes", "No", "~", "null", "0x1f", "1_0", "1e3", "-", "<<", "=", ":", "#",
                     "&a", "*a", "!x", "2001-01-01", ".inf", "", " lead", "trail ", "a: b"]),
)
_keys = st.one_of(st.text(max_size=8), st.integers(-5, 5), st.booleans(),
                  st.sampled_from(["permission", "rules", "on", "1.5", "null"]))


def _trees(leaves: st.SearchStrategy) -> st.SearchStrategy:
    return st.recursive(leaves, lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(_keys, inner, max_size=4)), max_leaves=20)


@st.composite
def _documents(draw: st.DrawFn) -> str:
    """A document of random data, sometimes with parts shared (safe_dump writes an
    anchor and aliases for a list or mapping that appears more than once)."""
    parts = draw(st.lists(_trees(_scalars), min_size=1, max_size=4))
    picks = draw(st.lists(st.integers(0, len(parts) - 1), min_size=1, max_size=6))
    keys = draw(st.lists(_keys, min_size=len(picks), max_size=len(picks), unique=True))
    data = {key: parts[pick] for key, pick in zip(keys, picks, strict=True)}
    flow = draw(st.sampled_from([None, True, False]))
    return yaml.safe_dump(data, default_flow_style=flow, allow_unicode=draw(st.booleans()),
                          sort_keys=draw(st.booleans()))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_documents())
def test_random_documents_read_as_the_reference_reads_them(text):
    assert_same(text)


# --------------------------------------------------------------------------- hostile documents


def refused(text: str, *, memory: bool = False) -> str:
    """The error a hostile ``text`` gets, checked to come at once (a bomb expanded
    would take minutes and gigabytes); ``memory``: and with little memory."""
    if memory:
        tracemalloc.start()
    start = time.perf_counter()
    try:
        with pytest.raises(PolicyError) as caught:
            load_yaml(text, "p.yaml", PolicyError)
        took = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1] if memory else 0
    finally:
        tracemalloc.stop()
    assert took < 10.0                      # a tenth of a second, in fact: generous on a busy machine
    assert peak < 64 * 2**20, peak          # what the bound lets aliases add, and no more
    return str(caught.value)


def _laughs(levels: int, width: int = 9) -> str:
    lines = ["l0: &l0 [" + ", ".join(["x"] * width) + "]"]
    for level in range(1, levels):
        lines.append(f"l{level}: &l{level} [" + ", ".join([f"*l{level - 1}"] * width) + "]")
    return "\n".join(lines) + "\n"


def test_billion_laughs_is_refused_at_the_alias_that_crosses_the_bound():
    text = _laughs(10)                      # 9**10 values once expanded
    message = refused(text, memory=True)
    # l0..l4 add 66,420 values; l5's first copy of l4 (7,381 more each) is the one
    # that crosses 100,000 only once what l4 itself added is counted: line 6, *l4
    assert message.startswith("p.yaml:6:10: document too large after expanding aliases: "
                              "with *l4 here"), message
    assert text.splitlines()[5][9:].startswith("*l4")
    assert f"and than {MIN_ALIAS_BUDGET}" in message


BOMBS = {
    "mapping-shaped": "a: &a {" + ", ".join(f"k{i}: x" for i in range(20)) + "}\n"
                      + "".join(f"{n}: &{n} {{" + ", ".join(f"k{i}: *{p}" for i in range(20))
                                + "}\n" for p, n in zip("abcdef", "bcdefg", strict=True)),
    "merge-keys": "m0: &m0 {a: 1, b: 2, c: 3, d: 4, e: 5, f: 6, g: 7, h: 8}\n"
                  + "".join(f"m{k}: &m{k} {{<<: [" + ", ".join([f"*m{k - 1}"] * 9) + "]}\n"
                            for k in range(1, 9)),
    "one wide anchor": "w: &w [" + ", ".join(["x"] * 1000) + "]\n"
                       + "copies: [" + ", ".join(["*w"] * 1000) + "]\n",
    "in block style": "l0: &l0\n" + "".join(["  - x\n"] * 9) + "".join(
        f"l{k}: &l{k}\n" + "".join([f"  - *l{k - 1}\n"] * 9) for k in range(1, 9)),
}


@pytest.mark.parametrize("text", BOMBS.values(), ids=BOMBS.keys())
def test_alias_bombs_of_every_shape_are_refused_with_file_line_and_column(text):
    assert len(text) < 10_000
    message = refused(text)
    assert "document too large after expanding aliases" in message
    line, column = message.split(":")[1:3]
    alias = text.splitlines()[int(line) - 1][int(column) - 1:]
    assert alias.startswith("*"), (line, column, alias)   # it names the alias itself


def test_a_merge_chain_is_refused_before_safe_loader_flattens_it():
    # each mapping merges the one before: flattening is quadratic, and deep
    text = "m0: &m0 {k0: 0}\n" + "".join(f"m{k}: &m{k} {{<<: *m{k - 1}, k{k}: {k}}}\n"
                                         for k in range(1, 3000))
    message = refused(text)
    assert f"nested deeper than {MAX_DEPTH} levels once *m" in message


@pytest.mark.parametrize("text, line, column", [
    ("a: &a [1, *a]\n", 1, 11),
    ("a: &a\n  b: [*a]\n", 2, 7),
    ("- &x {k: [1, {j: *x}]}\n", 1, 18),
])
def test_an_alias_inside_its_own_anchor_is_refused(text, line, column):
    message = refused(text)
    assert message.startswith(f"p.yaml:{line}:{column}: alias *")
    assert "inside the value its anchor names" in message


@pytest.mark.parametrize("text, line", [
    ("rules: " + "[" * 150 + "]" * 150 + "\n", 1),
    ("rules:\n" + "- " * 150 + "x\n", 2),
    ("a:\n" + "".join("  " * depth + f"k{depth}:\n" for depth in range(1, 120)) + "\n", 101),
])
def test_deep_nesting_is_refused_where_it_crosses_the_bound(text, line):
    # a file 1,000 levels deep crashed the loader (RecursionError) before
    message = refused(text)
    assert message.startswith(f"p.yaml:{line}:")
    assert f"nested deeper than {MAX_DEPTH} levels" in message


def test_depth_added_by_aliases_counts():
    half = "[" * 60 + "x" + "]" * 60
    text = f"a: &a {half}\nb: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[*a]]]]]]]]]]]]]]]" \
           "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n"
    message = refused(text)
    assert message.startswith("p.yaml:2:")
    assert "once *a is expanded" in message


def test_a_number_too_long_for_python_names_its_place():
    # int() refuses over 4,300 digits with a ValueError, which crashed the loader
    message = refused("rules: []\nversion: " + "9" * 5000 + "\n")
    assert message.startswith("p.yaml:2:10: invalid value '9999")


def test_a_large_plain_document_is_not_limited():
    # no alias, no bound: 125,000 nodes (the old guard refused anything over 100,000)
    text = "items:\n" + "".join(f"  - {{n: {i}, name: item {i}}}\n" for i in range(25_000))
    data, lines = load_yaml(text, "big.yaml")
    assert len(data["items"]) == 25_000
    assert lines[("items", 24_999, "name")] == 25_001


def test_a_large_policy_naming_one_reason_by_alias_loads():
    # an alias of a scalar adds nothing: a generated policy naming one reason by
    # alias in every rule loads
    rule = "  - {permission: bash, pattern: 'task%d *', action: allow, reason: *r}\n"
    text = "x-reason: &r shared reason\nrules:\n" + "".join(rule % i for i in range(20_000))
    data, lines = load_yaml(text, "p.yaml")
    assert data["rules"][-1]["reason"] == "shared reason"
    assert lines[("rules", 19_999, "reason")] == 20_002


def _thousand_and_copies(copies: int, before: int = 0) -> str:
    """An anchor of 1,000 values and ``copies`` aliases of it, after ``before``
    items of three values each."""
    return ("items:\n" + "".join(f"  - {{n: {i}, name: x}}\n" for i in range(before))
            + "a: &a [" + ", ".join(["x"] * 999) + "]\nb: [" + ", ".join(["*a"] * copies)
            + "]\n")


def test_aliases_may_add_100000_values_to_a_small_file():
    load_yaml(_thousand_and_copies(99), "p.yaml")      # 99 copies of 999 more: 98,901
    message = refused(_thousand_and_copies(101))
    assert message.startswith("p.yaml:3:")
    assert "aliases add 100899 values, more than the file writes out (1103) and than 100000" \
        in message


def test_aliases_may_add_as_many_values_as_a_large_file_writes_out():
    # 50,000 items write out 150,000 values: their aliases may add as many
    data, _lines = load_yaml(_thousand_and_copies(140, before=50_000), "p.yaml")
    assert len(data["b"]) == 140 and len(data["b"][0]) == 999
    message = refused(_thousand_and_copies(160, before=50_000))
    assert message.startswith("p.yaml:50003:")
    assert "more than the file writes out (151" in message


def test_a_bomb_refused_in_a_document_that_also_has_a_syntax_error_later():
    # the bound is checked as the stream is read: nothing after the bomb is needed
    message = refused(_laughs(10) + "broken: [\n")
    assert "expanding aliases" in message
