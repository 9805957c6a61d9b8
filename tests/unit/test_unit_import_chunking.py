"""The import format parsers and chunking rules (ingest.md §2)."""

from __future__ import annotations

import pytest

from hippod.ingest.chunking import (
    Chunk,
    parse_claude_markdown,
    parse_cursor,
    parse_file,
    parse_markdown,
    slug,
    strip_front_matter,
    strip_hippo_blocks,
)


def texts(chunks: list[Chunk]) -> list[str]:
    return [c.text for c in chunks]


@pytest.mark.parametrize(
    ("heading", "expected"),
    [
        ("Build & Test", "build-test"),
        ("  Deploy -- Notes  ", "deploy-notes"),
        ("API v2 (beta)", "api-v2-beta"),
        ("Café crème", "caf-cr-me"),
        ("---", ""),
        ("under_score", "under-score"),
        ("a" * 60, "a" * 50),
        ("x" * 49 + " yz", "x" * 49),  # a dash left at the end by the cut goes too
    ],
)
def test_slug(heading: str, expected: str) -> None:
    assert slug(heading) == expected


def test_hippo_blocks_are_removed_markers_included() -> None:
    text = "keep one\n<!-- hippo:start -->\nhippo stuff\n<!-- hippo:end -->\nkeep two\n"
    assert strip_hippo_blocks(text) == "keep one\n\nkeep two\n"
    two = "a<!-- hippo:start -->x<!-- hippo:end -->b<!-- hippo:start -->y<!-- hippo:end -->c"
    assert strip_hippo_blocks(two) == "abc"
    assert strip_hippo_blocks("a\n<!-- hippo:start -->\nno end") == "a\n"


def test_claude_markdown_rules() -> None:
    text = (
        "# Project rules\n"
        "Keep it simple\n"
        "and small.\n"
        "\n"
        "- Use pnpm for installs\n"
        "continued line\n"
        "* star bullet here\n"
        "+ plus bullet here\n"
        "1. numbered item one\n"
        "2) numbered item two\n"
        "\n"
        "A paragraph line\n"
        "<!-- hippo:start -->\n- hippo's own bullet\n<!-- hippo:end -->\n"
        "## Sub heading\n"
    )
    assert texts(parse_claude_markdown(text)) == [
        "# Project rules Keep it simple and small.",
        "Use pnpm for installs continued line",
        "star bullet here",
        "plus bullet here",
        "numbered item one",
        "numbered item two",
        "A paragraph line",
        "## Sub heading",
    ]


def test_front_matter_removed_only_at_the_start() -> None:
    text = "---\ndescription: x\nglobs: '*.ts'\n---\n- rule one\n---\nnot: front\n---\n"
    assert strip_front_matter(text) == "- rule one\n---\nnot: front\n---\n"
    assert strip_front_matter("- no front matter\n") == "- no front matter\n"


def test_cursor_rules() -> None:
    text = (
        "# Code style\n"
        "- Use tabs for indentation\n"
        "  in every file\n"
        "* Prefer const over let\n"
        "+ plus is not a cursor bullet\n"
        "1. Numbered rule\n"
        "#\n"
        "Free text line\n"
        "more free text\n"
        "\n"
        "Another line\n"
    )
    assert texts(parse_cursor(text)) == [
        "Use tabs for indentation in every file",
        "Prefer const over let + plus is not a cursor bullet",
        "Numbered rule",
        "Free text line more free text",
        "Another line",
    ]


def test_markdown_sections_items_and_paragraphs() -> None:
    text = (
        "Before any heading\n"
        "still the same paragraph\n"
        "# Build & Test\n"
        "- Run make test\n"
        "  before pushing\n"
        "- Second item\n"
        "not indented: a paragraph of its own\n"
        "\n"
        "A paragraph\n"
        "over two lines\n"
        "## Deploy\n"
        "1. first step\n"
        "   continued\n"
        "  - nested bullet\n"
        "### !!!\n"
        "- under a heading with no slug\n"
    )
    chunks = parse_markdown(text)
    assert [(c.text, c.tags) for c in chunks] == [
        ("Before any heading still the same paragraph", []),
        ("Run make test before pushing", ["build-test"]),
        ("Second item", ["build-test"]),
        ("not indented: a paragraph of its own", ["build-test"]),
        ("A paragraph over two lines", ["build-test"]),
        ("first step continued", ["deploy"]),
        ("nested bullet", ["deploy"]),
        ("under a heading with no slug", []),
    ]


def test_file_md_uses_the_claude_rule() -> None:
    text = "<!-- hippo:start -->\nx\n<!-- hippo:end -->\n- item one\n- item two\n"
    assert texts(parse_file(text, "notes.MD")) == ["item one", "item two"]
    assert texts(parse_file("- item\n", "notes.mdx")) == ["item"]


def test_file_paragraphs_when_at_least_two() -> None:
    text = "First paragraph\nline two\n\n  \nSecond paragraph\n"
    assert texts(parse_file(text, "notes.txt")) == ["First paragraph\nline two", "Second paragraph"]


def test_file_lines_when_fewer_than_two_paragraphs() -> None:
    assert texts(parse_file("line one\nline two\n\n", "notes.txt")) == ["line one", "line two"]
    assert texts(parse_file("a\r\nb\r\n", "x")) == ["a", "b"]
