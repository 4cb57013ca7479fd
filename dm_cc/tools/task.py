"""task: start a subagent in a child session, or resume one by its task id.

The call asks the ``task`` permission with the subagent's name as pattern. The
child sees only ``prompt`` (never this conversation), works under its own agent's
prompt, tools and rules, never with more rights than this agent, and its final
answer comes back as ``task_id: …`` plus ``<task_result>…</task_result>``. The
loop does the starting (:class:`~dm_cc.tools.base.Subagents`, in its context):
this file holds only what the model sees and what a call asks for.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, Field

from dm_cc.permissions import Request
from dm_cc.tools.base import CatalogTool, ToolContext, ToolOutput


class TaskParams(BaseModel):
    description: str = Field(min_length=1, description="A short (3-6 words) label for the task")
    prompt: str = Field(min_length=1, description=(
        "The whole task for the subagent: it sees nothing of this conversation, so say "
        "what to do, where, and what to report back"))
    subagent_type: str = Field(description="Which subagent runs it (one of those listed above)")
    task_id: str | None = Field(default=None, description=(
        "Resume that earlier task (its child session and history) instead of starting anew"))
    max_turns: int | None = Field(default=None, ge=1, description=(
        "At most this many model calls for the subagent (a bound for a small task). It "
        "never gets more than its agent's and the settings' limit: a larger number is "
        "lowered, and the result says the bound it got"))
    background: bool = Field(default=False, description=(
        "Return the task id at once and keep working; the result arrives as a message "
        "when the subagent finishes"))


INTRO = (
    "Start a subagent: it works in a child session on the prompt you give it (and only "
    "that: it does not see this conversation), with its own tools and never more rights "
    "than you, then returns its final answer inside <task_result>. Several task calls in "
    "one message run at the same time. Use it for broad searches or independent pieces "
    "of work that would flood this conversation. Pick the subagent whose description fits "
    "the task; when the user names one (\"use the reviewer to ...\", \"@explore ...\"), "
    "start that one.")


def choices_text(choices: dict[str, str]) -> str:
    if not choices:
        return "No subagent may be started here."
    return "Subagents you may start:\n" + "\n".join(
        f"- {name}: {description}" for name, description in choices.items())


class TaskTool(CatalogTool[TaskParams]):
    name: ClassVar[str] = "task"
    description: ClassVar[str] = INTRO
    Params = TaskParams

    def describe(self, ctx: ToolContext) -> str:
        choices = dict(ctx.subagents.choices()) if ctx.subagents is not None else {}
        return f"{INTRO}\n\n{choices_text(choices)}"

    def requests(self, params: TaskParams, ctx: ToolContext) -> list[Request]:
        """``task <name>``. A name that is no subagent is an error listing those this
        agent may start; a subagent it may not start is the gate's to deny (the
        denial names the rule)."""
        subagents = ctx.subagents
        if subagents is None or params.subagent_type not in subagents.known():
            choices = subagents.choices() if subagents is not None else {}
            raise ValueError(f"there is no subagent {params.subagent_type!r}; valid: "
                             f"{', '.join(choices) or '(none may be started here)'}")
        return super().requests(params, ctx)

    async def run(self, params: TaskParams, ctx: ToolContext) -> ToolOutput:
        if ctx.subagents is None:
            return ToolOutput("Subagents cannot be started here.", is_error=True)
        return await ctx.subagents.start(params, ctx.call_id)
