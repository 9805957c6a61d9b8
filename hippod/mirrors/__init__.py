"""The markdown mirrors of a store's memories and conflicts (memory-model.md §2)."""
