"""Whether the person trusts what a project's own files say (DESIGN.md §10).

A project speaks to dm_cc through its policy files, agent files and config
(:func:`~dm_cc.config.dirs.project_files`). Whoever wrote the repository wrote
them, so they count only once the person trusts their exact content: a SHA-256 of
each file's bytes, saved with the project's approvals (``dm_cc trust``, or the
REPL's question at start). A file whose content changed since is untrusted again.

    trust = ProjectTrust.of(root, saved={".dm_cc/policy.yaml": "sha256:…"})
    trust.trusts(root / ".dm_cc" / "policy.yaml")   # its bytes are those trusted
    trust.pending                                   # what a question would show

Untrusted, a policy file's deny and ask rules still apply (a repository may always
tighten); its allow rules, an untrusted agent's loosening and an untrusted config's
values do not. The managed policy (or the person's own) may forbid trusting any
project (``trust_projects: false``); ``--trust-project`` trusts what is there for
one run without saving it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, NamedTuple

from dm_cc.config.dirs import project_files

Change = Literal["new", "changed"]


def digest(data: bytes) -> str:
    """How a file's content is named in the trust store: ``sha256:<hex>``."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


class ProjectFile(NamedTuple):
    """One of the project's own files: its path from the root and its content's digest
    (None: it could not be read, so it cannot be trusted)."""

    relative: str
    digest: str | None


@dataclass(frozen=True)
class ProjectTrust:
    """The project's files, what the person trusted of them, and what may be trusted."""

    root: Path
    files: tuple[ProjectFile, ...] = ()
    saved: Mapping[str, str] = field(default_factory=dict)   # relative path → digest
    forbidden: str | None = None      # where trusting projects is forbidden (file:line)
    granted: bool = False             # --trust-project: this run trusts what is there

    @classmethod
    def of(cls, root: Path, saved: Mapping[str, str] = {}, *, forbidden: str | None = None,
           granted: bool = False) -> ProjectTrust:
        files = []
        for path in project_files(root):
            try:
                content: str | None = digest(path.read_bytes())
            except OSError:
                content = None
            files.append(ProjectFile(path.relative_to(root).as_posix(), content))
        return cls(root, tuple(files), dict(saved), forbidden, granted)

    def _trusted(self, file: ProjectFile) -> bool:
        if self.forbidden is not None or file.digest is None:
            return False
        return self.granted or self.saved.get(file.relative) == file.digest

    def trusts(self, path: Path) -> bool:
        """Whether the project file at ``path`` (absolute, under the root) is trusted."""
        try:
            relative = path.relative_to(self.root).as_posix()
        except ValueError:
            return False
        return any(f.relative == relative and self._trusted(f) for f in self.files)

    @property
    def trusted(self) -> tuple[ProjectFile, ...]:
        return tuple(f for f in self.files if self._trusted(f))

    @property
    def pending(self) -> tuple[tuple[ProjectFile, Change], ...]:
        """The files not trusted, each ``new`` (never trusted) or ``changed`` (its
        content differs from what was trusted)."""
        return tuple((f, "changed" if f.relative in self.saved else "new")
                     for f in self.files if not self._trusted(f))

    @property
    def asks(self) -> bool:
        """Whether there is something the person could be asked to trust."""
        return self.forbidden is None and any(f.digest for f, _ in self.pending)

    def to_save(self) -> dict[str, str]:
        """What trusting the project now saves: every readable file's digest."""
        return {f.relative: f.digest for f in self.files if f.digest is not None}
