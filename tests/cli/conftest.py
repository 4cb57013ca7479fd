"""What the CLI tests share: ``cli(*argv)``, dm_cc's main run in the project."""

from __future__ import annotations

import pytest

from dm_cc.cli import main


@pytest.fixture
def cli(project, monkeypatch, capsys):
    """Run ``dm_cc ARGV…`` in ``project`` (in process): its exit status, stdout, stderr."""
    monkeypatch.chdir(project)

    def run(*argv: str) -> tuple[int, str, str]:
        capsys.readouterr()
        code = main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err

    return run
