"""The pure parts of `context` and `tokens`: the --auto rules, framing and bullets, isolation,
the additional-context cap and the tokens table (recall.md §9, continuity.md §7)."""

from __future__ import annotations

from hippoctl.protocol.replies_context import ContextMemory, SurfaceTokens, TokensReply
from hippod.context import layout
from hippod.context.auto_query import query_from_branch, query_from_paths
from hippod.context.isolation import Place, placement
from hippod.context.tokens_table import render, totals


def test_path_tokens_skip_short_and_noise_words_and_keep_the_first_ten_distinct() -> None:
    paths = ["src/exporter/nightly.py", "tests/test_exporter.py", "dist\\index.js", "node_modules/a/b.js"]
    assert query_from_paths(paths) == "exporter nightly test_exporter"
    many = [f"pkg/module{i}.py" for i in range(15)]
    assert query_from_paths(many).split() == ["pkg"] + [f"module{i}" for i in range(9)]
    assert query_from_paths(["a/b.c", "src/index.ts"]) == ""


def test_branch_rule() -> None:
    assert query_from_branch("fix/cache_warm-up\n") == "fix cache warm up"
    for ignored in ("main", "master", "HEAD", "", "  "):
        assert query_from_branch(ignored) == ""


def memory(confidence: str = "observed", source: str = "local", aged: bool = False) -> ContextMemory:
    return ContextMemory(
        id="mem_1", source=source, confidence=confidence, aged=aged, tags=["error", "path:api"],
        created="2026-03-10T08:00:00.000Z", strength=0.914, content="Line one\nline two", framed="",
    )  # fmt: skip


def test_framings_and_bullet_labels() -> None:
    assert layout.framed(memory("verified"), "observe") == "Line one\nline two"
    assert layout.framed(memory(), "observe") == "Previously observed (2026-03-10): Line one\nline two"
    assert layout.framed(memory("verified"), "suggest") == "Consider: Line one\nline two"
    assert layout.framed(memory(), "assert") == "Line one\nline two"
    assert layout.bullet(memory("inferred", "global", aged=True), "suggest") == (
        "- [global] [inferred] [aged] Consider: Line one\n  line two [error, path:api] (91%)"
    )
    assert layout.bullet(memory("inferred", "global", aged=True), "assert") == (
        "- Line one\n  line two [error, path:api] (91%)"
    )


def test_headings_fit_their_reserved_size() -> None:
    assert layout.heading(1, 12) == "## Project Memory (1 entry, 12 tokens)"
    assert len(layout.heading(999_999, 999_999)) <= len(layout.RESERVED_HEADING)
    assert layout.other_heading(2) == "## Other-project memory (explicitly requested, 2 entries)"
    assert len(layout.other_heading(999_999)) <= len(layout.RESERVED_OTHER_HEADING)


def test_cap_cuts_at_a_line() -> None:
    text = "\n".join("x" * 99 for _ in range(200))
    capped = layout.cap(text)
    assert len(capped) <= 10_000 and capped.endswith("x") and text.startswith(capped)
    assert layout.cap("short") == "short"


def test_placement() -> None:
    def place(
        origin: str | None,
        source: str,
        current: str,
        *,
        secret: bool = False,
        copy: str = "cli",
        **flags: bool,
    ) -> Place:
        options = {"isolation": True, "cross_project": False} | flags
        return placement(origin, source, current, is_secret=lambda: secret, memory_source=copy, **options)

    assert place("proj", "local", "proj", secret=True) is Place.MAIN
    assert place(None, "local", "proj", secret=True) is Place.MAIN
    assert place("", "global", "proj") is Place.MAIN
    assert place("", "global", "proj", secret=True) is Place.HIDDEN
    assert place("", "global", "", secret=True) is Place.MAIN
    assert place("billing", "global", "proj") is Place.HIDDEN
    assert place("billing", "global", "proj", cross_project=True) is Place.OTHER
    assert place("billing", "global", "proj", isolation=False) is Place.MAIN
    # A copy share, promote or auto-share made holds beyond the project it came from.
    for copy in ("shared:billing:2026-01-01T00:00:00.000Z", "promoted:billing", "auto-shared:billing:x"):
        assert place("billing", "global", "proj", copy=copy) is Place.MAIN
        assert place("billing", "global", "proj", copy=copy, secret=True) is Place.HIDDEN
    assert place("billing", "global", "proj", copy="agent:claude-code:notes.md") is Place.HIDDEN
    assert (
        place("billing", "global", "proj", secret=True, isolation=False, cross_project=True) is Place.HIDDEN
    )


def test_the_tokens_table_of_the_spec() -> None:
    surfaces = {
        "prompt_hook": SurfaceTokens(41_200, 96, 612_400, 410, 188_600),
        "compact_resume": SurfaceTokens(3_100, 4, 21_700),
        "context": SurfaceTokens(9_800, 12),
        "recall": SurfaceTokens(22_400, 31),
        "mcp": SurfaceTokens(),
        "http": SurfaceTokens(),
    }
    total = SurfaceTokens(76_500, 143, 634_100, 410, 188_600)
    reply = TokensReply(days=30, since="2026-02-09", surfaces=surfaces, total=total)
    assert render(reply) == (
        "Memory tokens, last 30 days (estimates: characters / 4; re-reads usually bill at the cached-input "
        "rate)\n"
        "surface          sent    sends   re-read   skipped   saved\n"
        "prompt_hook    41,200       96   612,400       410   188,600\n"
        "compact_resume  3,100        4    21,700         -         -\n"
        "context         9,800       12         -         -         -\n"
        "recall         22,400       31         -         -         -\n"
        "mcp                 0        0         -         -         -\n"
        "http                0        0         -         -         -\n"
        "total          76,500      143   634,100       410   188,600"
    )


def test_totals_split_sent_skipped_and_reread() -> None:
    surfaces, total = totals(
        [("prompt_hook", "sent", 10, False), ("prompt_hook", "sent", 10, True),
         ("prompt_hook", "reread", 90, False), ("mcp", "sent", 5, False), ("custom", "sent", 7, False)]
    )  # fmt: skip
    assert surfaces["prompt_hook"] == SurfaceTokens(10, 1, 90, 1, 10)
    assert surfaces["mcp"] == SurfaceTokens(5, 1)
    assert surfaces["custom"] == SurfaceTokens(7, 1)
    assert total == SurfaceTokens(22, 3, 90, 1, 10)
