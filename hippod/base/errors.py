"""The daemon's request-failure exception, turned into an `Error` reply in one place; and how a
failure nobody expected is logged."""

from __future__ import annotations

import logging
import traceback
from typing import Any

from hippoctl.protocol.errors import exit_code_for

# Every door's unexpected failures are logged under the one name, the socket server's.
log = logging.getLogger("hippod.server")


class HippoError(Exception):
    """A request failed for a reason the user can act on."""

    def __init__(
        self, code: str, message: str, *, hint: str | None = None, details: dict[str, Any] | None = None
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.hint = hint
        self.details = details or {}

    @property
    def exit_code(self) -> int:
        return exit_code_for(self.code)


def log_failure(what: str, exc: BaseException) -> None:
    """Log an unexpected failure by type and stack only: its message might quote memory text."""
    stack = "".join(traceback.format_tb(exc.__traceback__))
    log.error("%s failed: %s\n%s", what, type(exc).__name__, stack.rstrip())
