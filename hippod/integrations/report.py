"""What an install step did, as the lines `init`, `setup` and `hook` print."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Report:
    """Lines say what changed (one per action); warnings go to stderr (e.g. an edited block left alone)."""

    lines: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def extend(self, other: Report) -> Report:
        self.lines.extend(other.lines)
        self.warnings.extend(other.warnings)
        return self
