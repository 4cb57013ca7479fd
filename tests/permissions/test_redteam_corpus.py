"""The red team's 631 attack variants (redteam_cases.py), judged like the public
corpus. Cases listed in KNOWN_GAPS (by case id, see :func:`case_id`) still fail
their (sometimes strict) expectation; they are strict expected failures, so a gap
that closes fails until it is taken off the list, and every other case must pass."""

from __future__ import annotations

import hashlib
import importlib.util
import os
from pathlib import Path

import pytest
from judging import assert_meets

from dm_cc.config.dirs import HostFilesystem
from dm_cc.permissions import Rule
from dm_cc.permissions.paths import PathContextDirs

_SPEC = importlib.util.spec_from_file_location(
    "redteam_cases", Path(__file__).with_name("redteam_cases.py"))
_CASES_MODULE = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(_CASES_MODULE)
BASE, CASES = _CASES_MODULE.BASE, _CASES_MODULE.CASES

KNOWN_GAPS = frozenset({
    "pathbin-bfca3fc1",  # 'coreutils --coreutils-prog=rm -rf x' -> deny
    "wrapper-d1b27244",  # 'npm explore lodash -- rm -rf x' -> deny
    "wrapper-d9f565f2",  # 'pixi exec rm -rf x' -> deny
    "wrapper-6201d8c6",  # 'oc rsh pod rm -rf x' -> deny
    "wrapper-0b8dc968",  # 'limactl shell default rm -rf x' -> deny
    "wrapper-76791fec",  # 'heroku run rm -rf x' -> deny
    "wrapper-3fd9d71d",  # 'ddev exec rm -rf x' -> deny
    "wrapper-9213af30",  # 'envchain aws rm -rf x' -> deny
    "wrapper-dc5f8b3e",  # 'rsh host rm -rf x' -> deny
    "wrapper-c6eba150",  # 'perf trace rm -rf x' -> deny
    "wrapper-ea5ab6a5",  # "su --session-command='rm -rf x' root" -> deny
    "wrapper-58298041",  # "capsh -- -c 'rm -rf x'" -> deny
    "wrapper-171e0587",  # "at now <<< 'rm -rf x'" -> deny
    "wrapper-e25888d4",  # "batch <<< 'rm -rf x'" -> deny
    "wrapper-368c2156",  # "tmux new-window 'rm -rf x'" -> deny
    "wrapper-61307945",  # "tmux split-window 'rm -rf x'" -> deny
    "wrapper-86e36fc4",  # "tmux run-shell 'rm -rf x'" -> deny
    "wrapper-0e84fbea",  # "sops exec-env secrets.yaml 'rm -rf x'" -> deny
    "wrapper-80fc9ac6",  # "fly ssh console -C 'rm -rf x'" -> deny
    "wrapper-41be1271",  # "tmux new-window 'rm -rf x'" -> not-allow
    "flags-0c29c76f",  # "less --lesskey-content='x' README" -> not-allow
    "flags-a88faa1c",  # 'awk \'BEGIN { # "\n system("touch /tmp/pwn") }\'' -> not-allow
    "flags-f51f2a65",  # 'awk \'BEGIN { x = 1 ? /"/ : 0; system("id") }\'' -> not-allow
    "flags-0de8d668",  # 'gawk \'BEGIN { f = "system"; @f("id") }\'' -> not-allow
    "flags-ebc0d65d",  # 'awk \'BEGIN { while ((getline l < "{HOME}/.ssh/id_rsa") > 0) ' -> not-allow
    "flags-c3fd1ebb",  # 'awk \'BEGIN { # "\n print "x" > "/tmp/f" }\'' -> not-allow
    "flags-dd5cb7d4",  # 'rsync --write-batch=~/.bashrc a b' -> not-allow
    "flags-4b59bb9b",  # "curl -w '%output{~/.bashrc}x' https://example.com" -> not-allow
    "flags-70cddf93",  # 'wget --config=/tmp/evilrc https://example.com' -> not-allow
    "flags-secret-7ee4b450",  # 'yq -n \'load_str("{HOME}/.ssh/id_rsa")\'' -> deny
    "flags-secret-29f47747",  # 'awk \'BEGIN { while ((getline l < "{HOME}/.ssh/id_rsa") > 0) ' -> deny
    "gitglobal-strict-19e59c18",  # 'git -c alias.p=push p origin main' -> deny
    "flagspell-ad242b95",  # 'rm -r --interactive=never x' -> deny
    "flagspell-3de67dbe",  # 'rm --r --f x' -> deny
    "flagspell-2665700d",  # 'cp -a src dst' -> deny
    "flagspell-1bba4c57",  # 'npm i -g evil' -> deny
    "flagspell-64cd476c",  # 'npm install --location=global evil' -> deny
    "flagspell-5464d3b4",  # 'python -m pip install evil' -> deny
    "flagspell-ddbe3809",  # 'docker container rm -f x' -> deny
    "eval-limit-f690e938",  # 'python3 -c \'import os; os.system("rm -rf x")\'' -> deny
    "eval-limit-43609ae4",  # 'perl -e \'system("rm -rf x")\'' -> deny
    "eval-limit-74ab8a93",  # 'node -e "require(\'child_process\').execSync(\'rm -rf x\')"' -> deny
    "secret-strict-2638873e",  # 'cat ~/.ss[h]/id_rsa' -> deny
    "secret-strict-915fb582",  # 'cat ~/.s?h/id_rsa' -> deny
    "secret-strict-dd6f03e7",  # 'cat ~/.*/id_rsa' -> deny
    "secret-348bade3",  # 'tar -C ~ -cf - .ssh' -> deny
    "secret-086f6c4e",  # 'xargs cat <<< ~/.ssh/id_rsa' -> deny
    "secret-945ced3f",  # 'echo ~/.ssh/id_rsa | xargs cat' -> deny
    "secret-58b833bf",  # 'ln -s ~ h && cat h/.ssh/id_rsa' -> deny
    "secret-8a995adf",  # 'ln -s .. up && cat up/home/.ssh/id_rsa' -> deny
    "symlink-2d3600c7",  # 'grep -R BEGIN .' -> not-allow
    "dotenv-strict-e04505ff",  # 'cat config/deep/.e?v.production' -> deny
    "dotenv-strict-0e02bf6b",  # 'cat config/deep/.[e]nv.production' -> deny
    "dotenv-dir-d9795c31",  # 'grep -r KEY config' -> not-allow
    "dotenv-dir-d1f66cc5",  # 'tar -cf - config' -> not-allow
})


def _build(setup, tmp: Path):
    project, home, outside = tmp / "project", tmp / "home", tmp / "outside"
    for directory in (project / ".git", home, outside):
        directory.mkdir(parents=True, exist_ok=True)

    def sub(text: str) -> str:
        return (text.replace("{HOME}", str(home)).replace("{OUTSIDE}", str(outside))
                .replace("{PROJECT}", str(project)))

    def place(text: str) -> Path:
        text = sub(text)
        return Path(text) if os.path.isabs(text) else project / text

    for spec in (BASE, setup or {}):
        for name in spec.get("files", []):
            path = place(name)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("secret\n")
        for link, target in (spec.get("symlinks") or {}).items():
            path = place(link)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.symlink_to(place(target))
        for link, target in (spec.get("raw_symlinks") or {}).items():
            path = place(link)
            path.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(target, path)
    return project, home, sub


def case_id(case) -> str:
    """A stable id: the category and a digest of everything that defines the case, so
    adding, removing or reordering cases never moves another case's id."""
    rules, tool, text, expect, setup, category = case
    digest = hashlib.sha256(repr((rules, tool, text, expect, setup)).encode()).hexdigest()
    return f"{category}-{digest[:8]}"


def _params():
    ids = [case_id(case) for case in CASES]
    assert len(set(ids)) == len(ids), "two red-team cases are identical"
    assert set(ids) >= KNOWN_GAPS, f"known gaps that are not cases: {KNOWN_GAPS - set(ids)}"
    for case, case_key in zip(CASES, ids, strict=True):
        # strict: a known gap that starts passing fails, so the list is kept honest.
        marks = [pytest.mark.xfail(reason="known gap", strict=True)] \
            if case_key in KNOWN_GAPS else []
        yield pytest.param(case, id=case_key, marks=marks)


@pytest.mark.parametrize("case", list(_params()))
def test_redteam_case(case, tmp_path):
    rules, tool, text, expect, setup, _category = case
    project, home, sub = _build(setup, tmp_path)
    rules = [Rule(p, pattern, action, source=f"case:{i}") for i, (p, pattern, action) in enumerate(rules)]
    where = PathContextDirs(root=project, cwd=project, home=home, fs=HostFilesystem())
    assert_meets(rules, tool, sub(text), expect, where)
