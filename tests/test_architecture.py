"""The layout of DESIGN.md section 7, checked against every import of dm_cc/.

The parts, the forbidden arrows, the heavy libraries' homes, what is pure and the
light commands are data in ``architecture.yaml`` beside this file; this module only reads them
and the code. Every import counts: at the top, inside functions, and under
``TYPE_CHECKING``. Another part is imported only through its front door (its
package; what each exports is pinned in test_front_doors.py). Within a part too, no
two modules import each other, directly or round a loop.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import subprocess
import sys
from collections.abc import Iterable, Iterator, Set
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "dm_cc"
DESIGN = yaml.safe_load((Path(__file__).with_name("architecture.yaml")).read_text())


@dataclass(frozen=True)
class Import:
    source: str        # the importing module's file, relative to the repo
    line: int
    target: str        # the imported module, dotted (dm_cc.x.y or a library)


def module_files() -> list[str]:
    return sorted(p.relative_to(REPO).as_posix() for p in PACKAGE.rglob("*.py"))


@cache
def _repo_modules() -> frozenset[str]:
    return frozenset(module_files())


def part_of(path: str) -> list[str]:
    """Every part whose files or folders hold ``path`` (exactly one, if all is well)."""
    return [name for name, places in DESIGN["parts"].items()
            if any(path == place or (place.endswith("/") and path.startswith(place))
                   for place in places)]


def _dotted(path: str) -> str:
    dotted = path.removesuffix(".py").replace("/", ".")
    return dotted.removesuffix(".__init__")


def module_path(dotted: str) -> str | None:
    """The file of a dm_cc module, if it exists."""
    relative = dotted.replace(".", "/")
    for candidate in (f"{relative}.py", f"{relative}/__init__.py"):
        if (REPO / candidate).is_file():
            return candidate
    return None


def imports_of(path: str, text: str | None = None) -> Iterator[Import]:
    """The imports of the module at ``path`` (its text read unless given)."""
    if text is None:
        text = (REPO / path).read_text(encoding="utf-8")
    tree = ast.parse(text)
    package = _dotted(path) if path.endswith("__init__.py") else _dotted(path).rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(path, node.lineno, alias.name)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: resolved against the importing package
                parent = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{parent}.{base}" if base else parent
            for alias in node.names:
                # `from dm_cc import dirs` imports the module dm_cc.dirs when there is one
                # (and `from wcmatch import fnmatch` the module wcmatch.fnmatch)
                submodule = f"{base}.{alias.name}"
                yield Import(path, node.lineno, submodule if _is_module(submodule) else base)


@cache
def _is_module(dotted: str) -> bool:
    if dotted.startswith("dm_cc."):
        return module_path(dotted) is not None
    try:
        return importlib.util.find_spec(dotted) is not None
    except (ImportError, ValueError):  # the parent is a module, not a package
        return False


@cache
def all_imports() -> tuple[Import, ...]:
    return tuple(i for path in module_files() for i in imports_of(path))


def module_of(target: str, files: Set[str] | None = None) -> str | None:
    """The file of dm_cc/ (one of ``files``, else of the repo) that importing
    ``target`` loads: a module's own, a package's ``__init__.py``; None for a library."""
    if target != "dm_cc" and not target.startswith("dm_cc."):
        return None
    known = _repo_modules() if files is None else files
    parts = target.split(".")
    while parts:  # `dm_cc.permissions.Rule`-style names fall back to their module
        relative = "/".join(parts)
        for candidate in (f"{relative}.py", f"{relative}/__init__.py"):
            if candidate in known:
                return candidate
        parts.pop()
    return None


def door(part: str) -> str:
    """The front door of ``part``, dotted: the package of its folder (``dm_cc.permissions``;
    ``dm_cc.cli`` for cli, whose ``__main__.py`` no one imports), else its one module."""
    places = DESIGN["parts"][part]
    folders = [place for place in places if place.endswith("/")]
    place = folders[0] if folders else places[0]
    return _dotted(place.rstrip("/")) if folders else _dotted(place)


def target_part(target: str) -> str | None:
    """The part an imported dm_cc module belongs to (None for a library)."""
    path = module_of(target)
    if path is None:
        return None
    found = part_of(path)
    return found[0] if len(found) == 1 else None


def arrows() -> dict[tuple[str, str], list[Import]]:
    """(importing part, imported part) -> the imports that make that arrow."""
    found: dict[tuple[str, str], list[Import]] = {}
    for item in all_imports():
        source = part_of(item.source)
        target = target_part(item.target)
        if len(source) == 1 and target is not None and source[0] != target:
            found.setdefault((source[0], target), []).append(item)
    return found


def module_edges(imports: Iterable[Import], files: Set[str] | None = None
                 ) -> dict[tuple[str, str], list[Import]]:
    """(importing module, imported module), as files of dm_cc/ -> the imports that
    make that edge (a module naming itself makes none)."""
    found: dict[tuple[str, str], list[Import]] = {}
    for item in imports:
        target = module_of(item.target, files)
        if target is not None and target != item.source:
            found.setdefault((item.source, target), []).append(item)
    return found


def cycles(edges: dict[tuple[str, str], list[Import]], limit: int | None = None) -> list[str]:
    """Each cycle among ``edges`` (nodes that reach each other, directly or round a
    loop), with the imports that make its edges (at most ``limit`` per edge)."""
    graph: dict[str, set[str]] = {}
    for source, target in edges:
        graph.setdefault(source, set()).add(target)
    return sorted(" <-> ".join(sorted(c)) + ": " + "; ".join(
        _where(edges[(a, b)], limit) for a in sorted(c) for b in sorted(c) if (a, b) in edges)
        for c in _components(graph) if len(c) > 1)


def _where(items: list[Import], limit: int | None = 3) -> str:
    """The imports, each once (``from x import a, b`` is one line), at most ``limit``."""
    unique = list(dict.fromkeys(items))[:limit]
    return ", ".join(f"{i.source}:{i.line} imports {i.target}" for i in unique)


# --------------------------------------------------------------------------- the checks


def test_the_description_names_only_known_parts():
    named = set(DESIGN["parts"])
    for section in ("only", "never"):
        for part, targets in DESIGN[section].items():
            assert part in named, f"{section}: unknown part {part}"
            assert set(targets) <= named, f"{section}.{part}: unknown parts {set(targets) - named}"
    for library, homes in DESIGN["libraries"].items():
        unknown = {home for home in homes if home not in named and module_path(_dotted(home)) != home}
        assert not unknown, f"libraries.{library}: unknown parts or modules {unknown}"
    assert set(DESIGN["doors"]["lazy"]) <= named, "doors.lazy: unknown parts"
    for entry in DESIGN["pure"]:
        assert entry in named or (module_path(_dotted(entry)) == entry
                                  and len(part_of(entry)) == 1), f"pure: unknown {entry}"


def test_every_module_belongs_to_exactly_one_part():
    misplaced = {path: part_of(path) for path in module_files() if len(part_of(path)) != 1}
    assert misplaced == {}, "each module must be in exactly one part of architecture.yaml"


def test_no_forbidden_arrow():
    broken = []
    for (source, target), items in sorted(arrows().items()):
        allowed = DESIGN["only"].get(source)
        if allowed is not None and target not in allowed:
            broken.append(f"{source} -> {target} ({source} may import only {allowed}): "
                          + _where(items))
        if target in DESIGN["never"].get(source, ()):
            broken.append(f"{source} -> {target} is forbidden: " + _where(items))
    assert broken == []


def behind_doors(imports: Iterable[Import]) -> list[str]:
    """Each import of another part's module rather than its front door, as
    ``file:line imports target (import it from door)``."""
    broken = []
    for item in imports:
        source, target = part_of(item.source), target_part(item.target)
        if len(source) == 1 and target is not None and target != source[0] \
                and item.target != door(target):
            broken.append(f"{item.source}:{item.line} imports {item.target} "
                          f"(import it from {door(target)})")
    return broken


def test_other_parts_are_imported_only_through_their_front_door():
    broken = behind_doors(all_imports())
    assert broken == [], ("a part's modules are its own: import what it exports from its "
                          "front door (tests/test_front_doors.py pins it):\n" + "\n".join(broken))


def test_no_cycle_between_parts():
    found = cycles(arrows(), limit=3)
    assert found == [], "parts that import each other:\n" + "\n".join(found)


def test_no_cycle_between_modules():
    found = cycles(module_edges(all_imports()))
    assert found == [], "modules that import each other:\n" + "\n".join(found)


def test_heavy_libraries_stay_in_their_part():
    broken = []
    for item in all_imports():
        library = item.target.split(".")[0]
        homes = DESIGN["libraries"].get(library)
        if homes is not None and not (set(part_of(item.source)) & set(homes) or item.source in homes):
            broken.append(f"{item.source}:{item.line} imports {item.target} (only {homes})")
    assert broken == []


DISK_METHODS = frozenset({"resolve", "exists", "is_file", "is_dir", "is_symlink", "iterdir",
                          "read_text", "read_bytes", "write_text", "write_bytes", "stat",
                          "lstat", "readlink", "mkdir", "unlink", "rmdir", "touch", "glob",
                          "rglob", "expanduser", "absolute", "samefile", "owner", "chmod"})


def pure_files(entry: str) -> list[str]:
    """The modules a ``pure:`` entry covers: a part's, or the one module it names."""
    if entry.endswith(".py"):
        return [entry]
    return [path for path in module_files() if part_of(path) == [entry]]


def front_doors() -> set[str]:
    """The packages of the pure parts (``dm_cc.permissions``): all a pure module of
    another part may import of them."""
    return {place.rstrip("/").replace("/", ".") for entry in DESIGN["pure"]
            for place in DESIGN["parts"].get(entry, ()) if place.endswith("/")}


def impurities(path: str, entry: str, text: str | None = None) -> list[str]:
    """What in the module at ``path`` (its text read unless given) breaks the
    ``pure:`` entry covering it: an import the entry does not allow (for a pure
    module, of dm_cc too: only the pure modules of its own part and the pure parts'
    front doors), a call of open/print/input/exec/eval, a disk method called on a
    directory (``where.root.iterdir()``)."""
    if text is None:
        text = (REPO / path).read_text(encoding="utf-8")
    allowed = set(DESIGN["pure"][entry])
    broken = []
    for item in imports_of(path, text):
        if target_part(item.target) is None:
            ok = item.target in allowed
        elif entry.endswith(".py"):
            target = module_path(item.target)
            ok = item.target in front_doors() or (
                target in DESIGN["pure"] and part_of(target) == part_of(path))
        else:
            ok = True          # between parts: the `only` and `never` sections
        if not ok:
            broken.append(f"{path}:{item.line} imports {item.target}")
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id in ("open", "print", "input", "exec", "eval"):
            broken.append(f"{path}:{node.lineno} calls {node.func.id}()")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in DISK_METHODS and isinstance(node.func.value, ast.Attribute) \
                and node.func.value.attr in ("root", "cwd", "home"):
            broken.append(f"{path}:{node.lineno} calls .{node.func.attr}() on a directory")
    return broken


@pytest.mark.parametrize("entry", sorted(DESIGN["pure"]))
def test_what_is_pure_does_no_io(entry):
    assert [problem for path in pure_files(entry) for problem in impurities(path, entry)] == []


@pytest.mark.parametrize("argv", DESIGN["light"]["commands"], ids=" ".join)
def test_light_commands_load_no_heavy_library(argv, tmp_path):
    heavy = DESIGN["light"]["libraries"]
    code = ("import sys; from dm_cc.cli import main\n"
            "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
            f"print(sorted(m for m in {heavy!r} if m in sys.modules))")
    env = {**os.environ, "DM_CC_HOME": str(tmp_path / "home"), "HOME": str(tmp_path),
           "DM_CC_MANAGED_DIR": str(tmp_path / "managed")}
    out = subprocess.run([sys.executable, "-c", code, *argv], cwd=tmp_path, env=env,
                         check=True, capture_output=True, text=True).stdout
    assert out.strip().splitlines()[-1] == "[]"


# --------------------------------------------------------------------------- the guard itself


def _components(graph: dict[str, set[str]]) -> list[set[str]]:
    """Strongly connected components (Tarjan): a component of two or more is a cycle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            out.append(component)

    for node in list(graph):
        if node not in index:
            visit(node)
    return out


def test_the_cycle_finder_finds_a_loop_and_only_a_loop():
    assert sorted(map(sorted, _components({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}))) \
        == [["a", "b", "c"], ["d"]]
    assert all(len(c) == 1 for c in _components({"a": {"b"}, "b": {"c"}}))


def test_the_module_cycle_check_reports_each_loop_with_its_imports_and_only_loops():
    modules = {
        "dm_cc/a.py": "import dm_cc.b\n",
        "dm_cc/b.py": "def f():\n    from dm_cc.c import C\n",     # a package: its __init__
        "dm_cc/c/__init__.py": ("from typing import TYPE_CHECKING\n"
                                "if TYPE_CHECKING:\n    from dm_cc.a import A\n"),
        "dm_cc/c/d.py": "from dm_cc.a import A\nfrom dm_cc.c.d import D\n",  # into a loop; itself
        "dm_cc/e.py": "from dm_cc.f import F, G\n",
        "dm_cc/f.py": "import os\nimport dm_cc.e\n",
    }

    def found(texts: dict[str, str]) -> list[str]:
        imports = [i for path, text in texts.items() for i in imports_of(path, text)]
        return cycles(module_edges(imports, set(texts)))

    assert found(modules) == [
        "dm_cc/a.py <-> dm_cc/b.py <-> dm_cc/c/__init__.py: "
        "dm_cc/a.py:1 imports dm_cc.b; dm_cc/b.py:2 imports dm_cc.c; "
        "dm_cc/c/__init__.py:3 imports dm_cc.a",
        "dm_cc/e.py <-> dm_cc/f.py: dm_cc/e.py:1 imports dm_cc.f; dm_cc/f.py:2 imports dm_cc.e"]
    assert found({**modules, "dm_cc/a.py": "import os\n", "dm_cc/f.py": ""}) == []


def test_every_kind_of_import_is_seen():
    text = ("from __future__ import annotations\n"
            "from typing import TYPE_CHECKING\n"
            "from . import catalog\n"
            "from ..permissions import Rule\n"
            "from dm_cc import errors\n"
            "if TYPE_CHECKING:\n    from dm_cc.core.loop import Loop\n"
            "def f():\n    import dm_cc.ui.console\n")
    found = {i.target for i in imports_of("dm_cc/tools/example.py", text)}
    assert {"dm_cc.tools.catalog", "dm_cc.permissions", "dm_cc.errors", "dm_cc.core.loop",
            "dm_cc.ui.console"} <= found
    assert target_part("dm_cc.permissions") == "permissions"
    assert target_part("dm_cc.core.loop") == "core"


def test_an_import_behind_a_front_door_is_reported_with_its_line():
    text = ("from dm_cc.permissions import Rule\n"                 # the front door
            "from dm_cc.tools.base import ToolOutput\n"            # the tools part's own module
            "from dm_cc.errors import UsageError\n"                # a part that is one file
            "from dm_cc.sandbox.derive import spec_for\n"          # its own part: module to module
            "def f():\n    from dm_cc.config import dirs\n"      # a module, named from the package
            "if True:\n    import dm_cc.permissions.engine\n")
    assert behind_doors(imports_of("dm_cc/sandbox/example.py", text)) == [
        "dm_cc/sandbox/example.py:2 imports dm_cc.tools.base (import it from dm_cc.tools)",
        "dm_cc/sandbox/example.py:6 imports dm_cc.config.dirs (import it from dm_cc.config)",
        "dm_cc/sandbox/example.py:8 imports dm_cc.permissions.engine "
        "(import it from dm_cc.permissions)"]
    assert [door(part) for part in ("cli", "permissions", "errors", "compose", "package")] == [
        "dm_cc.cli", "dm_cc.permissions", "dm_cc.errors", "dm_cc.compose", "dm_cc"]


def test_io_sneaking_into_a_pure_module_is_seen():
    derive, tree = "dm_cc/sandbox/derive.py", "dm_cc/sandbox/tree.py"
    text = (REPO / derive).read_text(encoding="utf-8")
    assert impurities(derive, derive, text) == []
    assert impurities(derive, derive, text + "import os\n") == [
        f"{derive}:{text.count(chr(10)) + 1} imports os"]
    listed = ("def listed(directory):\n"
              "    from dm_cc.sandbox.machine import LocalMachine\n"
              "    return LocalMachine().list_under(directory, 10)\n")
    assert [p.split(" ", 1)[1] for p in impurities(derive, derive, text + listed)] == [
        "imports dm_cc.sandbox.machine"]
    assert [p.split(" ", 1)[1] for p in impurities(derive, derive, text + (
        "from dm_cc.permissions.engine import subject\n"
        "from dm_cc.sandbox.host import Sandbox\n"))] == [
        "imports dm_cc.permissions.engine", "imports dm_cc.sandbox.host"]
    assert [p.split(" ", 1)[1] for p in impurities(derive, derive, text + (
        "def peek(where):\n    print(open(where.root.iterdir()))\n"))] == [
        "calls print()", "calls open()", "calls .iterdir() on a directory"]
    # a listing put back beside the tree makes the tree impure in turn
    lister = "import os\ndef list_under(directory):\n    return list(os.scandir(directory))\n"
    assert [p.split(" ", 1)[1] for p in impurities(tree, tree, lister)] == ["imports os"]
