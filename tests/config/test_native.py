"""pydantic_core's compiled module without its package's Python (config/native.py): the
same classes as ``import pydantic_core`` gives, before and after it, and a policy file's
validation error still names its line. Each check runs in a fresh interpreter: this
one has long imported pydantic_core."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def run(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_compiled_module_alone_then_the_package_shares_its_classes():
    out = run("""
        import sys
        from dm_cc.config import pydantic_core_native
        native = pydantic_core_native()
        print(sorted(m for m in sys.modules if m.startswith(("pydantic", "typing_extensions"))))
        validator = native.SchemaValidator({"type": "int"})
        try:
            validator.validate_python("x")
        except native.ValidationError as exc:
            caught = exc
        import pydantic_core  # what pydantic and litellm import, later in a session
        print(pydantic_core.ValidationError is native.ValidationError,
              pydantic_core.SchemaValidator is native.SchemaValidator,
              isinstance(caught, pydantic_core.ValidationError),
              pydantic_core_native() is native, caught.errors()[0]["type"])
        from pydantic_core import _pydantic_core
        print(_pydantic_core is native)
        """)
    assert out.splitlines() == ["['pydantic_core._pydantic_core']",
                                "True True True True int_parsing", "True"]


def test_after_the_package_it_is_the_package_s_module():
    out = run("""
        import pydantic_core
        from dm_cc.config import pydantic_core_native
        print(pydantic_core_native() is pydantic_core._pydantic_core)
        """)
    assert out.strip() == "True"


def test_a_policy_file_validated_this_way_names_the_bad_line(tmp_path):
    policy = tmp_path / "policy.yaml"
    policy.write_text("rules:\n  - {permission: bash, pattern: 'git *', action: maybe}\n")
    out = run(f"""
        from pathlib import Path
        from dm_cc.errors import PolicyError
        from dm_cc.policy.loader import load_policy_file
        try:
            load_policy_file(Path({str(policy)!r}))
        except PolicyError as exc:
            print(exc)
        """)
    assert "policy.yaml:2: rules[0].action: Input should be 'allow', 'deny' or 'ask'" in out
