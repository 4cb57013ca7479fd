"""What the CLI tests share: ``cli(*argv)``, dm_cc's main run in the project;
``listener``, a loopback server keeping every request (support/recorder.py)."""

from __future__ import annotations

import pytest
from support.recorder import listener  # noqa: F401 - a fixture for the tests here

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
