"""Slack and GitHub webhooks (integrations.md §10): each delivery is checked (signatures.py), turned
into a plan by pure functions (slack.py, github.py), and applied to the global store in one
transaction with its delivery log (deliver.py)."""
