"""What the Windows code computes from plain values, checked on any platform: the daemon's pipe name,
and a hook command's first word as the shells hosts use on Windows read it."""

from __future__ import annotations

import shlex

from hippoctl.protocol import paths
from hippoctl.selfcommand import windows_word
from hippod.integrations import commands


def test_the_pipe_is_named_for_the_user_and_the_instance() -> None:
    env = {"USERNAME": "Ada Lovelace"}
    assert paths.pipe_name("default", env) == "\\\\.\\pipe\\hippod-ada_lovelace-default"
    keyed = {**env, "HIPPO_HOME": "/tmp/some-home"}
    key = paths.instance_key(keyed)
    assert key != "default" and len(key) == 12
    assert paths.pipe_name(key, keyed) == f"\\\\.\\pipe\\hippod-ada_lovelace-{key}"
    # No backslash can reach the name from the user's name (a pipe's name is one path component).
    assert "\\" not in paths.pipe_name("default", {"USERNAME": "CORP\\ada"})[len(paths.PIPE_PREFIX) :]


def test_a_plain_path_becomes_one_unquoted_word_with_forward_slashes() -> None:
    word = windows_word("C:\\Users\\ada\\AppData\\Local\\Programs\\Python\\Scripts\\hippoctl.exe")
    assert word == "C:/Users/ada/AppData/Local/Programs/Python/Scripts/hippoctl.exe"
    assert shlex.split(f"{word} capture-error") == [word, "capture-error"]


def test_a_path_with_a_space_and_no_short_form_is_double_quoted() -> None:
    # Off Windows there is no 8.3 form to take, as on a volume that keeps none.
    word = windows_word("C:\\Program Files\\Python\\Scripts\\hippoctl.exe")
    assert word == '"C:/Program Files/Python/Scripts/hippoctl.exe"'
    assert shlex.split(f"{word} capture-error") == [
        "C:/Program Files/Python/Scripts/hippoctl.exe",
        "capture-error",
    ]
    assert commands.is_hippoctl_prefix(["C:/Program Files/Python/Scripts/hippoctl.exe"])
