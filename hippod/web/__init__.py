"""hippod's HTTP side: the API the original's SDK and webhooks speak (integrations.md §9, §10).

Everything that needs starlette or uvicorn is imported when `serve` opens the listener, never on the
client's path; the keys and the local token it checks (base/keys.py, base/local_token.py) are the
`auth` verbs' too, which use them without it.
"""
