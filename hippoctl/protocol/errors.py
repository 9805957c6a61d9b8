"""Error codes and the exit code each one maps to (daemon.md §9)."""

OK = 0
FAILED = 1
USAGE = 2
UNREACHABLE = 3
MISMATCH = 4
INTERRUPTED = 130

_MISMATCH_CODES = frozenset({"protocol_mismatch", "unsupported_request", "home_mismatch", "bad_frame"})

# A team server's own failures (docs/team.md), each exit 1 (FAILED) as every code not named above:
# a verb that needs a laptop's SQLite store (HTTP 501),
NOT_ON_TEAM_STORE = "not_on_team_store"
# the team's database out of reach (HTTP 503),
TEAM_UNREACHABLE = "team_unreachable"
# and a write whose COMMIT was sent but never answered, stored or not (HTTP 503).
COMMIT_UNKNOWN = "commit_unknown"

# A verb whose handler the daemon had not loaded yet, and can no longer load: its installed code
# changed since it started (an upgrade in place). `hippoctl daemon restart` mends it. Exit 1
# (HTTP 503).
DAEMON_OUTDATED = "daemon_outdated"


def exit_code_for(code: str) -> int:
    """Return the process exit code that an `Error` with this code produces."""
    if code == "usage":
        return USAGE
    if code in _MISMATCH_CODES:
        return MISMATCH
    if code == "shutting_down":
        return UNREACHABLE
    return FAILED
