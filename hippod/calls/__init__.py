"""A call the daemon serves, as the domain sees it: its request context, its progress and its hook jobs."""
