"""Files outside the stores that hippod writes on a client's behalf: agent settings, instruction
blocks, plugins and service units (integrations.md, daemon.md §14). Every write is atomic and keeps a
one-time backup in a store's `backups/` folder (files.py); `installed.json` records what was
installed."""
