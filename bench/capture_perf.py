"""Capture bench: how fast the §3 extraction and transcript summarising run, in-process.

A measuring tool, not a test: it prints a table and asserts nothing about time. The text is every
dialogue turn of the LoCoMo dev conversations (given with --data, read in place, never copied),
repeated until it reaches the requested size; the transcript is a synthetic Claude Code JSONL with
the same turns as user and assistant messages.

Usage: python bench/capture_perf.py --data locomo_dev.json [--mib 8]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from hippod.ingest import transcript
from hippod.ingest.extract import extract


def turns(data: Path) -> list[str]:
    """Every dialogue turn's text, in order."""
    out: list[str] = []
    for sample in json.loads(data.read_text(encoding="utf-8")):
        conversation = sample["conversation"]
        for key, value in conversation.items():
            if key.startswith("session_") and isinstance(value, list):
                out += [turn["text"] for turn in value if turn.get("text")]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="LoCoMo JSON file (e.g. locomo_dev.json)")
    parser.add_argument("--mib", type=float, default=8.0, help="size of the text to extract from")
    args = parser.parse_args()
    said = turns(args.data)
    base = "\n".join(said)
    text = (base + "\n") * max(1, int(args.mib * 1024 * 1024 / len(base)))
    started = time.perf_counter()
    items = extract(text)
    took = time.perf_counter() - started
    print(
        f"extract: {len(text) / 1e6:.1f} MB of dialogue in {took:.2f} s ({len(text) / 1e6 / took:.1f} MB/s)"
    )
    print(f"  {len(items)} distinct items; first: {items[0] if items else None}")

    records = []
    for i, line in enumerate(said * 4):
        if i % 2:
            block = {"type": "assistant", "message": {"content": [{"type": "text", "text": line}]}}
            records.append(json.dumps(block))
        else:
            records.append(json.dumps({"type": "user", "message": {"content": line}}))
    data = ("\n".join(records) + "\n").encode()
    started = time.perf_counter()
    summary = transcript.summary(transcript.parse(data))
    extract(summary)
    took = time.perf_counter() - started
    print(f"--last-session: {len(data) / 1e6:.1f} MB transcript ({len(records)} records) parsed, summarised")
    print(f"  and extracted in {took:.2f} s")


if __name__ == "__main__":
    main()
