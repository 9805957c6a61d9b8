"""`path:` tags from the working directory (memory-model.md §12)."""

from __future__ import annotations

import pytest

from hippod.base.pathtags import path_tags


@pytest.mark.parametrize(
    ("cwd", "expected"),
    [
        ("/srv/ETL/Jobs", ["path:srv", "path:etl", "path:jobs"]),
        ("/home/alice/code/etl", ["path:alice", "path:code", "path:etl"]),
        # More than four meaningful segments: only the last four, in path order.
        ("/Users/Bob/work/etl/pipeline/x/App", ["path:work", "path:etl", "path:pipeline", "path:app"]),
        ("/a1/b2/c3/d4/e5/f6", ["path:c3", "path:d4", "path:e5", "path:f6"]),
        # Skip list, whatever the case.
        (
            "/home/u1/Documents/Desktop/Downloads/node_modules/.git/.hippo/dist/build",
            ["path:u1"],
        ),
        ("/tmp/temp/var/usr/opt/etc/proj", ["path:proj"]),
        ("/TMP/Proj", ["path:proj"]),
        # Single characters are dropped.
        ("/x/y/zz", ["path:zz"]),
        # Windows paths: drive letters and AppData/Local/Roaming are skipped.
        ("C:\\Users\\bob\\AppData\\Local\\proj", ["path:bob", "path:proj"]),
        ("D:/code/Roaming/api", ["path:code", "path:api"]),
        ("c:", []),
        ("/", []),
        ("", []),
        ("/home", []),
    ],
)
def test_path_tags(cwd: str, expected: list[str]) -> None:
    assert path_tags(cwd) == expected


def test_path_tags_never_more_than_four() -> None:
    deep = "/" + "/".join(f"seg{i}" for i in range(20))
    tags = path_tags(deep)
    assert tags == ["path:seg16", "path:seg17", "path:seg18", "path:seg19"]
