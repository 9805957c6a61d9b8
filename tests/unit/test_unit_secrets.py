"""The secret detector families and the scrubber (ingest.md §4)."""

from __future__ import annotations

import pytest

from hippod.model.secrets import looks_secret, scrub

AWS = "AKIA" + "ABCDEFGHIJKLMNOP"
GITHUB = "ghp_" + "a" * 36
JWT = "eyJhbGciOiJI.eyJzdWIiOiIx.SflKxwRJSMeK"


@pytest.mark.parametrize(
    ("text", "family"),
    [
        (f"the key is {AWS} for prod", "aws"),
        (f"token {GITHUB}", "github"),
        ("Authorization: Bearer abcdefgh12345", "auth-header"),
        (f"session {JWT}", "jwt"),
        ("-----BEGIN RSA PRIVATE KEY-----", "pem"),
    ],
)
def test_each_family_is_flagged_and_redacted(text: str, family: str) -> None:
    assert looks_secret(text)
    scrubbed = scrub(text)
    assert f"[REDACTED:{family}]" in scrubbed
    assert not looks_secret(scrubbed)


def test_sk_keys_count_only_beside_key_words() -> None:
    bare = "sk-" + "x" * 24
    assert not looks_secret(f"the model id {bare}")
    assert scrub(f"the model id {bare}") == f"the model id {bare}"
    assert looks_secret(f"api key {bare}")
    assert scrub(f"api key {bare}") == "api key [REDACTED:api-key]"


def test_assignments_need_a_digit_in_the_value() -> None:
    assert not looks_secret("password = correcthorsebattery")
    assert looks_secret("password = correcthorse99battery")
    assert scrub("export TOKEN=abcdef123456789 now") == "export TOKEN=[REDACTED:assignment] now"


def test_secret_tags_flag_without_text() -> None:
    assert looks_secret("harmless text", ["Credentials"])
    assert not looks_secret("harmless text", ["error"])
