"""Saved "always allow" answers, one readable file per project in the data dir.

    <data dir>/approvals/<project name>-<sha256(resolved root)[:12]>.json
    {
      "version": 1,
      "project": "/abs/root",
      "approvals": [
        {"id": "apr_3f9c0a1b2c4d", "permission": "bash", "pattern": "npm test *",
         "agent": "build", "created": 1718000000.0, "expires": null,
         "note": "approved for bash in session ses_…"}
      ]
    }

An approval is an allow rule for one agent (:meth:`SavedApproval.rule`): one given
to ``build`` opens nothing for ``plan``. A permission whose approvals last one session
(``NEVER_SAVED``: doom_loop, sandbox_escape) is refused by :meth:`ApprovalStore.add`,
and an entry of one found in the file gives no rule. Its permission is exact (no ``*`` or
``?``); its pattern is the rule's pattern. Where it sits among the layers, and
that it never beats a configured deny, a managed rule or the ceiling, is the
gate's business (``dm_cc.permissions.gate``), not this store's.

The same file keeps which project-defined MCP servers the person trusts: an entry
whose permission is :data:`SERVER_TRUST` (``mcp_server``), agent ``*`` (the whole
project) and pattern ``<server> sha256:<hex>`` (the definition's fingerprint, see
``dm_cc.config.mcp_servers``); and which of the project's own files (policy,
agents, config) the person trusts, each an entry of :data:`FILE_TRUST`
(``project_file``) whose pattern is ``<path from the root> sha256:<hex>`` of the
content trusted (``dm_cc.config.trust``). They are no rules: :meth:`ApprovalStore.rules_for`
never returns them; ``dm_cc mcp trust|untrust`` and ``dm_cc trust|untrust`` change
them, ``dm_cc approvals list`` shows them and ``revoke`` removes them like any entry.

Durability: every change is a read-modify-write under an exclusive ``flock`` on the
sibling ``<name>.lock`` (never deleted: removing a lock file races its next
user); the new content goes to a temporary file in the same directory (0600),
is fsynced, then ``os.replace``-d over the old one, and the directory is fsynced.
The directory is 0700. Concurrent changes from any number of processes serialise
on the lock, so none is lost. Expired approvals are dropped by the next change.

Reads take no lock: ``os.replace`` is atomic, so a reader sees the old file or the
new one, whole. A change that would not alter the file (adding an approval that
is already there) does not write.

Scale ("always" answers accumulate over months): a read checks every entry and the
ids' uniqueness in linear time; a store object parses the same bytes once (it
remembers the last content it read or wrote, compared whole, so another process's
change is always seen); the file is written as ``json.dumps(indent=2)`` would write
it, field by field. How a lookup avoids scanning them is the engine's index (the
approvals are a layer of the gate, docs/approvals.md).

Damage (not UTF-8 or JSON, the wrong shape, a bad entry, an unknown version) is
never emptied away silently. Whoever finds it, a read or a change, takes the
exclusive lock, looks again (another process may have dealt with it), moves the
damaged file aside to ``<name>.corrupt-<timestamp>`` with its bytes unchanged and
raises :class:`~dm_cc.errors.ApprovalStoreError` naming the file (and line, when
JSON gives one) and where it went. The next read sees an empty store and the next
change starts a fresh file. A missing file is an empty store.
"""

from __future__ import annotations

import builtins
import hashlib
import math
import os
import re
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dm_cc.config import locked, replace_file, set_aside
from dm_cc.errors import ApprovalStoreError

if TYPE_CHECKING:  # the engine is imported where a rule is made (not by `approvals list`)
    from dm_cc.permissions import Rule

VERSION = 1
_FIELDS = ("id", "permission", "pattern", "agent", "created", "expires", "note")
_FIELD_SET = frozenset(_FIELDS)
_BIG = 2**1000  # an integer beyond this is no finite float (``math.isfinite`` overflows)
_ID = re.compile(r"apr_[0-9a-f]{1,32}")
_DURATION = re.compile(r"(?:\d{1,9}[smhdw])+")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
MAX_DURATION = 3650 * 86400  # ten years: longer is "until revoked" (no --for)
SERVER_TRUST = "mcp_server"  # the permission of a trusted MCP server's entry (no rule)
FILE_TRUST = "project_file"  # the permission of a trusted project file's entry (no rule)
FILE_ASKED = "project_file_asked"  # a project file's content the person was asked to trust
TRUST_KINDS = frozenset({SERVER_TRUST, FILE_TRUST, FILE_ASKED})
WHOLE_PROJECT = "*"          # their agent: trust is the project's, not one agent's


@dataclass(frozen=True, slots=True)
class SavedApproval:
    """One saved answer: allow ``permission`` ``pattern`` for ``agent``, until
    ``expires`` (epoch seconds; None: until revoked). ValueError if malformed."""

    id: str
    permission: str
    pattern: str
    agent: str
    created: float
    expires: float | None = None
    note: str = ""

    def __post_init__(self) -> None:
        if self._plainly_valid():
            return
        for name in ("id", "permission", "pattern", "agent", "note"):
            if not isinstance(getattr(self, name), str):
                raise ValueError(f"{name} must be a string")
        if not _ID.fullmatch(self.id):
            raise ValueError(f"bad id {self.id!r} (expected apr_ and hex digits)")
        if not self.permission or "*" in self.permission or "?" in self.permission:
            raise ValueError(f"bad permission {self.permission!r}: an exact name, no * or ?")
        for name in ("pattern", "agent"):
            if not getattr(self, name):
                raise ValueError(f"{name} must not be empty")
        _check_seconds("created", self.created)
        if self.expires is not None:
            _check_seconds("expires", self.expires)

    def _plainly_valid(self) -> bool:
        """The checks below in one expression, for the usual entry (exact types): a
        store of 10,000 approvals checks every one on each read. False: check each
        (and say which is wrong)."""
        permission, created, expires = self.permission, self.created, self.expires
        return (type(self.id) is str and type(permission) is str and type(self.pattern) is str
                and type(self.agent) is str and type(self.note) is str
                and bool(permission) and bool(self.pattern) and bool(self.agent)
                and "*" not in permission and "?" not in permission
                and _ID.fullmatch(self.id) is not None
                and (type(created) is float and -math.inf < created < math.inf
                     or type(created) is int and -_BIG < created < _BIG)
                and (expires is None or type(expires) is float and -math.inf < expires < math.inf
                     or type(expires) is int and -_BIG < expires < _BIG))

    def saved_on(self) -> str:
        """The local date it was saved (``saved 2026-11-02``), as its rule says."""
        try:
            return time.strftime("saved %Y-%m-%d", time.localtime(self.created))
        except (OverflowError, OSError, ValueError):  # a hand-edited year 10000
            return f"saved at {self.created:.0f}"

    def expired(self, now: float) -> bool:
        return self.expires is not None and self.expires <= now

    def rule(self) -> Rule:
        from dm_cc.permissions import Rule

        reason = self.saved_on() + (f": {self.note}" if self.note else "")
        return Rule(self.permission, self.pattern, "allow", reason=reason,
                    source=f"approval:{self.id}")

    def to_json(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in _FIELDS}

    @staticmethod
    def json_list(approvals: Iterable[SavedApproval]) -> str:
        """``json.dumps([a.to_json() for a in approvals], indent=2, ensure_ascii=False)``,
        the same text, in a fraction of the time (``approvals list --json``)."""
        return _indented(approvals, "")

    @classmethod
    def from_json(cls, entry: object) -> SavedApproval:
        if not isinstance(entry, dict):
            raise ValueError("not a JSON object")
        if entry.keys() == _FIELD_SET:  # the usual case, in one comparison
            return cls(**entry)
        if missing := [name for name in _FIELDS if name not in entry]:
            raise ValueError(f"missing {', '.join(missing)}")
        if unknown := sorted(set(entry) - set(_FIELDS)):
            raise ValueError(f"unknown field {', '.join(map(repr, unknown))}")
        return cls(**entry)


def _check_seconds(name: str, value: object) -> None:
    """ValueError unless ``value`` is a finite number (not a bool) of seconds."""
    kind = type(value)
    if kind is not float and kind is not int and (
            isinstance(value, bool) or not isinstance(value, int | float)):
        raise ValueError(f"{name} must be a number of seconds since the epoch")
    try:
        finite = math.isfinite(value)  # type: ignore[arg-type]
    except OverflowError:  # an integer too large for a float (a hand-edited 1e400)
        finite = False
    if not finite:
        raise ValueError(f"{name} must be a number of seconds since the epoch")


def _trusted(approval: SavedApproval, kind: str) -> tuple[str, str] | None:
    """(name, fingerprint) of a trust entry of ``kind``; None for any other entry."""
    if approval.permission != kind or approval.agent != WHOLE_PROJECT:
        return None
    # a server's name has no space (its fingerprint may); a file's path may (its digest not)
    if kind == SERVER_TRUST:
        name, _, fingerprint = approval.pattern.partition(" ")
    else:
        name, _, fingerprint = approval.pattern.rpartition(" ")
    return name, fingerprint


def _trusts(approval: SavedApproval, kind: str, name: str) -> bool:
    found = _trusted(approval, kind)
    return found is not None and found[0] == name


def parse_duration(text: str) -> int:
    """Seconds in ``30m``, ``8h``, ``1h30m``, ``7d``, ``2w`` (units s m h d w)."""
    spelled = text.strip().lower()
    if not _DURATION.fullmatch(spelled):
        raise ValueError(f"bad duration {text!r}: a number and a unit (s, m, h, d or w), "
                         "e.g. 30m, 8h, 1h30m, 7d")
    seconds = sum(int(number) * _UNITS[unit]
                  for number, unit in re.findall(r"(\d+)([smhdw])", spelled))
    if seconds <= 0:
        raise ValueError(f"bad duration {text!r}: it must be longer than zero")
    if seconds > MAX_DURATION:
        raise ValueError(f"bad duration {text!r}: at most ten years "
                         "(leave the duration out to keep the approval until revoked)")
    return seconds


NAMED = 10  # the ids an unknown id's error names; more are counted (months of answers)


def _the_saved(approvals: builtins.list[SavedApproval]) -> str:
    """The saved approvals' ids for an error: a few named, all of them counted."""
    if not approvals:
        return "there are none"
    if len(approvals) <= NAMED:
        return f"the saved ones are {', '.join(a.id for a in approvals)}"
    return (f"there are {len(approvals):,}, the newest {', '.join(a.id for a in approvals[-3:])}:"
            " `dm_cc approvals list` shows them all")


def _new_id(taken: set[str]) -> str:
    while True:
        # what secrets.token_hex(6) is, without importing secrets (hmac, random, base64)
        candidate = f"apr_{os.urandom(6).hex()}"
        if candidate not in taken:
            return candidate


class _Damage(ValueError):
    """What is wrong with a stored file (``line`` when JSON says where)."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


def _parse(data: bytes) -> tuple[str | None, list[SavedApproval]]:
    """The project and approvals of a stored file; _Damage if it is not one."""
    import json  # only a project with saved approvals has a file: not paid by every start

    try:
        document = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise _Damage(f"not UTF-8 text (byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise _Damage(f"not JSON: {exc.msg} (column {exc.colno})", exc.lineno) from None
    if not isinstance(document, dict) or set(document) != {"version", "project", "approvals"}:
        raise _Damage("not a dm_cc approvals file (expected an object with exactly "
                      "version, project and approvals)")
    version = document["version"]
    if type(version) is not int or version != VERSION:
        raise _Damage(f"unknown version {version!r} (this dm_cc reads version {VERSION})")
    project, entries = document["project"], document["approvals"]
    if project is not None and not isinstance(project, str):
        raise _Damage("project must be a string")
    if not isinstance(entries, list):
        raise _Damage("approvals must be a list")
    approvals: list[SavedApproval] = []
    ids: set[str] = set()  # the duplicate check: linear in the number of approvals
    for number, entry in enumerate(entries, start=1):
        try:
            approval = SavedApproval.from_json(entry)
        except (TypeError, ValueError) as exc:
            raise _Damage(f"approval {number}: {exc}") from None
        if approval.id in ids:
            raise _Damage(f"approval {number}: duplicate id {approval.id}")
        ids.add(approval.id)
        approvals.append(approval)
    return project, approvals


def _encode(project: str | None, approvals: builtins.list[SavedApproval]) -> bytes:
    """The file's bytes: exactly ``json.dumps(document, indent=2, ensure_ascii=False)``
    and a newline, in UTF-8 (see :func:`_indented`)."""
    import json
    from json.encoder import encode_basestring

    where = "null" if project is None else encode_basestring(project)
    text = (f'{{\n  "version": {VERSION},\n  "project": {where},\n  "approvals": '
            f'{_indented(approvals, "  ")}\n}}\n')
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate (an undecodable file name): keep it, escaped
        document = {"version": VERSION, "project": project,
                    "approvals": [approval.to_json() for approval in approvals]}
        return (json.dumps(document, indent=2) + "\n").encode("ascii")


def _number(value: float | None) -> str:
    """A number as json writes it (they are finite: SavedApproval checks)."""
    if value is None:
        return "null"
    return float.__repr__(value) if isinstance(value, float) else int.__repr__(value)


def _indented(approvals: Iterable[SavedApproval], pad: str) -> str:
    """The approvals as ``json.dumps(..., indent=2, ensure_ascii=False)`` writes their
    list ``pad`` deep, byte for byte, field by field with json's own string encoder:
    four times faster than its indenting encoder, which is pure Python."""
    from json.encoder import encode_basestring

    text = encode_basestring  # json's: the C one where there is one
    inner = pad + "    "
    entries = ",".join(
        f'\n{pad}  {{\n{inner}"id": {text(a.id)},\n{inner}"permission": {text(a.permission)},'
        f'\n{inner}"pattern": {text(a.pattern)},\n{inner}"agent": {text(a.agent)},'
        f'\n{inner}"created": {_number(a.created)},\n{inner}"expires": {_number(a.expires)},'
        f'\n{inner}"note": {text(a.note)}\n{pad}  }}'
        for a in approvals)
    return f"[{entries}\n{pad}]" if entries else "[]"


def _trust(approvals: builtins.list[SavedApproval], kind: str, name: str, fingerprint: str,
           note: str, now: float) -> SavedApproval:
    """Trust ``name`` (of ``kind``) as ``fingerprint`` says, replacing another
    fingerprint of it; the entry."""
    pattern = f"{name} {fingerprint}"
    approvals[:] = [a for a in approvals if not _trusts(a, kind, name) or a.pattern == pattern]
    for old in approvals:
        if _trusts(old, kind, name):
            return old
    new = SavedApproval(_new_id({a.id for a in approvals}), kind, pattern, WHOLE_PROJECT, now,
                        None, note)
    approvals.append(new)
    return new


class ApprovalStore:
    """The saved approvals of one project, in the file ``path`` (see the module doc)."""

    def __init__(self, path: Path, project: Path | None = None) -> None:
        self.path = path
        self.project = project
        self.lock_path = path.with_name(path.name + ".lock")
        # the bytes last read and what they hold: the same bytes are not parsed again
        self._parsed: tuple[bytes, tuple[str | None, tuple[SavedApproval, ...]]] | None = None

    @classmethod
    def for_project(cls, data_dir: Path, project_root: Path) -> ApprovalStore:
        """``data_dir/approvals/<name>-<hash12>.json``: two projects with the same
        directory name get different files."""
        root = project_root.resolve()
        slug = re.sub(r"[^A-Za-z0-9._-]+", "-", root.name).strip("-.")[:40] or "root"
        digest = hashlib.sha256(os.fsencode(root)).hexdigest()[:12]
        return cls(data_dir / "approvals" / f"{slug}-{digest}.json", root)

    # ------------------------------------------------------------------ reading

    def list(self, now: float | None = None,
             agent: str | None = None) -> builtins.list[SavedApproval]:
        """The live approvals (of ``agent`` when given), oldest first."""
        now = time.time() if now is None else now
        return [a for a in self._read() if not a.expired(now)
                and (agent is None or a.agent == agent)]

    def rules_for(self, agent: str, now: float | None = None) -> tuple[Rule, ...]:
        """The allow rules ``agent``'s live approvals give. An entry of a permission
        that is never saved (``NEVER_SAVED``: one written by hand, or by a dm_cc from
        before the rule) gives none: ``approvals list`` shows it, to revoke."""
        from dm_cc.permissions import NEVER_SAVED

        return tuple(approval.rule() for approval in self.list(now, agent)
                     if approval.permission not in TRUST_KINDS
                     and approval.permission not in NEVER_SAVED)

    def trusted_servers(self, now: float | None = None) -> dict[str, str]:
        """The project's trusted MCP servers: name → fingerprint of the definition."""
        return self._trusted(SERVER_TRUST, now)

    def trusted_files(self, now: float | None = None) -> dict[str, str]:
        """The project's own files the person trusts: path from the root → digest."""
        return self._trusted(FILE_TRUST, now)

    def asked_files(self, now: float | None = None) -> dict[str, str]:
        """The project's own files the person was asked to trust and did not: path from
        the root → digest of the content shown (not asked again until it changes)."""
        return self._trusted(FILE_ASKED, now)

    def _trusted(self, kind: str, now: float | None) -> dict[str, str]:
        return dict(found for approval in self.list(now, WHOLE_PROJECT)
                    if (found := _trusted(approval, kind)) is not None)

    # ------------------------------------------------------------------ changing

    def add(self, permission: str, pattern: str, *, agent: str, expires: float | None = None,
            note: str = "", now: float | None = None) -> SavedApproval:
        """Save an approval, or return the live one already saving the same
        permission, pattern and agent (its expiry extended if ``expires`` is later)."""
        now = time.time() if now is None else now
        if expires is not None and expires <= now:
            raise ValueError("an approval cannot expire before it is saved")
        from dm_cc.permissions import NEVER_SAVED

        if permission in NEVER_SAVED:
            raise ValueError(f"{permission} approvals are never saved (they last one "
                             f"session): {NEVER_SAVED[permission]}")
        with self._changing(now) as approvals:
            for index, old in enumerate(approvals):
                if (old.permission, old.pattern, old.agent) == (permission, pattern, agent):
                    if old.expires is not None and (expires is None or expires > old.expires):
                        approvals[index] = old = replace(old, expires=expires)
                    return old
            new = SavedApproval(_new_id({a.id for a in approvals}), permission, pattern,
                                agent, now, expires, note)
            approvals.append(new)
            return new

    def trust_server(self, name: str, fingerprint: str, *, note: str = "",
                     now: float | None = None) -> SavedApproval:
        """Trust the MCP server ``name`` as defined now (``fingerprint``); an earlier
        trust of another definition of it is replaced."""
        now = time.time() if now is None else now
        with self._changing(now) as approvals:
            return _trust(approvals, SERVER_TRUST, name, fingerprint, note, now)

    def untrust_server(self, name: str, now: float | None = None) -> bool:
        """Forget that the MCP server ``name`` is trusted; whether it was."""
        with self._changing(now) as approvals:
            kept = [a for a in approvals if not _trusts(a, SERVER_TRUST, name)]
            removed = len(kept) != len(approvals)
            approvals[:] = kept
            return removed

    def trust_files(self, files: Mapping[str, str], *, note: str = "",
                    now: float | None = None) -> None:
        """Trust the project's own ``files`` (path from the root → digest of the content
        trusted), in one change: what was trusted of other files is forgotten."""
        self._mark_files(FILE_TRUST, files, note, now)

    def asked_about_files(self, files: Mapping[str, str], *, note: str = "",
                          now: float | None = None) -> None:
        """Remember that the person was asked to trust ``files`` as they are (path →
        digest) and said no: the question comes back when one changes."""
        self._mark_files(FILE_ASKED, files, note, now)

    def _mark_files(self, kind: str, files: Mapping[str, str], note: str,
                    now: float | None) -> None:
        now = time.time() if now is None else now
        with self._changing(now) as approvals:
            approvals[:] = [a for a in approvals
                            if (found := _trusted(a, kind)) is None or found[0] in files]
            for relative, content in files.items():
                _trust(approvals, kind, relative, content, note, now)

    def carry_file(self, relative: str, before: str | None, after: str, *, note: str = "",
                   now: float | None = None) -> str | None:
        """The person changed the project file ``relative`` themselves, through dm_cc
        (``/permissions add|remove``), from the content whose digest is ``before``
        (None: there was no such file) to ``after``: what they said of the content
        before they say of the new one, and a file they made is theirs. ``trusted``
        (it was trusted, or is new), ``declined`` (they had said "not now" to it), or
        None: they had said nothing of ``before`` (someone else changed the file
        since), so nothing is carried."""
        now = time.time() if now is None else now
        with self._changing(now) as approvals:
            for kind, said in ((FILE_TRUST, "trusted"), (FILE_ASKED, "declined")):
                if before is None and kind == FILE_TRUST or any(
                        _trusted(a, kind) == (relative, before) for a in approvals):
                    _trust(approvals, kind, relative, after, note, now)
                    return said
            return None

    @property
    def _copies(self) -> Path:
        """Where the content of trusted project files is kept, by digest: what the
        question shows a change against (``<name>.trusted/<hex>``)."""
        return self.path.with_name(self.path.stem + ".trusted")

    def keep_copy(self, digest: str, content: bytes) -> None:
        """Keep ``content`` (whose digest is ``digest``, ``sha256:<hex>``) to show what
        changed in a trusted file later; not kept when it cannot be written."""
        name = digest.removeprefix("sha256:")
        if not re.fullmatch(r"[0-9a-f]{64}", name):
            return
        try:
            self._copies.mkdir(mode=0o700, parents=True, exist_ok=True)
            if not (self._copies / name).exists():
                replace_file(self._copies / name, content)
        except OSError:
            pass

    def copy_of(self, digest: str) -> bytes | None:
        """The content kept for ``digest``, or None."""
        name = digest.removeprefix("sha256:")
        if not re.fullmatch(r"[0-9a-f]{64}", name):
            return None
        try:
            return (self._copies / name).read_bytes()
        except OSError:
            return None

    def untrust_files(self, now: float | None = None) -> int:
        """Forget every trusted project file, and every "not now" said about one (so
        the next start asks again); how many files were trusted."""
        with self._changing(now) as approvals:
            trusted = sum(_trusted(a, FILE_TRUST) is not None for a in approvals)
            approvals[:] = [a for a in approvals
                            if _trusted(a, FILE_TRUST) is None and _trusted(a, FILE_ASKED) is None]
            return trusted

    def revoke(self, approval_id: str, now: float | None = None) -> SavedApproval:
        """Remove the live approval ``approval_id``; ApprovalStoreError if there is none."""
        with self._changing(now) as approvals:
            for index, approval in enumerate(approvals):
                if approval.id == approval_id:
                    return approvals.pop(index)
            raise ApprovalStoreError(str(self.path), f"no saved approval {approval_id!r} "
                                     f"({_the_saved(approvals)})")

    def clear(self, now: float | None = None) -> int:
        """Remove every approval; how many live ones there were."""
        with self._changing(now) as approvals:
            count = len(approvals)
            approvals.clear()
            return count

    # ------------------------------------------------------------------ the file

    @contextmanager
    def _locked(self) -> Iterator[None]:
        with ExitStack() as stack:
            try:
                stack.enter_context(locked(self.lock_path))
            except OSError as exc:
                raise ApprovalStoreError(str(self.path),
                                         f"cannot lock saved approvals: {exc}") from None
            yield

    @contextmanager
    def _changing(self, now: float | None) -> Iterator[builtins.list[SavedApproval]]:
        """The live approvals, under the lock, to change in place; written back
        (expired ones dropped) if the block ends normally and anything changed."""
        now = time.time() if now is None else now
        with self._locked():
            project, stored = self._load()
            live = [approval for approval in stored if not approval.expired(now)]
            yield live
            if live != stored:
                self._write(project if self.project is None else str(self.project), live)

    def _read(self) -> builtins.list[SavedApproval]:
        data = self._bytes()
        if data is None:
            return []
        try:
            return self._parsed_from(data)[1]
        except _Damage:
            with self._locked():  # look again under the lock; moved aside if still damaged
                return self._load()[1]

    def _load(self) -> tuple[str | None, builtins.list[SavedApproval]]:
        """The stored file, read under the lock: a damaged one is moved aside."""
        data = self._bytes()
        if data is None:
            return None, []
        try:
            return self._parsed_from(data)
        except _Damage as damage:
            raise self._set_aside(damage) from None

    def _parsed_from(self, data: bytes) -> tuple[str | None, builtins.list[SavedApproval]]:
        """:func:`_parse` of ``data``, remembered: a session reads the store for each
        agent, trust and server at start, and a file of 10,000 approvals takes a while
        to check. Keyed by the whole content (comparing bytes costs next to nothing), not
        by the file's size and time, which a quick change can leave as they were."""
        parsed = self._parsed
        if parsed is None or parsed[0] != data:
            project, approvals = _parse(data)
            parsed = self._parsed = (data, (project, tuple(approvals)))
        return parsed[1][0], builtins.list(parsed[1][1])

    def _bytes(self) -> bytes | None:
        try:
            return self.path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise ApprovalStoreError(str(self.path), f"cannot read saved approvals: {exc}") from None

    def _set_aside(self, damage: _Damage) -> ApprovalStoreError:
        try:
            aside = set_aside(self.path, "corrupt")
        except OSError as exc:
            return ApprovalStoreError(str(self.path), f"damaged saved approvals: {damage}; "
                                      f"could not move the file aside ({exc}): fix or remove it",
                                      damage.line)
        return ApprovalStoreError(str(self.path), f"damaged saved approvals: {damage}. The file "
                                  f"was moved aside, unchanged, to {aside}; the next approval "
                                  "saved starts a fresh file", damage.line)

    def _write(self, project: str | None, approvals: builtins.list[SavedApproval]) -> None:
        data = _encode(project, approvals)
        try:
            replace_file(self.path, data)
        except OSError as exc:
            raise ApprovalStoreError(str(self.path), f"cannot save approvals: {exc}") from None
        self._parsed = (data, (project, tuple(approvals)))  # what reading it back gives
