"""The sources' own times that order edits: Slack's ts and GitHub's updated_at, read exactly."""

from __future__ import annotations

from hippod.connectors.plans import iso_time, slack_time


def test_slack_ts_is_read_to_the_microsecond_without_float_rounding() -> None:
    assert slack_time("1700000000.000100") == 1_700_000_000_000_100
    assert slack_time("1700000000.0001") == 1_700_000_000_000_100
    assert slack_time("1700000000") == 1_700_000_000_000_000
    assert slack_time("1700000000.999999") - slack_time("1700000000.999998") == 1  # type: ignore[operator]
    for bad in ("", "abc", "1.2.3", "-1700000000.1", "1700000000.1234567", "１７", None, 1700000000.1):
        assert slack_time(bad) is None, bad


def test_iso_times_compare_across_zone_spellings() -> None:
    assert iso_time("2026-11-30T10:00:00Z") == iso_time("2026-11-30T10:00:00+00:00")
    assert iso_time("2026-11-30T12:00:00+02:00") == iso_time("2026-11-30T10:00:00Z")
    assert iso_time("2026-11-30T10:00:01Z") - iso_time("2026-11-30T10:00:00Z") == 1_000_000  # type: ignore[operator]
    assert iso_time("1970-01-01T00:00:00Z") == 0
    for bad in ("", "yesterday", None, 17):
        assert iso_time(bad) is None, bad
