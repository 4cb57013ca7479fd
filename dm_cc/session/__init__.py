"""Sessions: messages, the append-only JSONL store, approvals."""
