"""The files a project's MCP server's command line names, and what is in them, so
that trusting a server trusts the script it runs, not only the lines that start it
(``command: python, args: [tools/server.py]``, ``command: ./server.sh``,
``node ./srv/index.js``, ``uv run server.py``, ``python -m tools.server``).

    named_files(argv, directory, root)   # NamedFile(path, digest) for each, in order

The words looked at: each word of ``argv``, each whitespace-separated part of a
word (``sh -c "python x.py"``), the value of ``--opt=value``, and the files of a
module after ``-m`` (``a.b`` → ``a/b.py``, ``a/b/__main__.py``, ``a/b/__init__.py``).
Each is resolved against the directory the server runs in, and against every
directory inside the project the command line names (``uv --directory srv run
server.py``), whose DIRECTORY_ENTRIES are named too (``node ./srv``); what exists
is named:

* a regular file inside the project, every symlink resolved: ``sha256:<hex>`` of
  its content (one over MAX_HASHED_BYTES: its size and change time, ``large:…``);
* a path that resolves outside the project: not read (the person's own files are
  not the project's to change; they are shown instead): ``outside:<target>`` for
  a path inside the project that leads out (a link), ``outside:`` for a path
  named outside;
* anything else inside (a FIFO, a device): ``special``, never opened.

A word naming nothing is not a file (``stdio``, ``--port``): a file a later change
creates under that name then counts as a change. What the named files load in
turn (a module imported by the script) is not followed: only what the command
line names. Cheap: a stat per word, one read of each file named.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import NamedTuple
from urllib.parse import quote

MAX_HASHED_BYTES = 16 * 1024 * 1024   # a larger file is known by its size and change time
# What an interpreter runs when named a directory: `python srv` its __main__.py,
# `node srv` its index.js or the package.json "main" (Python docs "__main__";
# Node.js docs "Folders as modules")
DIRECTORY_ENTRIES = ("__main__.py", "index.js", "package.json")
_CHUNK = 1024 * 1024


class NamedFile(NamedTuple):
    path: str       # project-relative POSIX (absolute when outside), as the command names it
    digest: str     # sha256:<hex>, large:<size>:<ctime_ns>, outside:[<target>], special

    @property
    def checked(self) -> bool:
        """Whether its content is part of the fingerprint (inside the project)."""
        return not self.digest.startswith(("outside:", "special"))

    @property
    def outside(self) -> bool:
        return self.digest.startswith("outside:")

    @property
    def target(self) -> str:
        """Where a path of the project that leads outside it leads ('' otherwise)."""
        return self.digest.partition(":")[2] if self.outside else ""

    def token(self) -> str:
        """Its part of a fingerprint: ``<quoted path>=<digest>`` (no spaces)."""
        return f"{quote(self.path, safe='/')}={quote(self.digest, safe='/:')}"


def named_files(argv: Sequence[str], directory: Path, root: Path,
                search_path: str | None = None) -> tuple[NamedFile, ...]:
    """The files ``argv`` (run in ``directory``) names, in order, once each (see the
    module docstring). ``root`` is the project root, symlinks resolved. A program
    named without a ``/`` is also looked up on ``search_path`` (the ``PATH`` it runs
    with): found inside the project (an activated ``.venv/bin``), it is named too."""
    words = list(dict.fromkeys(_words(argv)))
    if argv and "/" not in argv[0] and search_path is not None:
        program = shutil.which(argv[0], path=search_path)
        if program and (Path(program).is_relative_to(root)
                        or Path(os.path.realpath(program)).is_relative_to(root)):
            words.insert(0, program)
    bases = [directory, *(path for word in words
                          if (path := _resolved(directory, word)) is not None
                          and path.is_relative_to(root) and path.is_dir()
                          and path != directory)]
    words += [str(base / entry) for base in bases[1:] for entry in DIRECTORY_ENTRIES]
    found: dict[str, NamedFile] = {}
    for word in words:
        for base in bases:
            lexical = Path(os.path.normpath(base / word))
            shown = _shown(lexical, root)
            if shown not in found and os.path.lexists(lexical) and not os.path.isdir(lexical):
                found[shown] = NamedFile(shown, _digest(lexical, root))
    return tuple(found.values())


def _words(argv: Sequence[str]) -> Iterator[str]:
    """Every word of ``argv`` that might name a file (see the module docstring)."""
    after_m = False
    for word in argv:
        for part in [word, *(word.split() if len(word.split()) > 1 else [])]:
            if after_m:
                yield from _module_files(part)
            after_m = part == "-m"
            if part.startswith("-"):
                if "=" in part:
                    yield part.partition("=")[2]
                continue
            if part:
                yield part


def _module_files(module: str) -> Iterator[str]:
    path = module.replace(".", "/")
    yield from (f"{path}.py", f"{path}/__main__.py", f"{path}/__init__.py")


def _resolved(base: Path, word: str) -> Path | None:
    try:
        return Path(os.path.realpath(base / word))
    except (OSError, ValueError):
        return None


def _shown(lexical: Path, root: Path) -> str:
    return lexical.relative_to(root).as_posix() if lexical.is_relative_to(root) \
        else lexical.as_posix()


def _digest(lexical: Path, root: Path) -> str:
    """What a named file is, for the fingerprint (see NamedFile.digest). Outside
    the project: where a path of the project leads (a link retargeted is a change);
    a path named outside is only named (an update of the system is none)."""
    if not lexical.is_relative_to(root):
        return "outside:"
    target = Path(os.path.realpath(lexical))
    if not target.is_relative_to(root):
        return f"outside:{target.as_posix()}"
    try:
        fd = os.open(target, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        return f"unreadable:{exc.errno}"
    with os.fdopen(fd, "rb") as file:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return "special"
        if info.st_size > MAX_HASHED_BYTES:
            return f"large:{info.st_size}:{info.st_ctime_ns}"
        digest = hashlib.sha256()
        while chunk := file.read(_CHUNK):
            digest.update(chunk)
    return f"sha256:{digest.hexdigest()}"
