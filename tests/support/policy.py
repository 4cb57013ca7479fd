"""The person's own policy file, written for a test (``config_dir()/policy.yaml``).

    my_policy(COMMANDS_AND_EDITS, "  - {permission: delete, pattern: '**', action: ask}\\n")
"""

from __future__ import annotations

from dm_cc.config import config_dir

# Every command and every edit allowed: what a command then changes is judged on
# its own (a transaction's changes, docs/sandbox.md).
COMMANDS_AND_EDITS = ("  - {permission: bash, pattern: '*', action: allow}\n"
                      "  - {permission: edit, pattern: '**', action: allow}\n")


def my_policy(*rules: str) -> None:
    """Write the person's policy file with ``rules`` (YAML lines under ``rules:``)."""
    config_dir().mkdir(parents=True, exist_ok=True)
    (config_dir() / "policy.yaml").write_text("rules:\n" + "".join(rules))
