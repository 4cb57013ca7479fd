"""Undoing steps on the files: first whether every path can go back (:func:`obstacles`:
all or nothing), then putting each step's paths back (:func:`restore`). The store
(``undo.py``) chooses the steps and forgets each once it is undone.

    reasons = obstacles(records, blobs_of)      # newest first; [] when all can go back
    for record in records:
        restore(record, blobs_of(record.step), restored, left)

Checked, for each path, against the state the newest step left it in: that it is
still so now (or already as undo would make it), that no one changed it between
two of the steps, that every kept copy is there, that a directory now in the place
of a file holds nothing but what the steps made, and that no parent is a symlink
(``file_states.Tree``).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from pathlib import Path

from dm_cc.session.file_states import Tree, Unsafe
from dm_cc.session.undo_records import Kept, Record, State, Step, depth

Chain = list[tuple[Record, Kept]]     # one path in the steps undone, newest step first


def obstacles(chosen: Sequence[Record], blobs_of: Callable[[Step], Path]) -> list[str]:
    """Why the steps ``chosen`` (newest first) cannot all be undone now: each reason
    names a path; [] when they can."""
    chains: dict[tuple[Path, str], Chain] = {}
    for record in chosen:
        for kept in record.kept:
            chains.setdefault((record.step.root, kept.path), []).append((record, kept))
    reasons: list[str] = []
    for root, keys in itertools.groupby(sorted(chains), key=lambda key: key[0]):
        paths = [path for _root, path in keys]
        targets = {path: chains[root, path][-1][1].before for path in paths}
        try:
            with Tree(root) as tree:
                for path in paths:
                    reasons += _path_obstacles(tree, path, chains[root, path], targets, blobs_of)
        except Unsafe as exc:
            reasons.append(str(exc))
    return reasons


def _path_obstacles(tree: Tree, path: str, chain: Chain, targets: dict[str, State],
                    blobs_of: Callable[[Step], Path]) -> list[str]:
    reasons: list[str] = []
    (newest_record, newest), target = chain[0], chain[-1][1].before
    after = newest.after
    assert after is not None
    try:
        now = _measure(tree, path, after, target)
    except Unsafe as exc:
        return [str(exc)]
    if not (after.same(now) or target.same(now)):
        reasons.append(f"{path} changed since step {newest_record.step.number}: "
                       f"{after.difference(now)}")
    for (newer_record, newer), (older_record, older) in itertools.pairwise(chain):
        assert older.after is not None
        if not older.after.same(newer.before):
            reasons.append(f"{path} changed between step {older_record.step.number} and "
                           f"step {newer_record.step.number} (not by either): "
                           f"{older.after.difference(newer.before)}")
    for record, kept in chain:
        if kept.before.kind == "file":
            blob = blobs_of(record.step) / str(kept.blob)
            try:
                intact = blob.lstat().st_size == kept.before.size
            except OSError:
                intact = False
            if not intact:
                reasons.append(f"{path}: the copy step {record.step.number} kept of it is "
                               f"missing or damaged ({blob})")
    if now.kind == "dir" and target.kind not in ("dir", "absent") \
            and not _emptied(tree, path, targets):
        reasons.append(f"{path}: it is now a directory holding files no step made; the "
                       f"{'file' if target.kind == 'file' else target.kind} it was "
                       "cannot be put back")
    return reasons


def restore(record: Record, blobs: Path, restored: set[str], left: list[str]) -> None:
    """Put each path of one step back as it was before it: removals deepest first,
    then what was there, shallowest first. Adds the paths changed to ``restored``,
    directories the step made that still hold other files to ``left``. OSError or
    Unsafe part-way."""
    with Tree(record.step.root) as tree:
        for kept in sorted(record.kept, key=lambda k: -depth(k.path)):
            now, target = tree.look(kept.path), kept.before
            if now.kind == "absent" or not (target.kind == "absent"
                                            or (now.kind == "dir") != (target.kind == "dir")):
                continue
            if tree.remove(kept.path, now):
                restored.add(kept.path)
            elif now.kind == "dir":
                left.append(kept.path)
        for kept in sorted(record.kept, key=lambda k: depth(k.path)):
            target = kept.before
            if target.kind == "absent":
                continue
            now = tree.look(kept.path, digest=target.kind == "file")
            if target.kind == "file" and target.same(now):
                continue
            if now.kind == "dir" and target.kind != "dir":
                raise Unsafe(f"{kept.path}: a directory is in the way")
            blob = blobs / kept.blob if kept.blob is not None else None
            if tree.put(kept.path, target, blob, now):
                restored.add(kept.path)


def _measure(tree: Tree, path: str, *recorded: State) -> State:
    """``path`` now, with its sha256 when a recorded file state it may equal has one."""
    now = tree.look(path)
    if now.kind == "file" and any(state.kind == "file" and state.sha256 is not None
                                  and state.size == now.size for state in recorded):
        now = tree.look(path, digest=True)
    return now


def _emptied(tree: Tree, path: str, targets: dict[str, State]) -> bool:
    """Whether undoing leaves the directory ``path`` empty: everything in it is a path
    the steps remove (recursively)."""
    for name in tree.entries(path) or []:
        child = f"{path}/{name}"
        target = targets.get(child)
        if target is None or target.kind != "absent":
            return False
        if tree.look(child).kind == "dir" and not _emptied(tree, child, targets):
            return False
    return True
