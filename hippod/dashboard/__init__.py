"""The read-only dashboard (integrations.md §13): one page and its JSON views, served by the daemon on
a loopback listener of its own. Nothing here is imported until `hippoctl dashboard` opens it."""
