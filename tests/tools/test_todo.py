from __future__ import annotations

import pytest
from pydantic import ValidationError

from dm_cc.tools.todo import TodoTool

from .helpers import call, derive

TOOL = TodoTool()
ITEMS = [
    {"content": "Write the tests", "status": "completed"},
    {"content": "Make them pass", "status": "in_progress", "id": "impl"},
    {"content": "Document it", "status": "pending"},
]


def test_replaces_the_list_in_place_and_renders_it(ctx):
    before = ctx.todos
    out = call(TOOL, ctx, todos=ITEMS)
    assert not out.is_error
    assert ctx.todos is before
    assert ctx.todos == [
        {"id": "1", "content": "Write the tests", "status": "completed"},
        {"id": "impl", "content": "Make them pass", "status": "in_progress"},
        {"id": "2", "content": "Document it", "status": "pending"},
    ]
    assert out.output == ("[x] Write the tests\n[>] Make them pass\n[ ] Document it\n\n"
                          "1/3 completed, 1 in progress, 1 pending")
    call(TOOL, ctx, todos=ITEMS[:1])
    assert [t["content"] for t in ctx.todos] == ["Write the tests"]


def test_generated_ids_avoid_given_ones(ctx):
    call(TOOL, ctx, todos=[{"content": "a", "status": "pending"},
                           {"content": "b", "status": "pending", "id": "1"}])
    assert [t["id"] for t in ctx.todos] == ["2", "1"]


def test_at_most_one_in_progress(ctx):
    call(TOOL, ctx, todos=ITEMS)
    out = call(TOOL, ctx, todos=[{"content": "a", "status": "in_progress"},
                                 {"content": "b", "status": "in_progress"}])
    assert out.is_error and "2 tasks are in_progress" in out.output
    assert len(ctx.todos) == 3        # unchanged


def test_duplicate_ids_are_an_error(ctx):
    out = call(TOOL, ctx, todos=[{"content": "a", "status": "pending", "id": "x"},
                                 {"content": "b", "status": "pending", "id": "x"}])
    assert out.is_error and "x" in out.output


def test_an_empty_list_clears(ctx):
    call(TOOL, ctx, todos=ITEMS)
    out = call(TOOL, ctx, todos=[])
    assert ctx.todos == [] and "empty" in out.output


def test_invalid_items_fail_validation():
    with pytest.raises(ValidationError):
        TOOL.Params.model_validate({"todos": [{"content": "a", "status": "done"}]})
    with pytest.raises(ValidationError):
        TOOL.Params.model_validate({"todos": [{"content": "", "status": "pending"}]})


def test_requests(ctx):
    assert derive(TOOL, ctx, todos=ITEMS) == [("todo", "*")]
