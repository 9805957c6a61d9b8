"""The daemon's half of `hippoctl mcp` (integrations.md §11): tool arguments and the layouts of the
tools that have no verb of their own."""
