"""A memory takes at most 32 tags of at most 64 characters: the client refuses more before
connecting, and the daemon refuses them on every path that reaches it (a raw request, an MCP call)."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

from e2e.sleep_support import query
from hippoctl.protocol import messages as m

if TYPE_CHECKING:
    from e2e.harness import Hippo

TOO_MANY = "too many tags: 33; the limit is 32"
TOO_LONG = "tag '000ttttttttttttttttt…' is 65 characters long; the limit is 64"


def tag_flags(count: int, length: int = 3) -> list[str]:
    return [word for i in range(count) for word in ("--tag", f"{i:03d}".ljust(length, "t"))]


def ask(hippo: Hippo, body: Any) -> m.Message | None:
    with hippo.raw() as conn:
        assert isinstance(conn.hello(), m.Welcome)
        conn.send(m.Request(id=1, cwd=hippo.root, body=body, global_store=True))
        return conn.recv()


def test_the_client_refuses_too_many_or_too_long_tags(hippo: Hippo) -> None:
    hippo.start()
    hippo.ok("init", "--global")
    kept = hippo.json("remember", "Thirty-two tags are fine", "--global", *tag_flags(32))
    # The daemon's own tags (here a path tag) come on top of the 32.
    assert kept["tags"][:32] == tag_flags(32)[1::2] and len(kept["tags"]) > 32
    longest = hippo.json("remember", "A tag of 64 characters is fine", "--global", *tag_flags(1, 64))
    assert len(longest["tags"][0]) == 64
    # A repeated tag counts once.
    same = hippo.json("remember", "The same tag twice", "--global", "--tag", "db", "--tag", " db ")
    assert same["tags"].count("db") == 1
    for args, message in (
        (["remember", "Thirty-three tags are not", *tag_flags(33)], TOO_MANY),
        (
            ["remember", "Ten thousand tags are not", *tag_flags(10_000)],
            "too many tags: 10000; the limit is 32",
        ),
        (["remember", "A tag of 65 characters", *tag_flags(1, 65)], TOO_LONG),
        (["supersede", kept["id"], "New version with many tags", *tag_flags(33)], TOO_MANY),
        (
            ["supersede", kept["id"], "New version with a long tag", "--tag=" + "t" * 65],
            TOO_LONG.replace("000", "ttt", 1),
        ),
    ):
        done = hippo.ctl(*args, "--global")
        assert (done.returncode, done.stdout) == (2, ""), (args[:2], done)
        assert done.stderr == f"hippoctl: error: {message}\n", (args[:2], done.stderr)
    notes = os.path.join(hippo.root, "notes.json")
    with open(notes, "w", encoding="utf-8") as handle:
        json.dump([{"content": "An imported note about the deploy"}], handle)
    done = hippo.ctl("import", "--json", notes, "--global", *tag_flags(1, 65))
    assert (done.returncode, done.stderr) == (2, f"hippoctl: error: {TOO_LONG}\n")
    hippo.stop()
    assert query(hippo.db, "SELECT count(*) FROM memories") == [(3,)]


def test_the_daemon_refuses_them_on_every_path(hippo: Hippo) -> None:
    hippo.start()
    hippo.ok("init", "--global")
    many = [f"tag{i}" for i in range(10_000)]
    for body in (
        m.Remember(content="Ten thousand tags sent raw", tags=many),
        m.Remember(content="A long tag sent raw", tags=["x" * 65]),
        m.McpToolCall(tool="hippo_remember", arguments={"text": "Many tags over MCP", "tag": many[:33]}),
        m.Import(format="json", path=os.path.join(hippo.root, "none.json"), tags=many[:33]),
    ):
        reply = ask(hippo, body)
        assert isinstance(reply, m.Error) and reply.code == "usage", (type(body).__name__, reply)
        assert reply.message.startswith(
            ("too many tags: ", "tag 'xxxxxxxxxxxxxxxxxxxx…' is 65 characters")
        ), reply
    memory = hippo.json("remember", "The memory to supersede", "--global")["id"]
    reply = ask(hippo, m.Supersede(id=memory, content="Superseded with many tags", tags=many[:40]))
    assert isinstance(reply, m.Error) and reply.message == "too many tags: 40; the limit is 32", reply
    hippo.stop()
    assert query(hippo.db, "SELECT content, superseded_by FROM memories") == [
        ("The memory to supersede", None)
    ]
