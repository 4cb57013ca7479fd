"""A generated policy of many rules, each with a reason: what a script exporting a
team's rules writes (the large-policy tests and benchmarks/bench_policy_load.py)."""

from __future__ import annotations

PERMISSIONS = ("bash", "read", "edit", "webfetch")
PATTERNS = {"bash": "npm run task{i} *", "read": "src/mod{i}/**", "edit": "build/out{i}/*.js",
            "webfetch": "https://h{i}.example.com/*"}


def generated_policy(count: int, reason: str = "generated rule {i} for task {i}") -> str:
    """``count`` rules of four lines each (rule ``i`` starts at line ``2 + 4 * i``),
    every one with a reason."""
    lines = ["rules:"]
    for i in range(count):
        permission = PERMISSIONS[i % 4]
        lines += [f"  - permission: {permission}",
                  f"    pattern: '{PATTERNS[permission].format(i=i)}'",
                  f"    action: {('allow', 'ask', 'deny')[i % 3]}",
                  f"    reason: {reason.format(i=i)}"]
    return "\n".join(lines) + "\n"
