"""The daemon's request-failure exception, turned into an `Error` reply in one place."""

from __future__ import annotations

from typing import Any

from hippoctl.protocol.errors import exit_code_for


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
