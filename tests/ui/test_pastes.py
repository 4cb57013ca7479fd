"""Large pastes: a placeholder in the input box, the whole text sent."""

from __future__ import annotations

from dm_cc.ui.pastes import PASTE_CHARS, PASTE_LINES, Pastes


def test_a_small_paste_is_shown_as_it_is():
    pastes = Pastes()
    small = "\n".join(f"line {n}" for n in range(PASTE_LINES))
    assert pastes.shown(small) == small and pastes.shown("x" * PASTE_CHARS) == "x" * PASTE_CHARS
    assert pastes.expand("[pasted 3 lines #1]") == "[pasted 3 lines #1]"   # typed, not pasted


def test_a_large_paste_is_a_numbered_placeholder_that_expands_to_it_wherever_it_is():
    pastes = Pastes()
    log = "".join(f"row {n}\n" for n in range(3000))
    wide = "y" * (PASTE_CHARS + 1)
    assert pastes.shown(log) == "[pasted 3000 lines #1]"
    assert pastes.shown(wide) == f"[pasted {PASTE_CHARS + 1} characters #2]"
    line = "why does [pasted 3000 lines #1] fail? see [pasted 1001 characters #2]"
    assert pastes.expand(line) == f"why does {log} fail? see {wide}"
    assert pastes.expand("[pasted 3000 lines #1][pasted 3000 lines #1]") == log + log


def test_a_placeholder_cut_short_or_inside_a_paste_is_left_as_it_is():
    pastes = Pastes()
    first = pastes.shown("a\n" * 20)
    tricky = pastes.shown(f"{first}\n" * 20)   # a paste that holds the first placeholder
    assert pastes.expand("[pasted 20 lines #") == "[pasted 20 lines #"
    assert pastes.expand(tricky) == f"{first}\n" * 20
    for number in range(3, 12):
        pastes.shown("b\n" * (20 + number))
    assert pastes.expand("[pasted 31 lines #11]") == "b\n" * 31   # #1 is no prefix of #11
