"""The service files' text: the templates under systemd/, launchd/ and windows/, filled in (daemon.md §14).

The templates stay readable as the real unit, plist and task XML, with @NAME@ placeholders. Every
value is escaped for its format: systemd's quoting and specifiers, plistlib for the plist, XML
escaping for the task.
"""

from __future__ import annotations

import getpass
import os
import plistlib
import re
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from xml.sax.saxutils import escape

from hippoctl.protocol import paths
from hippoctl.protocol import service_names as names
from hippoctl.protocol.detached import windowless

DAEMON_ARGS = ("-m", "hippod", "run", "--foreground")
HEADER = "Written by `hippoctl daemon install-service`; `hippoctl daemon uninstall-service` removes it."
AGENT_HOME_VARS = ("CLAUDE_CONFIG_DIR", "CODEX_HOME")
# Where setuptools puts the template folders inside an installed package (pyproject.toml).
_PACKAGED = "service_files"


@dataclass(frozen=True)
class ServiceSpec:
    """What a service file says: the interpreter, the variables it sets, where the socket and logs are."""

    python: str
    environment: tuple[tuple[str, str], ...]
    socket: str
    log_dir: str
    user_id: str

    @classmethod
    def from_env(cls, env: Mapping[str, str], python: str) -> ServiceSpec:
        """The spec for a daemon started with this interpreter in an environment like `env`."""
        home = paths.home_override(env)
        explicit = env.get("HIPPO_SOCKET", "").strip()
        # Absolute values: the service manager starts the daemon in another working directory.
        values = {
            "HIPPO_HOME": home,
            "HIPPO_SOCKET": os.path.abspath(os.path.expanduser(explicit)) if explicit else None,
        }
        # Agent homes set where the service was installed: the daemon started at login reads and
        # wires the same folders, though it does not inherit the user's shell.
        for name in AGENT_HOME_VARS:
            value = env.get(name, "").strip()
            values[name] = os.path.abspath(os.path.expanduser(value)) if value else None
        carried = tuple((name, value) for name, value in values.items() if value)
        return cls(
            python=python,
            environment=carried,
            socket=listen_stream(env),
            log_dir=paths.log_dir(env),
            user_id=task_user_id(env),
        )


def template(folder: str, name: str) -> str:
    """A template's text: from the installed package, else from the source tree's top-level folder."""
    packaged = resources.files("hippod").joinpath(_PACKAGED, folder, name)
    if packaged.is_file():
        return packaged.read_text(encoding="utf-8")
    source = Path(__file__).resolve().parents[2] / folder / name
    return source.read_text(encoding="utf-8")


def listen_stream(env: Mapping[str, str]) -> str:
    """hippod.socket's ListenStream: HIPPO_SOCKET's absolute path, else the instance's socket under %t."""
    explicit = env.get("HIPPO_SOCKET", "").strip()
    if explicit:
        return systemd_specifiers(os.path.abspath(os.path.expanduser(explicit)))
    return f"%t/{paths.APP}/{paths.socket_file_name(paths.instance_key(env))}"


def task_user_id(env: Mapping[str, str]) -> str:
    """The task's user: DOMAIN\\user from the environment where Windows sets it, else the login name."""
    user = env.get("USERNAME", "").strip()
    domain = env.get("USERDOMAIN", "").strip()
    if user and domain:
        return f"{domain}\\{user}"
    return user or getpass.getuser()


# --- systemd ------------------------------------------------------------------------------------------

_SYSTEMD_PLAIN = re.compile(r"[A-Za-z0-9_@%+=:,./-]+")


def systemd_specifiers(value: str) -> str:
    """`%` doubled, so systemd reads no specifier into a literal value."""
    return value.replace("%", "%%")


def systemd_word(value: str, *, exec_line: bool = False) -> str:
    """One word of a unit-file value: quoted when it holds anything beyond plain path characters.

    In ExecStart `$` starts a variable, so it is doubled there.
    """
    value = systemd_specifiers(value)
    if exec_line:
        value = value.replace("$", "$$")
    if _SYSTEMD_PLAIN.fullmatch(value):
        return value
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    escaped = "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in escaped)
    return f'"{escaped}"'


def _strip_header(text: str, opener: str) -> str:
    """The template without its leading comment (which explains the placeholders)."""
    lines = text.splitlines(keepends=True)
    while lines and (lines[0].startswith(opener) or not lines[0].strip()):
        lines.pop(0)
    return "".join(lines)


def render_systemd_service(spec: ServiceSpec) -> str:
    text = _strip_header(template("systemd", names.SERVICE_UNIT), "#")
    environment = "".join(f"Environment={systemd_word(f'{k}={v}')}\n" for k, v in spec.environment)
    text = text.replace("@PYTHON@", systemd_word(spec.python, exec_line=True))
    text = text.replace("@ENVIRONMENT@\n", environment)
    return f"# {HEADER}\n{text}"


def render_systemd_socket(spec: ServiceSpec) -> str:
    text = _strip_header(template("systemd", names.SOCKET_UNIT), "#")
    return f"# {HEADER}\n" + text.replace("@SOCKET@", spec.socket)


# --- launchd ------------------------------------------------------------------------------------------


def render_launchd(spec: ServiceSpec) -> bytes:
    """The agent's plist: the template parsed, its placeholders filled, written back by plistlib."""
    data = plistlib.loads(template("launchd", names.LAUNCHD_LABEL + ".plist").encode("utf-8"))
    data["ProgramArguments"] = [spec.python if a == "@PYTHON@" else a for a in data["ProgramArguments"]]
    for key in ("StandardOutPath", "StandardErrorPath"):
        data[key] = os.path.join(spec.log_dir, os.path.basename(data[key]))
    carried = dict(spec.environment)
    environment = {k: carried[k] for k in data.get("EnvironmentVariables", {}) if k in carried}
    if environment:
        data["EnvironmentVariables"] = environment
    else:
        data.pop("EnvironmentVariables", None)
    return plistlib.dumps(data, sort_keys=False)


# --- Windows Task Scheduler ---------------------------------------------------------------------------


def task_arguments(spec: ServiceSpec) -> str:
    """The task's argument line: the daemon's arguments, and each carried variable as `--env`."""
    words = list(DAEMON_ARGS)
    for name, value in spec.environment:
        words += ["--env", f"{name}={value}"]
    return subprocess.list2cmdline(words)


def render_task_xml(spec: ServiceSpec) -> str:
    """The task's XML as text, declaring UTF-16: encode it with `task_bytes`."""
    text = template("windows", names.TASK_FILE)
    start = text.index("<!--")
    end = text.index("-->", start) + len("-->")
    text = text[:start] + f"<!-- {HEADER} -->" + text[end:]
    text = text.replace('encoding="UTF-8"', 'encoding="UTF-16"', 1)
    values = {
        "@USER_ID@": spec.user_id,
        "@PYTHONW@": windowless(spec.python),
        "@ARGUMENTS@": task_arguments(spec),
    }
    for placeholder, value in values.items():
        text = text.replace(placeholder, escape(value))
    return text


def task_bytes(text: str) -> bytes:
    """UTF-16 little-endian with a byte-order mark, as Task Scheduler writes its own exports."""
    return "\ufeff".encode("utf-16-le") + text.replace("\n", "\r\n").encode("utf-16-le")
