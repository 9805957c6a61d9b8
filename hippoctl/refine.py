"""`refine <id>`: ask the daemon for the model's rewrite of a memory, show the old and the new text,
and supersede the memory with the rewrite when the user agrees: asked on a terminal, `--yes` for
scripts, never with `--dry-run`. Superseding is the `supersede` verb's request, one transaction."""

from __future__ import annotations

import sys
from typing import Any

from hippoctl.client import call, request_envelope
from hippoctl.output import print_json
from hippoctl.protocol import errors
from hippoctl.protocol import messages as m


def _error(reply: m.Error) -> int:
    line = f"hippoctl: {reply.message}"
    if reply.hint:
        line += f" (try: {reply.hint})"
    print(line, file=sys.stderr)
    return reply.exit_code or errors.exit_code_for(reply.code)


def _ask(memory_id: str) -> bool:
    """The user's answer on the terminal; anything but y or yes is no."""
    try:
        answer = input(f"Supersede {memory_id} with this? [y/N] ")
    except EOFError:
        return False
    return answer.strip().lower() in ("y", "yes")


def _show(proposal: dict[str, Any]) -> None:
    print(f"{proposal['id']} now:\n  {proposal['old']}")
    print(f"Rewritten by {proposal['model']}:\n  {proposal['new']}")


def run(
    memory_id: str,
    *,
    yes: bool,
    dry_run: bool,
    as_json: bool,
    cwd: str,
    global_store: bool,
    spawn: bool,
    timeout: float,
) -> int:
    """The verb end to end; its exit code."""

    def send(body: m.Body) -> m.Result | m.Error:
        return call(request_envelope(body, cwd=cwd, global_store=global_store), spawn=spawn, timeout=timeout)

    asked = send(m.Refine(id=memory_id))
    if isinstance(asked, m.Error):
        return _error(asked)
    proposal: dict[str, Any] = dict(asked.data)
    result: dict[str, Any] = {**proposal, "superseded": False, "new_id": None}
    if not as_json:
        _show(proposal)
    code = 0
    if proposal.get("unchanged"):
        note = "The rewrite is the same text: nothing to supersede."
    elif dry_run:
        note = "Dry run: nothing was superseded."
    elif not yes and not sys.stdin.isatty():
        note = (
            f"Not superseded: there is no terminal to ask on. Run `hippoctl refine {memory_id} --yes` "
            "to supersede it with a rewrite (the model may word it differently)."
        )
        code = errors.FAILED
    elif not yes and (as_json or not _ask(memory_id)):
        note = "Not superseded."
    else:
        done = send(m.Supersede(id=memory_id, content=str(proposal["new"])))
        if isinstance(done, m.Error):
            return _error(done)
        result.update(superseded=True, new_id=done.data["new"])
        note = done.text
    if as_json:
        print_json(result)
        if code:
            print(f"hippoctl: {note}", file=sys.stderr)
    elif code:
        print(f"hippoctl: {note}", file=sys.stderr)
    else:
        print(note)
    return code
