"""The shape of the source tree that docs/architecture.md describes: a root of three modules, every
package of the daemon named in that document, and no module past the size a reader takes in."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# About 400 lines: a module past it holds more than one job.
MAX_LINES = 400


def test_the_root_of_hippod_holds_only_its_entry_points() -> None:
    root = sorted(p.name for p in (REPO / "hippod").glob("*.py"))
    assert root == ["__init__.py", "__main__.py", "main.py"]


def test_the_architecture_names_every_package_of_the_daemon() -> None:
    text = (REPO / "docs" / "architecture.md").read_text()
    packages = sorted(p.parent.name for p in (REPO / "hippod").glob("*/__init__.py"))
    assert packages, "no package found under hippod/"
    missing = [name for name in packages if f"`{name}/`" not in text and f"hippod/{name}/" not in text]
    assert missing == [], f"docs/architecture.md does not name {missing}"


def test_no_module_is_past_about_four_hundred_lines() -> None:
    sizes = {
        str(path.relative_to(REPO)): len(path.read_text().splitlines())
        for folder in ("hippod", "hippoctl")
        for path in (REPO / folder).rglob("*.py")
    }
    assert len(sizes) > 100
    assert {name: n for name, n in sizes.items() if n > MAX_LINES} == {}
