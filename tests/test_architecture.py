"""Dependencies point inward; heavy libraries stay behind one module each."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "dm_cc"


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def _modules(under: Path):
    for path in sorted(under.rglob("*.py")):
        yield path.relative_to(PACKAGE.parent).as_posix(), _imports(path)


def test_permissions_imports_nothing_else_from_dm_cc():
    offenders = {
        module: sorted(name for name in names
                       if name.startswith("dm_cc") and not name.startswith("dm_cc.permissions"))
        for module, names in _modules(PACKAGE / "permissions")
    }
    assert {m: n for m, n in offenders.items() if n} == {}


def test_litellm_only_in_the_llm_adapter_and_mcp_only_in_the_bridge():
    for module, names in _modules(PACKAGE):
        tops = {name.split(".")[0] for name in names}
        if "litellm" in tops:
            assert module.startswith("dm_cc/llm/"), module
        if "mcp" in tops:
            assert module == "dm_cc/mcp_bridge.py", module


def test_policy_commands_do_not_import_heavy_libraries(tmp_path):
    code = (
        "import sys; from dm_cc.cli import main; "
        "main(['policy', 'check', 'bash', 'git status && ls']); "
        "print(sorted(m for m in ('litellm', 'mcp', 'openai', 'prompt_toolkit') if m in sys.modules))"
    )
    env = {**os.environ, "DM_CC_HOME": str(tmp_path / "home"),
           "DM_CC_MANAGED_DIR": str(tmp_path / "managed")}
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, check=True,
                         capture_output=True, text=True).stdout
    assert out.strip().splitlines()[-1] == "[]"
