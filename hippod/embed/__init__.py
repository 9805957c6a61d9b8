"""Optional embeddings (recall.md §10): the `hippod[embed]` extra, loaded only when a store uses it."""
