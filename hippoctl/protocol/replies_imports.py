"""Typed reply data of `import --<format>` and `export` (ingest.md §1.7, §2). See replies.py for
the conventions."""

from __future__ import annotations

from hippoctl.protocol.replies import Reply


class ImportEntry(Reply):
    """A memory the import stored (or, with --dry-run, would store: id null)."""

    id: str | None
    preview: str
    tags: list[str]


class ImportReply(Reply):
    total: int
    imported: int
    skipped: int
    rejected: int
    truncated: int
    entries: list[ImportEntry]
    dry_run: bool = False
    store: str = ""
    # Entries beyond what one reply carries are counted here instead of listed.
    entries_omitted: int = 0
    # The file is what its last import read: nothing was read into chunks (imported_at: that import).
    unchanged: bool = False
    imported_at: str | None = None
    conversations: int | None = None  # a ChatGPT data export: how many conversations it held


class ExportReply(Reply):
    format: str
    count: int
    store: str
    path: str | None = None  # None: the document went to stdout as the reply text
