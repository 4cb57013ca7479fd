"""Tools: each describes what it will touch (requests) and runs; none decides."""
