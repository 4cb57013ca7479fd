"""Ordinary commands of coding sessions are decided as before the gate was rebuilt by
construction (issue 22): no new question, no new denial. Each line is decided under the
built-in defaults (where read-only commands are allowed and the rest asks) and under a
person's "allow every command and edit" policy (where only what cannot be known asks);
the expected decisions were recorded before issue 22's changes."""

from __future__ import annotations

import pytest
from judging import A, R, judge, project_in

from dm_cc.policy.defaults import DEFAULT_RULES

#: (line, decision under the defaults, decision under allow-all)
ORDINARY = [
    ('ls -la', 'allow', 'allow'),
    ('ls', 'allow', 'allow'),
    ('ls src tests', 'allow', 'allow'),
    ('git status', 'allow', 'allow'),
    ('git status --short', 'allow', 'allow'),
    ('git diff', 'allow', 'allow'),
    ('git diff --stat', 'allow', 'allow'),
    ('git diff HEAD~1 -- src/app.py', 'allow', 'allow'),
    ('git log --oneline -10', 'allow', 'allow'),
    ('git log -p -2 src/app.py', 'allow', 'allow'),
    ('git show HEAD', 'allow', 'allow'),
    ('git show HEAD:README.md', 'allow', 'allow'),
    ('git branch', 'allow', 'allow'),
    ('git branch --show-current', 'allow', 'allow'),
    ('git rev-parse HEAD', 'allow', 'allow'),
    ('git rev-parse --show-toplevel', 'allow', 'allow'),
    ('git ls-files', 'allow', 'allow'),
    ('git ls-files | grep test', 'allow', 'allow'),
    ('git blame src/app.py', 'allow', 'allow'),
    ('git remote -v', 'allow', 'allow'),
    ('cat README.md', 'allow', 'allow'),
    ('cat src/app.py | head -50', 'allow', 'allow'),
    ('head -20 src/app.py', 'allow', 'allow'),
    ('tail -f log.txt', 'allow', 'allow'),
    ('wc -l src/*.py', 'ask', 'ask'),
    ('grep -rn "TODO" src', 'allow', 'allow'),
    ("grep -rn foo src --include='*.py'", 'allow', 'allow'),
    ('grep -c def src/app.py', 'allow', 'allow'),
    ('rg foo', 'allow', 'allow'),
    ('rg -n "def main" src', 'allow', 'allow'),
    ('rg --files', 'allow', 'allow'),
    ("find . -name '*.py'", 'allow', 'allow'),
    ("find . -type f -name '*.md' | head", 'allow', 'allow'),
    ('find src -maxdepth 2 -type d', 'allow', 'allow'),
    ('tree -L 2', 'allow', 'allow'),
    ('tree src', 'allow', 'allow'),
    ('du -sh src', 'allow', 'allow'),
    ('du -sh *', 'ask', 'ask'),
    ('df -h', 'allow', 'allow'),
    ('sort names.txt | uniq -c', 'allow', 'allow'),
    ('cut -d, -f1 data.csv | sort | uniq', 'allow', 'allow'),
    ('diff a.txt b.txt', 'allow', 'allow'),
    ('diff -u old.py new.py', 'allow', 'allow'),
    ('echo hello', 'allow', 'allow'),
    ('echo $PATH', 'ask', 'ask'),
    ('pwd', 'allow', 'allow'),
    ('which python3', 'allow', 'allow'),
    ('uname -a', 'allow', 'allow'),
    ('date', 'allow', 'allow'),
    ('file src/app.py', 'allow', 'allow'),
    ('stat README.md', 'allow', 'allow'),
    ('realpath src', 'allow', 'allow'),
    ('basename src/app.py', 'allow', 'allow'),
    ('dirname src/app.py', 'allow', 'allow'),
    ('readlink -f src', 'allow', 'allow'),
    ('true', 'allow', 'allow'),
    ('pytest', 'ask', 'allow'),
    ('pytest -q tests/unit', 'ask', 'allow'),
    ('python -m pytest -x', 'ask', 'allow'),
    ('python3 manage.py migrate', 'ask', 'allow'),
    ('python3 -m pip install -r requirements.txt', 'ask', 'allow'),
    ('pip install -e .', 'ask', 'allow'),
    ('npm install', 'ask', 'allow'),
    ('npm test', 'ask', 'allow'),
    ('npm run build', 'ask', 'allow'),
    ('npm run lint', 'ask', 'allow'),
    ('npm i', 'ask', 'allow'),
    ('npx tsc --noEmit', 'ask', 'allow'),
    ('make', 'ask', 'allow'),
    ('make test', 'ask', 'allow'),
    ('make -j4', 'ask', 'allow'),
    ('cargo build', 'ask', 'allow'),
    ('cargo test', 'ask', 'allow'),
    ('cargo run', 'ask', 'allow'),
    ('go build ./...', 'ask', 'allow'),
    ('go test ./...', 'ask', 'allow'),
    ('ruff check .', 'ask', 'allow'),
    ('mypy src', 'ask', 'allow'),
    ('black .', 'ask', 'allow'),
    ('tar xzf archive.tgz', 'ask', 'allow'),
    ('tar czf out.tgz src', 'ask', 'allow'),
    ('unzip x.zip', 'ask', 'allow'),
    ('mkdir -p build && cd build && cmake ..', 'ask', 'allow'),
    ('cd src && ls', 'ask', 'allow'),
    ('cd frontend && npm test', 'ask', 'allow'),
    ('git add -A && git commit -m "fix bug"', 'ask', 'allow'),
    ('git checkout -b feature', 'ask', 'allow'),
    ('git stash && git pull && git stash pop', 'ask', 'allow'),
    ('git push origin HEAD', 'ask', 'allow'),
    ('rm -rf build', 'ask', 'allow'),
    ('cp a.txt b.txt', 'ask', 'allow'),
    ('mv a.txt b.txt', 'ask', 'allow'),
    ('touch x.py', 'ask', 'allow'),
    ('chmod +x run.sh', 'ask', 'allow'),
    ('./run.sh', 'ask', 'ask'),
    ('bash setup.sh', 'ask', 'allow'),
    ("sh -c 'echo hi'", 'ask', 'allow'),
    ('curl -s https://example.com', 'ask', 'allow'),
    ('docker build -t app .', 'ask', 'allow'),
    ('docker compose up -d', 'ask', 'allow'),
    ("sed -i 's/foo/bar/' src/app.py", 'ask', 'allow'),
    ("awk '{print $1}' data.csv", 'ask', 'allow'),
    ('jq .name package.json', 'ask', 'allow'),
    ('ls -la | grep foo', 'allow', 'allow'),
    ('ps aux | grep python', 'ask', 'allow'),
    ('kill 1234', 'ask', 'allow'),
    ('env | grep PATH', 'ask', 'allow'),
    ('export FOO=bar', 'ask', 'allow'),
    ('source .venv/bin/activate', 'ask', 'allow'),
    ('for f in *.py; do echo $f; done', 'ask', 'ask'),
    ('if [ -f x ]; then echo yes; fi', 'allow', 'allow'),
    ('cat <<EOF > notes.txt\nhello\nEOF', 'ask', 'allow'),
    ("python3 - <<'EOF'\nprint(1)\nEOF", 'ask', 'allow'),
    ('echo "done" 2>&1 | tee log.txt', 'ask', 'allow'),
    ('ls 2>/dev/null || true', 'allow', 'allow'),
    ("git log --format='%H %s' | head -3", 'allow', 'allow'),
    ('git diff --name-only | xargs ruff check', 'ask', 'allow'),
]

EVERYTHING = [A("*"), R("edit", "**", "allow"), R("bash", "rm -rf /*", "deny")]


@pytest.fixture(scope="module")
def where(tmp_path_factory):
    return project_in(tmp_path_factory.mktemp("ordinary"))


@pytest.mark.parametrize("line,defaults,everything", ORDINARY,
                         ids=[line[:50] for line, _, _ in ORDINARY])
def test_an_ordinary_command_is_decided_as_before(line, defaults, everything, where):
    assert judge(list(DEFAULT_RULES), "bash", line, where).action == defaults
    assert judge([*DEFAULT_RULES, *EVERYTHING], "bash", line, where).action == everything
