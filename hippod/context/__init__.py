"""What `context` and the token ledger are made of: the auto query, the layout, ledger rows."""
