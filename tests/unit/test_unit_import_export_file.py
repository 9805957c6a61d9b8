"""`export <file>`: the document replaces the file atomically, also when two exports race (ingest.md §2)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from hippod.base.errors import HippoError
from hippod.handlers.imports import _write_file


def test_two_exports_to_one_path_at_once_each_write_a_whole_document(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Both writers finish their temporary file before either renames it into place.
    both_written = threading.Barrier(2, timeout=10)
    rename = os.replace

    def replace_after_both(src: str, dst: str) -> None:
        both_written.wait()
        rename(src, dst)

    monkeypatch.setattr(os, "replace", replace_after_both)
    target = str(tmp_path / "export.json")
    documents = ['{"memories": ["' + "a" * 5000 + '"]}\n', '{"memories": []}\n']
    failures: list[BaseException] = []

    def export(text: str) -> None:
        try:
            _write_file(target, text)
        except BaseException as exc:  # reported below, with the thread's other failures
            failures.append(exc)

    threads = [threading.Thread(target=export, args=(text,)) for text in documents]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert Path(target).read_text(encoding="utf-8") in documents
    assert os.listdir(tmp_path) == ["export.json"]  # no temporary file left behind


def test_a_failed_export_names_the_file_and_leaves_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "taken"
    folder.mkdir()
    with pytest.raises(HippoError, match="it is a directory"):
        _write_file(str(folder), "text\n")
    assert os.listdir(tmp_path) == ["taken"]
