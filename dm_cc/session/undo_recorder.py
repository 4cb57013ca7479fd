"""Recording one step: the state of each path before it changes (``keep``), and
after (``close``); the store saves it (``undo.py``, whose docstring says what is
kept and how undo uses it).

    with store.recorder(session_id, root, "bash: npm install", turn=4) as recorder:
        recorder.keep("package-lock.json", moving=True)   # replaced, never written into
        ...                                               # the change
    step = recorder.close()        # the Step saved; None when nothing changed

A caller that holds each path's parent directory open (a transaction applying its
changes) passes it (``at``): the path is kept, and its state after looked at
(``landed``), without walking down from the root again for each.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from contextlib import suppress
from dataclasses import replace
from pathlib import Path

from dm_cc.errors import UndoError
from dm_cc.session.file_states import Tree, Unsafe, keep_at, look_at
from dm_cc.session.undo_records import Kept, State, Step, clean

# The store's saving of a closed step: the recorder, its changed paths, the directory
# holding their kept content (moved into the store).
Save = Callable[["Recorder", list[Kept], Path | None], Step]


class Recorder:
    """One step being recorded (made by ``UndoStore.recorder``): :meth:`keep` each
    path before it changes, :meth:`close` after. A context manager that closes on
    leaving (with or without an exception: what changed, changed). ``pending`` gives
    a new directory for the content kept, ``save`` saves the step (the store's)."""

    def __init__(self, session_id: str, root: Path, label: str, turn: int, *,
                 limit_bytes: int, pending: Callable[[], Path], save: Save) -> None:
        self.session_id = session_id
        self.root = root
        self.label = label
        self.turn = turn
        self.size = 0                     # bytes kept so far
        self.limit_bytes = limit_bytes
        self._new_pending = pending
        self._save = save
        self._kept: dict[str, Kept] = {}
        self._after: dict[str, State] = {}    # states after, told by ``landed``
        self._pending: Path | None = None
        self._broken: str | None = None
        self._closed = False
        self._step: Step | None = None

    def __enter__(self) -> Recorder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def paths(self) -> tuple[str, ...]:
        """The paths kept so far."""
        return tuple(self._kept)

    def keep(self, relative: str, *, moving: bool = False, at: int | None = None) -> None:
        """Keep the state of ``root/relative`` now, BEFORE it is changed (written in
        place, replaced, created, deleted, chmod-ed). ``moving``: the caller will
        replace or unlink the file, never write into it, so a hard link is enough.
        A path kept twice keeps its first state. UndoError when it cannot be kept (a
        path outside the root, a symlinked parent, a special file, a disk error, the
        store's size bound); after one, the recorder keeps nothing and saves no step
        (half a step would put back half a change). ``at``: the descriptor of the path's
        parent directory, opened by the caller without following a link."""
        if self._closed:
            raise UndoError(f"step {self.label!r} is closed; keep paths before closing it")
        if self._broken is not None:
            raise UndoError(self._broken)
        try:
            path = clean(relative)
        except ValueError as exc:
            raise self._break(str(exc)) from None
        if path in self._kept:
            return
        blob_name = str(len(self._kept))
        try:
            if self._pending is None:
                self._pending = self._new_pending()
            blob = os.path.join(self._pending, blob_name)    # a str: per path, pathlib costs
            if at is not None:
                state, size = keep_at(at, path, blob, moving=moving)
            else:
                with Tree(self.root) as tree:
                    state, size = tree.keep(path, blob, moving=moving)
        except Unsafe as exc:
            raise self._break(str(exc)) from None
        except OSError as exc:
            raise self._break(f"{path}: cannot keep its previous state: "
                              f"{exc.strerror or exc}") from None
        if self.size + size > self.limit_bytes:
            with suppress(OSError):
                os.unlink(blob)
            raise self._break(f"{path}: the previous state of this step passes the undo "
                              f"store's limit ({self.limit_bytes} bytes); it cannot be "
                              "undone")
        self.size += size
        self._kept[path] = Kept(path, state, blob=blob_name if state.kind == "file" else None)

    def landed(self, relative: str, at: int, *, known: tuple[int, str] | None = None) -> None:
        """``relative`` (kept) has changed: its state after is looked at now, through
        ``at`` (its parent directory's descriptor, as for :meth:`keep`), not again when
        the step closes. ``known``: the inode and sha256 of the file the caller put
        there, read whole just before (its bytes are not read again)."""
        if self._closed or self._broken is not None:
            return
        try:
            path = clean(relative)
            if path in self._kept:
                self._after[path] = look_at(at, path, known=known)
        except (ValueError, Unsafe, OSError):
            self._after.pop(relative, None)       # looked at when the step closes

    def _break(self, message: str) -> UndoError:
        self._broken = message
        return UndoError(message)

    def discard(self) -> None:
        """Save nothing: the changes were not made (or are not to be undone)."""
        self._closed = True
        self._clean_up()

    def close(self) -> Step | None:
        """Record each kept path's state now and save the step; None when nothing
        changed (or after an UndoError from :meth:`keep`, or :meth:`discard`).
        UndoError when the step cannot be saved. Closing twice returns the same."""
        if self._closed:
            return self._step
        self._closed = True
        if self._broken is not None or not self._kept:
            self._clean_up()
            return None
        try:
            changed = self._changed()
            if not changed:
                self._clean_up()
                return None
            self._step = self._save(self, changed, self._pending)
        except (Unsafe, OSError) as exc:
            self._clean_up()
            raise UndoError(f"step {self.label!r} cannot be saved for undo: {exc}") from None
        except BaseException:
            self._clean_up()
            raise
        return self._step

    def _changed(self) -> list[Kept]:
        """The kept paths with their state now, those that did not change left out (and
        their content dropped)."""
        changed: list[Kept] = []
        with Tree(self.root) as tree:
            for kept in self._kept.values():
                after = self._after.get(kept.path) or tree.look(kept.path, digest=True)
                blob = os.path.join(self._pending, kept.blob) \
                    if kept.blob and self._pending else None
                if after.same(kept.before):
                    if blob is not None:
                        with suppress(OSError):
                            os.unlink(blob)
                    continue
                if blob is not None and os.stat(blob).st_nlink > 1:
                    _make_private(Path(blob))
                changed.append(replace(kept, after=after))
        return changed

    def _clean_up(self) -> None:
        if self._pending is not None:
            shutil.rmtree(self._pending, ignore_errors=True)
            self._pending = None


def _make_private(blob: Path) -> None:
    """Give a hard-linked copy a content of its own: the file it was linked from is
    still there (it was changed in place, e.g. chmod-ed), and a later write into it
    must not change what undo puts back."""
    private = blob.with_name(blob.name + ".copy")
    shutil.copyfile(blob, private)
    os.chmod(private, 0o600)
    os.replace(private, blob)
