"""The logon task (`hippoctl daemon install-service`), and the hook commands hosts run on Windows."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import WinHippo

from hippoctl.selfcommand import hook_command, windows_word
from hippod.integrations import commands

NS = {"t": "http://schemas.microsoft.com/windows/2004/02/mit/task"}


def _field(task: ET.Element, path: str) -> str:
    found = task.find(path, NS)
    assert found is not None and found.text is not None, path
    return found.text


def test_the_logon_task_is_rendered_registered_reported_and_removed(hippo: WinHippo) -> None:
    installed = hippo.ok("daemon", "install-service").stdout
    xml = Path(hippo.home, "integrations", "hippod-task.xml")
    assert f"Wrote {xml}" in installed
    assert f"Ran schtasks /Create /TN hippod /XML '{xml}' /F" in installed
    raw = xml.read_bytes()
    assert raw.startswith(b"\xff\xfe")  # UTF-16 LE with its byte-order mark, as Task Scheduler writes
    task = ET.fromstring(raw.decode("utf-16"))
    domain, name = os.environ.get("USERDOMAIN", ""), os.environ.get("USERNAME", "")
    user = f"{domain}\\{name}" if domain and name else name
    assert _field(task, "t:Principals/t:Principal/t:UserId") == user
    assert _field(task, "t:Triggers/t:LogonTrigger/t:UserId") == user
    assert _field(task, "t:Triggers/t:LogonTrigger/t:Enabled") == "true"
    assert _field(task, "t:Principals/t:Principal/t:LogonType") == "InteractiveToken"
    assert _field(task, "t:Settings/t:MultipleInstancesPolicy") == "IgnoreNew"
    command = _field(task, "t:Actions/t:Exec/t:Command")
    assert os.path.normcase(command) == os.path.normcase(
        os.path.join(os.path.dirname(sys.executable), "pythonw.exe")
    )
    arguments = _field(task, "t:Actions/t:Exec/t:Arguments")
    assert arguments.startswith("-m hippod run")
    # A task has no environment of its own: the home travels as an argument.
    assert subprocess.list2cmdline([f"HIPPO_HOME={os.path.realpath(hippo.home)}"]) in arguments

    doctor = hippo.ctl("doctor").stdout
    [service] = [line for line in doctor.splitlines() if line.split()[1:2] == ["Service"]]
    assert service.startswith("ok") and f"hippod (Task Scheduler) at {xml}" in service, doctor

    removed = hippo.ok("daemon", "uninstall-service").stdout
    assert "Ran schtasks /Delete /TN hippod /F" in removed
    assert not xml.exists()


def test_a_hook_command_is_one_word_for_bash_powershell_and_cmd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = windows_word("C:\\Users\\ada\\AppData\\Local\\Programs\\Python\\Scripts\\hippoctl.exe")
    assert plain == "C:/Users/ada/AppData/Local/Programs/Python/Scripts/hippoctl.exe"
    # A folder with a space: its 8.3 form, still the same file, needs no quotes in any shell.
    folder = tmp_path / "Program Files With Space"
    folder.mkdir()
    script = folder / "hippoctl.exe"
    script.write_bytes(b"MZ")
    word = windows_word(str(script))
    assert " " not in word and '"' not in word
    assert os.path.samefile(word, script)
    for prefix in (plain, word):
        command = f"{prefix} capture-error"
        assert shlex.split(command) == [prefix, "capture-error"]  # as Git Bash reads it
        assert commands.split(command) == [prefix, "capture-error"]  # as hippod reads it back
        assert commands.is_hippod_form(command, "capture-error")
    # pip's launcher runs the client with `.exe` taken off sys.argv[0]: the command names the .exe.
    monkeypatch.setattr(sys, "argv", [str(folder / "hippoctl"), "hook", "install"])
    assert hook_command() == word
