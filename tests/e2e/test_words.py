"""What the client prints says what it means: the embeddings line of `status`, the strength math of
`inspect`, the protocols of `version`, and one wording for every dry run, through the real client and
a real daemon."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from e2e.sleep_support import project

if TYPE_CHECKING:
    from e2e.harness import Hippo

DRY_RUN = "Dry run: nothing was changed."


def _embeddings_line(hippo: Hippo) -> str:
    [line] = [line for line in hippo.ok("status").stdout.splitlines() if line.startswith("  embeddings:")]
    return line


def test_status_says_why_embeddings_are_off_instead_of_counting_vectors(hippo: Hippo) -> None:
    # Turned off in the daemon's environment (as every test daemon is).
    hippo.start()
    hippo.ok("remember", "Staging deploys need the VPN up first")
    assert _embeddings_line(hippo) == "  embeddings: off: HIPPO_EMBEDDINGS=off in the daemon's environment"
    assert hippo.json("status")["stores"][0]["embeddings"].startswith("off: HIPPO_EMBEDDINGS=off")
    hippo.stop()

    # Left on, on a daemon whose Python has no embeddings extra (onnxruntime cannot be imported).
    site = Path(hippo.root, "no-extra")
    site.mkdir()
    (site / "sitecustomize.py").write_text("import sys\nsys.modules['onnxruntime'] = None\n")
    hippo.start(env=hippo.daemon_env(HIPPO_EMBEDDINGS=None, PYTHONPATH=str(site)))
    assert _embeddings_line(hippo) == (
        "  embeddings: off: the embeddings extra is not installed (onnxruntime); pip install 'hippod[embed]'"
    )


def test_inspect_names_the_valence_and_the_marks_behind_its_numbers(hippo: Hippo) -> None:
    hippo.start()
    memory_id = hippo.json("remember", "pytest -x hides the later failures", "--error")["id"]
    hippo.ok("outcome", "--bad", "--id", memory_id)
    lines = hippo.ok("inspect", memory_id).stdout.splitlines()
    [math] = [line for line in lines if line.startswith("  strength ")]
    assert math == (
        "  strength 0.5000 = clamp(decay 1.0000 x boost 1.0000 x emotion 2 (negative valence)) "
        "x penalty 0.5 (1 bad mark more than good)"
    )
    assert "outcome_score: -1 (the last mark was bad)" in lines

    plain = hippo.json("remember", "Releases are cut from main on Thursdays")["id"]
    lines = hippo.ok("inspect", plain).stdout.splitlines()
    assert any("x emotion 1 (neutral valence)) x penalty 1" in line for line in lines), lines
    assert "outcome_score: null (never marked)" in lines


def test_version_names_the_daemons_protocol_without_a_bare_range(hippo: Hippo) -> None:
    hippo.start()
    client, daemon = hippo.ok("version").stdout.splitlines()
    assert re.fullmatch(r"hippoctl \S+ \(protocol 1\)", client), client
    assert re.fullmatch(r"hippod \S+ \(protocol 1\), pid \d+", daemon), daemon


def test_every_dry_run_opens_with_the_same_line(hippo: Hippo) -> None:
    hippo.start()
    folder, _ = project(hippo)
    hippo.ok("remember", "Staging deploys need the VPN up first", cwd=folder)
    notes = Path(hippo.root, "notes.md")
    notes.write_text("# Deploys\n\n- Run make lint before every push to main\n")
    conversation = "user: why did it fail?\nassistant: Lesson: the staging deploy needs the VPN up first.\n"
    runs = {
        "sleep": hippo.ok("sleep", "--dry-run", cwd=folder),
        "import": hippo.ok("import", "--markdown", str(notes), "--dry-run", cwd=folder),
        "import --agents": hippo.ok("import", "--agents", "--dry-run", cwd=folder),
        "capture": hippo.ok("capture", "--stdin", "--dry-run", cwd=folder, input=conversation),
        "invalidate": hippo.ok("invalidate", "staging VPN", "--dry-run", cwd=folder),
        "setup": hippo.ok("setup", "--dry-run"),
        "share --auto": hippo.ok("share", "--auto", "--dry-run", cwd=folder),
    }
    for verb, done in runs.items():
        assert done.stdout.splitlines()[0] == DRY_RUN, (verb, done.stdout)
        assert "nothing was written" not in done.stdout and "nothing written" not in done.stdout, verb
