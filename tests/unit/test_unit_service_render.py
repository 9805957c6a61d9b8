"""The service files as rendered (daemon.md §14): each parsed the way its service manager reads it."""

from __future__ import annotations

import os
import plistlib
import shlex
import shutil
import subprocess
import sys
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from hippod.integrations import service_render as render

REPO = Path(__file__).resolve().parents[2]
TASK_NS = "{http://schemas.microsoft.com/windows/2004/02/mit/task}"
# A home that needs every kind of escaping: a space, systemd's `%` and `$`, XML's `&` and `<`, quotes.
AWKWARD = "/tmp/odd home/100% $HOME & <me> \"q\" 'a'"


def spec_for(env: dict[str, str], python: str = "/opt/py/bin/python3") -> render.ServiceSpec:
    return render.ServiceSpec.from_env(env, python)


def unit_entries(text: str) -> dict[str, list[tuple[str, str]]]:
    """A unit file's sections as systemd reads them: repeated keys kept in order, comments dropped."""
    sections: dict[str, list[tuple[str, str]]] = {}
    current: list[tuple[str, str]] | None = None
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped[0] in "#;":
            continue
        if stripped.startswith("["):
            current = sections.setdefault(stripped.strip("[]"), [])
            continue
        assert current is not None, f"a key outside any section: {line!r}"
        key, sep, value = stripped.partition("=")
        assert sep, f"not a key=value line: {line!r}"
        current.append((key.strip(), value.strip()))
    return sections


def values(sections: dict[str, list[tuple[str, str]]], section: str, key: str) -> list[str]:
    return [v for k, v in sections.get(section, []) if k == key]


def systemd_unquote(word: str) -> str:
    """What systemd makes of one quoted word from systemd_word (specifiers and `$$` undone)."""
    if word.startswith('"'):
        word = word[1:-1].replace('\\"', '"').replace("\\\\", "\\")
    return word.replace("%%", "%").replace("$$", "$")


# --- systemd ------------------------------------------------------------------------------------------


def test_service_unit_has_every_required_key_and_no_environment_when_nothing_is_set() -> None:
    text = render.render_systemd_service(spec_for({}))
    unit = unit_entries(text)
    assert values(unit, "Service", "Type") == ["notify"]
    assert [shlex.split(v) for v in values(unit, "Service", "ExecStart")] == [
        ["/opt/py/bin/python3", "-m", "hippod", "run", "--foreground"]
    ]
    assert values(unit, "Service", "Restart") == ["on-failure"]
    assert values(unit, "Service", "RestartSec") == ["2"]
    assert values(unit, "Service", "LimitNOFILE") == ["8192"]
    assert values(unit, "Service", "Environment") == []
    assert values(unit, "Install", "WantedBy") == ["default.target"]
    assert "@" not in text.replace("hippoctl daemon", "")


def test_service_unit_carries_hippo_home_and_socket_escaped() -> None:
    env = {"HIPPO_HOME": AWKWARD, "HIPPO_SOCKET": "/tmp/s %t.sock"}
    unit = unit_entries(render.render_systemd_service(spec_for(env, python="/opt/my py/bin/python$1")))
    [exec_start] = values(unit, "Service", "ExecStart")
    assert exec_start.startswith('"/opt/my py/bin/python$$1" ')
    assert [systemd_unquote(v) for v in values(unit, "Service", "Environment")] == [
        f"HIPPO_HOME={os.path.realpath(AWKWARD)}",
        "HIPPO_SOCKET=/tmp/s %t.sock",
    ]


def test_service_unit_carries_the_agent_homes_set_at_install() -> None:
    # The daemon started at login wires and watches the same agent folders as the installing shell.
    env = {"CLAUDE_CONFIG_DIR": "/home/u/claude cfg", "CODEX_HOME": "/home/u/.codex-work", "OTHER": "x"}
    unit = unit_entries(render.render_systemd_service(spec_for(env)))
    assert [systemd_unquote(v) for v in values(unit, "Service", "Environment")] == [
        "CLAUDE_CONFIG_DIR=/home/u/claude cfg",
        "CODEX_HOME=/home/u/.codex-work",
    ]
    plist = plistlib.loads(render.render_launchd(spec_for(env)))
    assert plist["EnvironmentVariables"] == {
        "CLAUDE_CONFIG_DIR": "/home/u/claude cfg",
        "CODEX_HOME": "/home/u/.codex-work",
    }


@pytest.mark.parametrize(
    ("env", "listen"),
    [
        ({}, "%t/hippo/hippod.sock"),
        ({"HIPPO_SOCKET": "/run/elsewhere/h 100%.sock"}, "/run/elsewhere/h 100%%.sock"),
    ],
)
def test_socket_unit_listens_where_the_client_connects(env: dict[str, str], listen: str) -> None:
    unit = unit_entries(render.render_systemd_socket(spec_for(env)))
    assert values(unit, "Socket", "ListenStream") == [listen]
    assert values(unit, "Socket", "SocketMode") == ["0600"]
    assert values(unit, "Socket", "DirectoryMode") == ["0700"]
    assert values(unit, "Install", "WantedBy") == ["sockets.target"]


def test_socket_unit_of_a_keyed_home_uses_the_keyed_socket_name(tmp_path: Path) -> None:
    from hippoctl.protocol import paths

    env = {"HIPPO_HOME": str(tmp_path)}
    unit = unit_entries(render.render_systemd_socket(spec_for(env)))
    key = paths.instance_key(env)
    assert key != "default"
    assert values(unit, "Socket", "ListenStream") == [f"%t/hippo/hippod-{key}.sock"]


@pytest.mark.parametrize(
    ("value", "word"),
    [
        ("/usr/bin/python3", "/usr/bin/python3"),
        ("/a b/c", '"/a b/c"'),
        ('/q"uote\\d', '"/q\\"uote\\\\d"'),
        ("/100%", "/100%%"),
        ("/tab\there", '"/tab\\x09here"'),
    ],
)
def test_systemd_word_quotes_only_what_needs_it(value: str, word: str) -> None:
    assert render.systemd_word(value) == word


def verify(tmp_path: Path, *units: Path) -> subprocess.CompletedProcess[str]:
    """`systemd-analyze --user verify` on the units, in a private HOME and runtime dir."""
    binary = shutil.which("systemd-analyze")
    if binary is None:
        pytest.skip("systemd-analyze is not installed here")
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700, exist_ok=True)
    env = dict(os.environ, HOME=str(tmp_path), XDG_RUNTIME_DIR=str(runtime), XDG_CONFIG_HOME=str(tmp_path))
    command = [binary, "--user", "verify", *map(str, units)]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=60)
    if "Failed to initialize manager" in done.stderr:
        pytest.skip(f"systemd-analyze cannot start a user manager here: {done.stderr.strip()}")
    return done


@pytest.mark.parametrize("awkward", [False, True])
def test_systemd_analyze_verifies_both_units(tmp_path: Path, awkward: bool) -> None:
    # A real interpreter at a path that needs quoting: verify checks that ExecStart's program exists.
    odd = tmp_path / "odd bin" / "python 3"
    odd.parent.mkdir()
    odd.symlink_to(sys.executable)
    env = {"HIPPO_HOME": AWKWARD, "HIPPO_SOCKET": str(tmp_path / "run dir" / "h.sock")} if awkward else {}
    spec = spec_for(env, python=str(odd) if awkward else sys.executable)
    units = tmp_path / "units"
    units.mkdir()
    (units / "hippod.service").write_text(render.render_systemd_service(spec))
    (units / "hippod.socket").write_text(render.render_systemd_socket(spec))
    done = verify(tmp_path, units / "hippod.service", units / "hippod.socket")
    assert done.returncode == 0, done.stderr
    # Unknown keys and bad values are only warnings: none may name our units.
    assert "hippod." not in done.stderr, done.stderr


def test_systemd_analyze_catches_a_broken_unit(tmp_path: Path) -> None:
    # The check above can fail: a missing interpreter is an error.
    unit = tmp_path / "hippod.service"
    unit.write_text(render.render_systemd_service(spec_for({}, python=str(tmp_path / "no-python"))))
    done = verify(tmp_path, unit)
    assert done.returncode != 0
    assert "no-python" in done.stderr


# --- launchd ------------------------------------------------------------------------------------------


def test_plist_round_trips_with_the_required_keys_and_types() -> None:
    env = {"HIPPO_HOME": AWKWARD}
    spec = spec_for(env)
    data = plistlib.loads(render.render_launchd(spec))
    assert data["Label"] == "com.hippo.hippod"
    assert data["ProgramArguments"] == ["/opt/py/bin/python3", "-m", "hippod", "run", "--foreground"]
    assert data["RunAtLoad"] is True
    assert data["KeepAlive"] == {"SuccessfulExit": False}
    assert data["KeepAlive"]["SuccessfulExit"] is False
    log_dir = os.path.join(os.path.realpath(AWKWARD), "logs")
    assert os.path.dirname(data["StandardOutPath"]) == log_dir
    assert os.path.dirname(data["StandardErrorPath"]) == log_dir
    assert data["StandardOutPath"] != data["StandardErrorPath"]
    assert data["EnvironmentVariables"] == {"HIPPO_HOME": os.path.realpath(AWKWARD)}


def test_plist_without_a_home_has_no_environment_and_logs_in_the_user_log_dir(tmp_path: Path) -> None:
    data = plistlib.loads(render.render_launchd(spec_for({"HOME": str(tmp_path)})))
    assert "EnvironmentVariables" not in data
    assert data["StandardOutPath"].startswith(str(tmp_path) + os.sep)


# --- Windows Task Scheduler ---------------------------------------------------------------------------


def task_root(spec: render.ServiceSpec) -> ET.Element:
    raw = render.task_bytes(render.render_task_xml(spec))
    assert raw.startswith(b"\xff\xfe<\x00?\x00x\x00m\x00l\x00")  # UTF-16 LE with its byte-order mark
    return ET.fromstring(raw)


def text_at(root: ET.Element, path: str) -> str | None:
    found = root.find("/".join(TASK_NS + part for part in path.split("/")))
    return None if found is None else found.text


def test_task_xml_has_the_schema_elements_in_the_task_namespace() -> None:
    env = {"USERDOMAIN": "CORP", "USERNAME": "ada"}
    root = task_root(spec_for(env, python=r"C:\Py\python.exe"))
    assert root.tag == TASK_NS + "Task"
    assert root.get("version") == "1.2"
    for element in ("RegistrationInfo", "Triggers", "Principals", "Settings", "Actions"):
        assert root.find(TASK_NS + element) is not None, element
    assert text_at(root, "Triggers/LogonTrigger/UserId") == "CORP\\ada"
    assert text_at(root, "Principals/Principal/UserId") == "CORP\\ada"
    assert text_at(root, "Principals/Principal/LogonType") == "InteractiveToken"
    assert text_at(root, "Principals/Principal/RunLevel") == "LeastPrivilege"
    assert text_at(root, "Settings/MultipleInstancesPolicy") == "IgnoreNew"
    assert text_at(root, "Settings/ExecutionTimeLimit") == "PT0S"
    assert text_at(root, "Settings/RestartOnFailure/Interval") == "PT1M"
    assert text_at(root, "Settings/RestartOnFailure/Count") == "3"
    assert text_at(root, "Actions/Exec/Command") == r"C:\Py\python.exe"
    assert text_at(root, "Actions/Exec/Arguments") == "-m hippod run --foreground"
    principal = root.find(f"{TASK_NS}Principals/{TASK_NS}Principal")
    actions = root.find(TASK_NS + "Actions")
    assert principal is not None and actions is not None
    assert actions.get("Context") == principal.get("id")


def test_task_passes_the_home_as_an_argument_escaped(tmp_path: Path) -> None:
    (tmp_path / "python.exe").write_text("")
    (tmp_path / "pythonw.exe").write_text("")
    root = task_root(spec_for({"HIPPO_HOME": AWKWARD, "USERNAME": "ada"}, str(tmp_path / "python.exe")))
    assert text_at(root, "Actions/Exec/Command") == str(tmp_path / "pythonw.exe")
    assert text_at(root, "Triggers/LogonTrigger/UserId") == "ada"
    arguments = text_at(root, "Actions/Exec/Arguments")
    assert arguments == subprocess.list2cmdline(
        ["-m", "hippod", "run", "--foreground", "--env", f"HIPPO_HOME={os.path.realpath(AWKWARD)}"]
    )


def test_the_daemon_takes_env_arguments() -> None:
    from hippod.main import main

    with pytest.raises(SystemExit) as exc:
        main(["run", "--env", "no equals sign"])
    assert exc.value.code == 2


# --- packaging ----------------------------------------------------------------------------------------


def test_every_package_and_template_ships() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    found = {
        ".".join(folder.relative_to(REPO).parts)
        for top in ("hippod", "hippoctl")
        for folder in [REPO / top, *(REPO / top).rglob("*")]
        if (folder / "__init__.py").is_file()
    }
    templates = {f"hippod.service_files.{name}": name for name in ("systemd", "launchd", "windows")}
    assert set(config["packages"]) == found | set(templates)
    assert config["package-dir"] == templates
    for package, folder in templates.items():
        shipped = set(config["package-data"][package])
        assert shipped == {p.name for p in (REPO / folder).iterdir() if p.is_file()}
        for name in shipped:
            assert render.template(folder, name) == (REPO / folder / name).read_text()
