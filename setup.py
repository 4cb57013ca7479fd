"""The build's one step beyond pyproject.toml: the shipped policies into the package.

The policies dm_cc ships have one copy, ``policies/`` at the top of the repository
(docs/policies.md). Package data can only come from inside a package, so a build
copies that directory into the package as ``dm_cc/policy/shipped/policies/``, where
``dm_cc.policy.shipped`` finds it in an installed dm_cc. An editable install copies
nothing: the checkout's ``policies/`` is read where it is. ``MANIFEST.in`` carries
the directory into an sdist, so that a wheel built from the sdist has it too.
"""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

SOURCE = Path(__file__).resolve().parent / "policies"
TARGET = ("dm_cc", "policy", "shipped", "policies")


class BuildPy(build_py):
    """build_py, then the shipped policies (``policies/**/*.yaml``) into the package."""

    def run(self) -> None:
        super().run()
        if self.editable_mode:
            return
        for source in sorted(SOURCE.rglob("*.yaml")):
            target = Path(self.build_lib, *TARGET, source.relative_to(SOURCE))
            self.mkpath(str(target.parent))
            self.copy_file(str(source), str(target))


setup(cmdclass={"build_py": BuildPy})
