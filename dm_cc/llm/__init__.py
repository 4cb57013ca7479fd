"""Chat models behind one Protocol: litellm (lazily), scripted, offline."""
