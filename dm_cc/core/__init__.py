"""The core: the loop (the one place a decision is enforced), its typed events, the
Approver seam and the system prompts. It never prints: the UI consumes its events."""
