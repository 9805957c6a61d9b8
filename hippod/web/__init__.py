"""hippod's HTTP side: the API the original's SDK and webhooks speak (integrations.md §9, §10).

Only `keys` is imported outside a running listener (by the `auth` handlers); everything that needs
starlette or uvicorn is imported when `serve` opens the listener, never on the client's path.
"""
