"""todo: the session's task list, replaced whole on every call."""

from __future__ import annotations

from collections import Counter
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, Field

from dm_cc.tools.base import CatalogTool, ToolContext, ToolOutput

Status = Literal["pending", "in_progress", "completed"]
MARKS = {"completed": "[x]", "in_progress": "[>]", "pending": "[ ]"}


class TodoItem(BaseModel):
    content: str = Field(min_length=1, description="The task, short and specific.")
    status: Status = Field(description="pending, in_progress (at most one task) or completed.")
    id: str | None = Field(default=None, description="A stable id; assigned when missing.")


class TodoParams(BaseModel):
    todos: list[TodoItem] = Field(description="The complete list, replacing the previous one.")


class TodoTool(CatalogTool[TodoParams]):
    name: ClassVar[str] = "todo"
    description: ClassVar[str] = (
        "Keep a task list for multi-step work, visible to the user. Send the whole list each "
        "time (it replaces the previous one): mark a task in_progress before starting it "
        "(at most one at a time) and completed as soon as it is done. An empty list clears it."
    )
    Params = TodoParams


    async def run(self, params: TodoParams, ctx: ToolContext) -> ToolOutput:
        active = [item.content for item in params.todos if item.status == "in_progress"]
        if len(active) > 1:
            return ToolOutput(f"{len(active)} tasks are in_progress; at most one may be. "
                              "Mark the others pending or completed.", is_error=True)
        given = Counter(item.id for item in params.todos if item.id is not None)
        if duplicates := sorted(i for i, n in given.items() if n > 1):
            return ToolOutput(f"Duplicate todo ids: {', '.join(duplicates)}.", is_error=True)
        todos = _with_ids(params.todos, set(given))
        ctx.todos[:] = todos     # in place: whoever holds the list sees the change
        text = render(todos)
        return ToolOutput(text, display=text)


def _with_ids(items: list[TodoItem], taken: set[str]) -> list[dict[str, Any]]:
    todos, counter = [], 0
    for item in items:
        todo_id = item.id
        while todo_id is None or (item.id is None and todo_id in taken):
            counter += 1
            todo_id = str(counter)
        taken.add(todo_id)
        todos.append({"id": todo_id, "content": item.content, "status": item.status})
    return todos


def render(todos: list[dict[str, Any]]) -> str:
    """The list as the model and the user see it, with a one-line count."""
    if not todos:
        return "(the todo list is empty)"
    counts = Counter(todo["status"] for todo in todos)
    lines = [f"{MARKS[todo['status']]} {todo['content']}" for todo in todos]
    lines.append(f"\n{counts['completed']}/{len(todos)} completed, "
                 f"{counts['in_progress']} in progress, {counts['pending']} pending")
    return "\n".join(lines)
