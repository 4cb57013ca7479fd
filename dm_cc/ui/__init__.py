"""What a person sees: the interactive console, approval prompts, and the headless
renderer of the core's events."""
