"""A laptop's link to its team server: the membership (`team join`), the calls to the server, and the
sender that delivers queued writes exactly once, in order (docs/team.md)."""
