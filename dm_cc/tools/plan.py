"""plan_enter / plan_exit: switch between the build and plan agents in one session.

Like opencode, a switch is a synthetic user message whose ``agent`` is the new
agent: the history stays, and the agent in charge is the agent of the last user
message. ``plan_exit`` is asked about by the default policy; the approval shows
the plan.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, Field

from dm_cc.tools.base import CatalogTool, ToolContext, ToolOutput


class PlanEnterParams(BaseModel):
    reason: str | None = Field(default=None, description="Why planning first is wise here")


class PlanExitParams(BaseModel):
    summary: str | None = Field(default=None, description="One-paragraph summary of the plan")


def plan_file_text(ctx: ToolContext) -> str:
    if ctx.plan_file is None or not ctx.plan_file.is_file():
        return "(no plan file was written)"
    return ctx.plan_file.read_text(encoding="utf-8", errors="replace")


def _relative(ctx: ToolContext) -> str:
    if ctx.plan_file is None:
        return "(none)"
    try:
        return ctx.plan_file.relative_to(ctx.root).as_posix()
    except ValueError:
        return str(ctx.plan_file)


class PlanEnterTool(CatalogTool[PlanEnterParams]):
    name: ClassVar[str] = "plan_enter"
    description: ClassVar[str] = (
        "Switch this session to the read-only plan agent before a large or risky change: "
        "it explores, writes a plan file, and asks the user to approve it with plan_exit.")
    Params = PlanEnterParams

    async def run(self, params: PlanEnterParams, ctx: ToolContext) -> ToolOutput:
        message = (
            "Plan mode is on. You are the plan agent: read, search and think, but change "
            f"nothing except your plan file {_relative(ctx)}. Write the plan there, then call "
            "plan_exit to ask the user to approve it.")
        return ToolOutput("Switched to the plan agent.", switch_agent="plan",
                          switch_message=message)


class PlanExitTool(CatalogTool[PlanExitParams]):
    name: ClassVar[str] = "plan_exit"
    description: ClassVar[str] = (
        "Ask the user to approve the plan in your plan file and switch back to the build "
        "agent to implement it. Call it only when the plan is complete.")
    Params = PlanExitParams

    def preview(self, params: PlanExitParams, ctx: ToolContext) -> str | None:
        return f"Plan ({_relative(ctx)}):\n\n{plan_file_text(ctx)}"

    async def run(self, params: PlanExitParams, ctx: ToolContext) -> ToolOutput:
        message = (f"The user approved the plan in {_relative(ctx)}. You are the build agent "
                   "again: implement the plan.\n\n" + plan_file_text(ctx))
        return ToolOutput("The plan was approved; switched to the build agent.",
                          switch_agent="build", switch_message=message)
