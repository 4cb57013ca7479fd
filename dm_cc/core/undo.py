"""A session's undo steps (docs/undo.md), as the loop keeps and takes them back.

    steps = Steps(store, rights, root)
    ctx.undo = steps.step            # a tool's (or a command's changes') new step
    steps.undo(session, step)        # /undo: the model is told what is back
    steps.rewind(session, index)     # /rewind: files, then the history, both or neither

A step belongs to the session the person talks to (a subagent's change too, so
/undo and /rewind cover it), at its turn: the index of its last user message.
"""

from __future__ import annotations

from pathlib import Path

from dm_cc.core.rights import Rights
from dm_cc.errors import UsageError
from dm_cc.session import Message, Recorder, Session, UndoResult, UndoStore

UNDONE_PATHS = 20     # paths named to the model after an /undo; the rest are counted


class Steps:
    """The undo steps of one loop's session tree (see the module docstring)."""

    def __init__(self, store: UndoStore | None, rights: Rights, root: Path) -> None:
        self.store = store
        self.rights = rights
        self.root = root

    def step(self, label: str) -> Recorder:
        """A new undo step, of the top session at its turn."""
        store = self._store()
        owner = self.rights.top_session
        turn = next((index for index in range(len(owner.messages) - 1, -1, -1)
                     if owner.messages[index].role == "user"), 0)
        return store.recorder(owner.info.id, self.root, label, turn=turn)

    def undo(self, session: Session, agent: str, step: int | None = None) -> UndoResult:
        """Undo ``session``'s last step, or every step from ``step`` on; the model is
        told what was put back. UsageError when no steps are kept."""
        result = self._store().undo(session.info.id, step)
        if result.undone:
            session.append(Message("user", _undone_text(result), agent=agent, synthetic=True))
        return result

    def rewind(self, session: Session, index: int) -> UndoResult | None:
        """Undo every step of ``session`` from message ``index``'s turn on, then cut the
        history there -- both, or, when the undo is refused or fails, neither. None:
        there was no step to undo."""
        if not 0 <= index < len(session.messages):
            raise UsageError(f"no message {index} in this session")
        result = None
        if self.store is not None:
            later = [step.number for step in self.store.steps(session.info.id)
                     if step.turn >= index]
            if later:
                result = self.store.undo(session.info.id, min(later))
                if not result.ok:
                    return result
        session.truncate(index)
        return result

    def _store(self) -> UndoStore:
        if self.store is None:
            raise UsageError("this session keeps no undo steps")
        return self.store


def _undone_text(result: UndoResult) -> str:
    """What the model is told after the person undid steps: which, and what is back."""
    steps = "; ".join(f"step {step.number} ({step.label})" for step in result.undone)
    paths = ", ".join(result.restored[:UNDONE_PATHS])
    if len(result.restored) > UNDONE_PATHS:
        paths += f" and {len(result.restored) - UNDONE_PATHS} more"
    return (f"The user undid these changes with /undo: {steps}. These paths are as they were "
            f"before them: {paths or 'none'}. Read a file again before changing it.")
