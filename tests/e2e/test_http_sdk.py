"""The HTTP API driven by the original's own Python SDK (hippo-memory-sdk, `hippo_memory`): every
route it calls for the verbs hippod has, against a live daemon (integrations.md §9)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest
from hippo_memory import Hippo as AsyncHippo
from hippo_memory import HippoError, HippoSync

from e2e.http_support import Api, serve

if TYPE_CHECKING:
    from e2e.harness import Hippo

DEPLOY = "Deploy to staging failed because the migration step was skipped"


def project(hippo: Hippo) -> str:
    folder = os.path.join(hippo.root, "proj")
    os.makedirs(folder)
    hippo.ok("init", "--no-hooks", "--no-schedule", "--no-learn", cwd=folder)
    return folder


def test_memory_calls_round_trip(hippo: Hippo, api: Api) -> None:
    # The same calls on either backend: the daemon's SQLite store, or a team server on PostgreSQL.
    with HippoSync(base_url=api.url, api_key=api.key) as client:
        health = client.health()
        assert health.ok and health.pid == hippo.proc.pid  # type: ignore[union-attr]
        made = client.remember(
            content="Staging deploys need the VPN up first",
            tags=["deploy"],
            scope="team:infra",
            owner="user:ana",
            artifact_ref="file:///runbook.md",
        )
        assert made.id.startswith("mem_") and made.tenant_id == "default" and made.kind == "distilled"
        assert made.tags == ["deploy", "scope:team:infra"] and made.artifact_ref == "file:///runbook.md"
        found = client.recall(q="staging deploys vpn", limit=5)
        assert [r.id for r in found.results] == [made.id]
        assert found.results[0].score > 0 and found.results[0].tokens > 0 and found.total == 1
        # Recall over HTTP strengthens nothing (the retrieval count stays 0).
        assert client.recall(q="staging deploys").results[0].model_extra["retrievalCount"] == 0  # type: ignore[index]
        assert client.recall(q="staging", mode="bm25").results[0].id == made.id
        with pytest.raises(HippoError) as physics:
            client.recall(q="staging", mode="physics")
        assert physics.value.status_code == 501 and "physics" in str(physics.value)
        with pytest.raises(HippoError) as hybrid:
            client.recall(q="staging", mode="hybrid")  # this daemon runs without the model
        assert hybrid.value.status_code == 501 and "hybrid" in str(hybrid.value)

        # outcome: by ids, then the last batch this caller recalled
        assert client.outcome(good=False, ids=[made.id]).applied == 1
        client.recall(q="staging deploys")
        last = client.outcome(good=True)
        assert last.applied == 1 and last.ids == [made.id]

        newer = client.remember(content="Staging deploys need the VPN and the jump host")
        replaced = client.supersede(made.id, new_id=newer.id)
        assert replaced.ok and replaced.id == made.id and replaced.superseded_by == newer.id
        assert [r.id for r in client.recall(q="staging deploys vpn").results] == [newer.id]

        raw = client.remember(content="Customer Acme asked for a refund on the invoice", kind="raw")
        assert raw.kind == "raw"
        with pytest.raises(HippoError) as append_only:
            client.forget(raw.id)
        assert append_only.value.status_code == 409
        archived = client.archive(raw.id, reason="holds a customer name")
        assert archived.ok and archived.id == raw.id and archived.reason == "holds a customer name"
        assert client.recall(q="refund invoice").results == []

        gone = client.forget(newer.id)
        assert gone.ok and gone.id == newer.id
        with pytest.raises(HippoError) as missing:
            client.forget(newer.id)
        assert missing.value.status_code == 404
    inspect = hippo.ctl("inspect", newer.id, "--global")
    assert inspect.returncode == 1 and "no memory" in inspect.stderr


def test_context_sleep_drill_promote_and_assemble(hippo: Hippo) -> None:
    hippo.start()
    folder = project(hippo)
    hippo.ok("session", "log", "--id", "s-1", "--content", "started the ledger port", cwd=folder)
    hippo.ok("session", "log", "--id", "s-1", "--content", "ported the first table", cwd=folder)
    # Served from inside a project, the listener serves that project's store.
    reply = hippo.json("serve", "--port", "0", cwd=folder)
    assert reply["store"] == os.path.join(os.path.realpath(folder), ".hippo")
    with HippoSync(base_url=reply["url"]) as client:
        for text in (DEPLOY, f"{DEPLOY} again", f"{DEPLOY} again today"):
            client.remember(content=text)
        context = client.get_context(q="staging migration", budget=1500)
        assert len(context.entries) == 3 and context.tokens > 0
        assert all(e.entry.content and e.score > 0 and e.tokens > 0 for e in context.entries)
        assert context.entries[0].projected()["global"] is False
        dry = client.sleep(dry_run=True)
        assert dry.dry_run and dry.merged_episodic == 3 and dry.new_semantic == 1
        slept = client.sleep(no_share=True)
        assert not slept.dry_run and slept.merged_episodic == 3
        [merge] = slept.model_extra["merges"]  # type: ignore[index]
        drilled = client.drill(merge["semanticId"])
        assert drilled.total_children == 3 and not drilled.truncated
        assert {c["id"] for c in drilled.children} == set(merge["members"])
        kept = client.remember(content="Run the ledger migrations before the API deploy")
        promoted = client.promote(kept.id)
        assert promoted.ok and promoted.source_id == kept.id and promoted.global_id
        assembled = client.assemble("s-1")
        assert assembled.session_id == "s-1" and len(assembled.items) == 2
        assert [i["content"] for i in assembled.items][-1].endswith("ported the first table")
    globally = hippo.ok("recall", "ledger migrations", "--global").stdout
    assert "Run the ledger migrations before the API deploy" in globally


def test_keys_audit_and_paging(hippo: Hippo) -> None:
    url = serve(hippo)
    with HippoSync(base_url=url) as client:
        made = [client.auth_create(label=f"ci-{n}", role="member") for n in range(5)]
        assert all(k.plaintext.startswith(k.key_id + ".") and k.role == "member" for k in made)
        assert client.auth_create(label="ops").role == "admin"  # the SDK's default server-side role
        listed = client.auth_list(page_size=2)  # follows X-Next-Cursor across three pages
        assert [k.key_id for k in listed][:5] == [k.key_id for k in reversed(made)][:5] or len(listed) == 6
        assert len(listed) == 6 and len({k.key_id for k in listed}) == 6
        revoked = client.auth_revoke(made[0].key_id)
        assert revoked.ok and revoked.key_id == made[0].key_id and revoked.revoked_at
        assert made[0].key_id not in {k.key_id for k in client.auth_list()}
        assert made[0].key_id in {k.key_id for k in client.auth_list(active=False)}
        events = client.audit(op="auth_create", limit=10)
        assert len(events) == 6 and all(e.actor == "localhost:cli" and e.op == "auth_create" for e in events)
        assert client.audit(op="auth_revoke")[0].target_id == made[0].key_id
        with HippoSync(base_url=url, api_key=made[1].plaintext) as member:
            assert member.remember(content="A member may store memories").id
            with pytest.raises(HippoError) as forbidden:
                member.audit()
            assert forbidden.value.status_code == 403


def test_decisions(hippo: Hippo) -> None:
    url = serve(hippo)
    with HippoSync(base_url=url) as client:
        first = client.decide("Use SQLite for the ledger", context="one writer, one file")
        assert first.status == "active" and first.decision_text == "Use SQLite for the ledger"
        assert first.context == "one writer, one file" and first.memory_id
        second = client.supersede_decision(first.id, "Use PostgreSQL for the ledger", context="three writers")
        assert second.id != first.id and second.status == "active"
        old = client.get_decision(first.id)
        assert old.status == "superseded" and old.superseded_by == second.id and old.superseded_at
        assert [d.id for d in client.list_decisions(status="active")] == [second.id]
        assert len(client.list_decisions()) == 2
        closed = client.close_decision(second.id)
        assert closed.status == "closed" and closed.closed_at
        with pytest.raises(HippoError) as again:
            client.supersede_decision(first.id, "Use DuckDB")
        assert again.value.status_code == 409
        with pytest.raises(HippoError) as missing:
            client.get_decision(999)
        assert missing.value.status_code == 404
    listed = hippo.ok("decide", "list", "--global").stdout
    assert "Use PostgreSQL for the ledger" in listed and "[closed]" in listed


def test_the_families_hippod_does_not_keep_answer_501(hippo: Hippo) -> None:
    url = serve(hippo)
    calls = [
        lambda c: c.predict("The port takes two weeks", class_tag="migration-effort"),
        lambda c: c.list_predictions(),
        lambda c: c.get_prediction_baserate("migration-effort"),
        lambda c: c.open_incident("The API was down"),
        lambda c: c.get_incident(1),
        lambda c: c.new_process("release", steps=["tag", "ship"]),
        lambda c: c.list_processes(),
        lambda c: c.new_policy("retention", "Keep logs 30 days"),
        lambda c: c.policies_asof("2026-01-01"),
        lambda c: c.new_skill("review", "Read the diff twice"),
        lambda c: c.export_skills(),
        lambda c: c.new_project_brief("api", "The API service"),
        lambda c: c.refresh_project_brief("api"),
        lambda c: c.new_customer_note("acme", "Prefers email"),
        lambda c: c.close_customer_note(1),
    ]
    with HippoSync(base_url=url) as client:
        for call in calls:
            with pytest.raises(HippoError) as refused:
                call(client)
            assert refused.value.status_code == 501, refused.value
            assert refused.value.body is not None and refused.value.body["code"] == "not_implemented"
            assert "not available in hippod" in str(refused.value)


async def test_the_async_client(hippo: Hippo) -> None:
    url = serve(hippo)
    async with AsyncHippo(base_url=url) as client:
        made = await client.remember(content="The async client stores and recalls the same way")
        found = await client.recall(q="async client recalls")
        assert [r.id for r in found.results] == [made.id]
        assert (await client.outcome(good=True)).ids == [made.id]


@pytest.mark.embeddings
def test_hybrid_recall_through_the_sdk(hippo: Hippo) -> None:
    url = serve(hippo)
    with HippoSync(base_url=url) as client:
        made = client.remember(content="Production outage: disk space exhausted on the database host")
        client.remember(content="Cats like to sleep in the sun")
        assert hippo.wait_for(lambda: "2 of 2" in hippo.ok("embed", "--status", "--global").stdout, 30)
        found = client.recall(q="database disk full", mode="hybrid")
        assert found.model_extra["mode"] == "hybrid"  # type: ignore[index]
        assert found.results[0].id == made.id


def test_a_write_retried_with_its_idempotency_key_is_stored_once(hippo: Hippo, api: Api) -> None:
    import httpx

    with httpx.Client(base_url=api.url, headers=api.headers) as client:
        sent = [
            client.post("/v1/memories", json={"content": text}, headers={"Idempotency-Key": key})
            for text, key in (
                ("The cache key changed", "k1"),
                ("The cache key changed", "k1"),
                ("Other", "k2"),
            )
        ]
        assert [r.status_code for r in sent] == [201, 201, 201]
        ids = [r.json()["id"] for r in sent]
        assert ids[0] == ids[1] != ids[2]
        found = client.get("/v1/memories", params={"q": "cache key changed"}).json()["results"]
        assert [r["id"] for r in found] == [ids[0]]
        too_long = client.post(
            "/v1/memories", json={"content": "x y"}, headers={"Idempotency-Key": "k" * 257}
        )
        assert too_long.status_code == 400 and "Idempotency-Key" in too_long.text


def test_a_rejected_value_leaves_recall_and_is_refused_on_either_backend(hippo: Hippo, api: Api) -> None:
    with HippoSync(base_url=api.url, api_key=api.key) as client:
        wrong = client.remember(content="The API listens on port 8080")
        kept = client.remember(content="The API docs live in the wiki")
        rejected = hippo.json("reject", wrong.id, "--reason", "it is 9090")
        assert rejected["removed"] == [wrong.id]
        assert [r.id for r in client.recall(q="api port docs").results] == [kept.id]
        with pytest.raises(HippoError) as refused:
            client.remember(content="the api listens on PORT 8080.")
        assert refused.value.status_code in (409, 422) and "rejected" in str(refused.value)
        digest = rejected["digest"]
        listed = hippo.json("rejections")
        assert [r["digest"] for r in listed["rejections"]] == [digest]
        hippo.ok("unreject", digest[:8])
        assert client.remember(content="The API listens on port 8080").id


def test_sleep_conflicts_and_the_audit_on_either_backend(hippo: Hippo, api: Api) -> None:
    flag_on = "The feature flag is enabled for production users"
    with HippoSync(base_url=api.url, api_key=api.key) as client:
        for text in (DEPLOY, f"{DEPLOY} again", f"{DEPLOY} again today", flag_on):
            client.remember(content=text)
        key = client.auth_create(label="ana", role="member")
        with HippoSync(base_url=api.url, api_key=key.plaintext) as member:
            off = member.remember(content="The feature flag is disabled for production users")
        dry = client.sleep(dry_run=True)
        assert dry.dry_run and dry.merged_episodic == 5 and dry.new_semantic == 2
        slept = client.sleep(no_share=True)
        assert not slept.dry_run and slept.merged_episodic == 5
        assert slept.model_extra["openConflicts"] == 1  # type: ignore[index]
        stored = client.audit(limit=100)
        by_op = {(e.op, e.actor) for e in stored}
        assert ("remember", f"api_key:{key.key_id}") in by_op and ("consolidate", "daemon") in by_op
        assert [e.target_id for e in stored if e.actor == f"api_key:{key.key_id}"] == [off.id]
    # The operator's verbs reach the same store through the server's socket.
    [conflict] = hippo.json("conflicts", "--global")["conflicts"]
    assert off.id in (conflict["a"]["id"], conflict["b"]["id"])
    done = hippo.json("resolve", str(conflict["id"]), "--keep", off.id, "--global")
    assert done["action"] == "weakened"
    assert hippo.json("conflicts", "--global")["conflicts"] == []
