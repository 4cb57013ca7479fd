"""Agents as data: built-in definitions (and, later, .dm_cc/agents/*.md files)."""
