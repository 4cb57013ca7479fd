"""Counts and near misses in the words of a message: ``1 line``, ``3 lines``;
`` (did you mean model?)``.

Every part's messages count things (the REPL's lines, a tool's summary, a
file's errors), so the helpers live here, in the part each of them may import;
one spelling of a plural instead of a dozen ``'' if n == 1 else 's'``.
"""

from __future__ import annotations

from collections.abc import Iterable


def counted(number: int, noun: str, plural: str | None = None) -> str:
    """``1 line``, ``0 lines``, ``2 more specific rules``; ``plural`` when adding
    an s is wrong (``counted(2, "match", "matches")``)."""
    return f"{number} {noun if number == 1 else plural or noun + 's'}"


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """`` (did you mean model?)`` when ``name`` is close to one or two of ``known``
    (the same name in other letter case first), else ``""``."""
    import difflib  # only when a name is wrong: importing this module stays free

    known = sorted(set(known))
    folded = {k.casefold(): k for k in known}
    close = [folded[name.casefold()]] if name.casefold() in folded else \
        difflib.get_close_matches(name, known, n=2, cutoff=0.6)
    return f" (did you mean {' or '.join(close)}?)" if close else ""
