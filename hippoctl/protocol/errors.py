"""Error codes and the exit code each one maps to (daemon.md §9)."""

OK = 0
FAILED = 1
USAGE = 2
UNREACHABLE = 3
MISMATCH = 4
INTERRUPTED = 130

_MISMATCH_CODES = frozenset({"protocol_mismatch", "unsupported_request", "home_mismatch", "bad_frame"})


def exit_code_for(code: str) -> int:
    """Return the process exit code that an `Error` with this code produces."""
    if code == "usage":
        return USAGE
    if code in _MISMATCH_CODES:
        return MISMATCH
    if code == "shutting_down":
        return UNREACHABLE
    return FAILED
