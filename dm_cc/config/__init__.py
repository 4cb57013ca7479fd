"""Where dm_cc keeps its files (per-user, system), settings, and YAML with line numbers."""
