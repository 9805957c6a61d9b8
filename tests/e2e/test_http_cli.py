"""`hippoctl serve` and `hippoctl auth` as a user types them: usage errors before any connection,
the key's plaintext shown once and stored only as its hash."""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from e2e.harness import Hippo


def test_auth_create_list_revoke(hippo: Hippo) -> None:
    hippo.start()
    made = hippo.ok("auth", "create", "--role", "member", "--label", "ci runner").stdout.splitlines()
    assert made[0].startswith("Created member key hk_") and made[0].endswith("for tenant default (ci runner)")
    plaintext = made[1]
    key_id = plaintext.split(".")[0]
    assert "only time" in made[2]
    listed = hippo.ok("auth", "list").stdout
    assert key_id in listed and "member" in listed and plaintext not in listed
    with sqlite3.connect(hippo.db) as conn:
        [(stored,)] = conn.execute("SELECT key_hash FROM api_keys").fetchall()
        text = "\n".join(str(r) for r in conn.execute("SELECT * FROM api_keys"))
    assert stored.startswith("scrypt$") and plaintext.split(".")[1] not in text
    assert hippo.ok("auth", "revoke", key_id).stdout.strip() == f"Revoked {key_id}"
    assert "already revoked" in hippo.ok("auth", "revoke", key_id).stdout
    assert hippo.ok("auth", "list").stdout.strip() == "No API keys for tenant default."
    assert "revoked" in hippo.ok("auth", "list", "--all").stdout
    other = hippo.ok("auth", "create", "--tenant", "acme").stdout
    assert "for tenant acme" in other
    assert hippo.json("auth", "list", "--tenant", "acme")["keys"][0]["tenant"] == "acme"
    missing = hippo.ctl("auth", "revoke", "hk_" + "a" * 24)
    assert missing.returncode == 1 and "no API key" in missing.stderr
    audit = hippo.ok("audit", "list", "--global").stdout
    assert "auth_create" in audit and "auth_revoke" in audit and plaintext not in audit


def test_usage_errors_never_reach_the_daemon(hippo: Hippo) -> None:
    for args, env, words in (
        (("auth", "revoke"), {}, "needs the key's id"),
        (("auth", "create", "hk_x"), {}, "takes no key id"),
        (("auth", "create", "--role", "owner"), {}, "--role"),
        (("serve", "--stop", "--port", "7000"), {}, "takes no other option"),
        (("serve", "--port", "70000"), {}, "not a port"),
        (("serve",), {"HIPPO_PORT": "http"}, "HIPPO_PORT"),
        (("slack", "backfill"), {}, "--channel"),
        (("slack", "dlq"), {}, "dlq needs list"),
    ):
        done = hippo.ctl(*args, env=dict(hippo.env, **env))
        assert done.returncode == 2, (args, done.stderr)
        assert words in done.stderr and len(done.stderr.strip().splitlines()) == 1, (args, done.stderr)
    assert hippo.answers() is None  # nothing was sent, so no daemon was started
    assert "--allow-remote" in hippo.ok("help", "serve").stdout
