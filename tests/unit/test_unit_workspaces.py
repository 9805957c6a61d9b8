"""The workspace registry file: normalised, de-duplicated, sorted, atomic; missing paths stay."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from hippod.store import workspaces as ws


def registry_json(root: Path) -> dict[str, object]:
    data: dict[str, object] = json.loads((root / "workspaces.json").read_text(encoding="utf-8"))
    return data


def test_missing_registry_is_empty(tmp_path: Path) -> None:
    assert ws.read(str(tmp_path)) == []


def test_normalise_makes_relative_paths_absolute_and_resolves_symlinks(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    assert ws.normalise("link", str(tmp_path)) == os.path.realpath(real)
    assert ws.normalise("./real/../real/", str(tmp_path)) == os.path.realpath(real)
    assert ws.normalise(str(real), "/") == os.path.realpath(real)


def test_add_keeps_the_file_sorted_and_unique(tmp_path: Path) -> None:
    root = str(tmp_path / "home")
    assert ws.add(root, "/w/zeta")
    assert ws.add(root, "/w/alpha")
    assert not ws.add(root, "/w/zeta")
    assert registry_json(Path(root)) == {"version": 1, "workspaces": ["/w/alpha", "/w/zeta"]}
    assert [p.name for p in Path(root).iterdir()] == ["workspaces.json"]  # no temp file left behind


def test_a_hand_edited_registry_is_tidied_on_read(tmp_path: Path) -> None:
    (tmp_path / "workspaces.json").write_text(
        json.dumps({"version": 1, "workspaces": ["/b", "C:\\proj", "/a", "/b"]}), encoding="utf-8"
    )
    assert ws.read(str(tmp_path)) == ["/a", "/b", "C:/proj"]


def test_remove(tmp_path: Path) -> None:
    root = str(tmp_path)
    ws.write(root, ["/w/a", "/w/b"])
    assert ws.remove(root, "/w/a")
    assert not ws.remove(root, "/w/a")
    assert ws.read(root) == ["/w/b"]


def test_missing_paths_stay_listed_and_are_described(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".hippo").mkdir(parents=True)
    (project / ".hippo" / "hippo.db").write_bytes(b"")
    bare = tmp_path / "bare"
    bare.mkdir()
    gone = tmp_path / "gone"
    root = str(tmp_path / "home")
    ws.write(root, [str(project), str(bare), str(gone)])
    assert ws.read(root) == sorted([str(project), str(bare), str(gone)])
    assert ws.describe(str(project)) == ws.Workspace(str(project), True, True)
    assert ws.describe(str(bare)) == ws.Workspace(str(bare), True, False)
    assert ws.describe(str(gone)) == ws.Workspace(str(gone), False, False)


@pytest.mark.parametrize("content", ["{not json", "[]", '{"workspaces": "/a"}', '{"workspaces": [1]}'])
def test_a_broken_registry_is_never_overwritten(tmp_path: Path, content: str) -> None:
    path = tmp_path / "workspaces.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ws.RegistryUnreadable):
        ws.add(str(tmp_path), "/w/a")
    assert path.read_text(encoding="utf-8") == content
    paths, warning = ws.read_or_empty(str(tmp_path))
    assert paths == [] and warning is not None and "workspaces.json" in warning


def test_register_project_adds_the_folder_above_the_store(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / ".hippo").mkdir(parents=True)
    root = str(tmp_path / "home")
    ws.register_project(root, str(project / ".hippo"))
    ws.register_project(root, str(project / ".hippo"))
    assert ws.read(root) == [os.path.realpath(project)]


def test_register_project_leaves_a_broken_registry_alone(tmp_path: Path) -> None:
    path = tmp_path / "workspaces.json"
    path.write_text("{oops", encoding="utf-8")
    ws.register_project(str(tmp_path), str(tmp_path / "proj" / ".hippo"))
    assert path.read_text(encoding="utf-8") == "{oops"
