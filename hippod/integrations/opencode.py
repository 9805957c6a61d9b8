"""OpenCode's plugin `<config>/opencode/plugins/hippo.ts`, and the clean-up of a stray `hooks` key in
`opencode.json` (integrations.md §6, §8 rule 4).

OpenCode does not read Claude-style hook keys (a `hooks` key makes it refuse to start), so hippod
wires it with a plugin (its text below says what it does on which event). The plugin's first line
is its marker: a file without it is the user's and is never overwritten or deleted.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from typing import Any

from hippod.integrations import files, homes, installed, jsonedit
from hippod.integrations.commands import runs_hippo, split
from hippod.integrations.report import Report

TARGET = "opencode"
MARKER = "// HIPPO_OPENCODE_PLUGIN_V1 (hippod)"
# Any version's marker, hippod's or the original hippo's (`// HIPPO_OPENCODE_PLUGIN_V1`).
MARKER_STEM = "// HIPPO_OPENCODE_PLUGIN_V"
CONFIG_NAME = "opencode.json"

_SOURCE = """@MARKER@
// Written by `hippoctl hook install opencode`, which rewrites this file while the line above is
// there (delete that line to keep your own changes); `hippoctl hook uninstall opencode` removes it.
//
// A new session (not a subagent's) runs `hippoctl last-sleep`, and what it prints goes into that
// session's system prompt, as Claude Code's SessionStart hook adds it to the context. A session
// ends when it is deleted or when OpenCode closes (server.instance.disposed, or the plugin's
// dispose): each session that had a turn then runs `hippoctl session-end --once`, once (session.idle
// comes at the end of every turn, so it ends nothing).
// @ts-nocheck: plain JavaScript, which Bun and Node both run as it is.

import { spawn } from "node:child_process";

const SESSION_END = @SESSION_END@;
const LAST_SLEEP = @LAST_SLEEP@;
const WAIT_MS = 15000;

// Runs argv (no shell) in `cwd` with the hook's JSON on stdin; resolves to what it printed, or ""
// when it cannot run. Never rejects: a missing or failing hippoctl must not disturb the session.
function run(argv, payload, cwd) {
  return new Promise((resolve) => {
    let out = "";
    let child;
    try {
      child = spawn(argv[0], argv.slice(1), {
        cwd,
        stdio: ["pipe", "pipe", "ignore"],
        detached: process.platform !== "win32", // a Ctrl-C that closes OpenCode must not stop it
        windowsHide: true,
      });
    } catch {
      resolve("");
      return;
    }
    const timer = setTimeout(() => child.kill(), WAIT_MS);
    child.on("error", () => {
      clearTimeout(timer);
      resolve("");
    });
    child.on("close", () => {
      clearTimeout(timer);
      resolve(out);
    });
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk) => {
      out += chunk;
    });
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(payload));
  });
}

export const HippoPlugin = async ({ directory } = {}) => {
  const home = typeof directory === "string" && directory ? directory : process.cwd();
  const subagents = new Set(); // sessions with a parent: no report shown, no session end
  const active = new Map(); // session id -> its folder, once it had a turn and until it ends
  const ended = new Set();
  const reports = new Map(); // session id -> the promise of last-sleep's text
  let newest; // for an OpenCode that names no session in the system-prompt hook

  const folderOf = (info) => (info && typeof info.directory === "string" && info.directory) || home;

  const started = (info) => {
    if (!info || typeof info.id !== "string") return;
    if (info.parentID) {
      subagents.add(info.id);
      return;
    }
    if (reports.has(info.id)) return;
    newest = info.id;
    const folder = folderOf(info);
    const payload = { session_id: info.id, cwd: folder, hook_event_name: "SessionStart", source: "startup" };
    reports.set(info.id, run(LAST_SLEEP, payload, folder).then((text) => text.trim()));
  };

  const touched = (id) => {
    if (typeof id === "string" && !subagents.has(id) && !ended.has(id) && !active.has(id)) {
      active.set(id, home);
    }
  };

  const end = (id, folder) => {
    if (!active.has(id) || ended.has(id) || subagents.has(id)) return Promise.resolve("");
    const cwd = folder || active.get(id);
    active.delete(id);
    ended.add(id);
    return run(SESSION_END, { session_id: id, cwd, hook_event_name: "SessionEnd" }, cwd);
  };

  const endAll = () => Promise.all([...active.keys()].map((id) => end(id)));

  return {
    event: async ({ event } = {}) => {
      const props = (event && event.properties) || {};
      const info = props.info || {};
      switch (event && event.type) {
        case "session.created":
          started(props.info);
          break;
        case "session.updated":
          if (info.parentID) subagents.add(info.id);
          break;
        case "session.idle":
          touched(props.sessionID);
          break;
        case "session.status":
          if (props.status && props.status.type === "idle") touched(props.sessionID);
          break;
        case "session.deleted":
          await end(info.id, info.directory);
          break;
        case "server.instance.disposed":
          await endAll();
          break;
      }
    },
    "chat.message": async (input) => {
      touched(input && input.sessionID);
    },
    "experimental.chat.system.transform": async (input, output) => {
      const id = (input && input.sessionID) || newest;
      const report = reports.get(id);
      const text = report ? await report : "";
      if (text && output && Array.isArray(output.system)) output.system.push(text);
    },
    dispose: async () => {
      await endAll();
    },
  };
};
"""


def plugin_path(env: Mapping[str, str]) -> str:
    return os.path.join(homes.opencode_home(env), "plugins", "hippo.ts")


def home_exists(env: Mapping[str, str]) -> bool:
    return os.path.isdir(homes.opencode_home(env))


def plugin_source(prefix: str) -> str:
    """The plugin's text; each command is an argument list, run without a shell."""
    words = split(prefix) or ["hippoctl"]
    return (
        _SOURCE.replace("@MARKER@", MARKER)
        .replace("@SESSION_END@", json.dumps([*words, "session-end", "--once"]))
        .replace("@LAST_SLEEP@", json.dumps([*words, "last-sleep"]))
    )


def _not_ours(path: str) -> str:
    return f"{path} does not start with the {MARKER_STEM}… marker, so it is not hippod's; left alone"


def _first_line(text: str) -> str:
    return text.split("\n", 1)[0].strip()


def plugin_state(prefix: str, env: Mapping[str, str]) -> str:
    """`absent`, `installed` (the current text), `outdated` (a marked older text) or `edited` (a
    file without the marker, or one that is not text)."""
    try:
        text = files.read_text(plugin_path(env))
    except files.Unreadable:
        return "edited"
    if text is None:
        return "absent"
    if not _first_line(text).startswith(MARKER_STEM):
        return "edited"
    return "installed" if text == plugin_source(prefix) else "outdated"


def config_paths(project: str | None, env: Mapping[str, str]) -> list[str]:
    """The project's and the user's opencode.json."""
    paths = [] if project is None else [os.path.join(project, CONFIG_NAME)]
    return [*paths, os.path.join(homes.opencode_home(env), CONFIG_NAME)]


def _holds_hippo(value: Any) -> bool:
    if isinstance(value, dict):
        command = value.get("command")
        if isinstance(command, str) and runs_hippo(command):
            return True
        return any(_holds_hippo(v) for v in value.values())
    if isinstance(value, list):
        return any(_holds_hippo(v) for v in value)
    return False


def stray_hooks(path: str) -> bool | None:
    """Whether opencode.json has a `hooks` key running hippo; None when the file does not parse."""
    try:
        text = files.read_text(path)
    except files.Unreadable:
        return None
    if text is None or '"hooks"' not in text:
        return False
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return None
    return isinstance(data, dict) and _holds_hippo(data.get("hooks"))


def _clean_config(path: str, report: Report, global_root: str) -> None:
    found = stray_hooks(path)
    if found is None:
        report.warnings.append(f"{path} is not valid JSON; its hooks key (if any) left as it is")
        return
    if not found:
        return
    text = files.read_text(path)
    assert text is not None
    data = json.loads(text)
    del data["hooks"]
    files.write_atomic(path, jsonedit.render(text, data), global_root=global_root)
    report.lines.append(f"Removed the stray hooks key (hippo commands) from {path}")


def install(prefix: str, project: str | None, *, global_root: str, env: Mapping[str, str]) -> Report:
    """Write the plugin (unless a file without the marker is there) and clean opencode.json."""
    report = Report()
    path = plugin_path(env)
    state = plugin_state(prefix, env)
    if state == "edited":
        report.warnings.append(_not_ours(path))
    else:
        source = plugin_source(prefix)
        if state != "installed":
            # A file with hippod's own marker is hippod's whole: nothing of the user's to back up.
            ours = state == "outdated" and _first_line(files.read_text(path) or "") == MARKER
            files.write_atomic(path, source, global_root=global_root, backup=not ours)
            verb = "Installed" if state == "absent" else "Updated"
            report.lines.append(f"{verb} OpenCode plugin {path}")
        digest = hashlib.sha256(source.encode("utf-8")).hexdigest()
        installed.add(global_root, installed.Record(target=TARGET, kind="plugin", file=path, digest=digest))
    for config in config_paths(project, env):
        _clean_config(config, report, global_root)
    return report


def uninstall(project: str | None, *, global_root: str, env: Mapping[str, str]) -> Report:
    """Delete the plugin only when its marker is there, and clean opencode.json."""
    report = Report()
    path = plugin_path(env)
    text = files.read_or_warn(path, report)
    if text is not None:
        first = _first_line(text)
        if first == MARKER:
            # hippod generated the whole file: there is nothing of the user's to back up.
            os.unlink(path)
            report.lines.append(f"Removed OpenCode plugin {path}")
        elif first.startswith(MARKER_STEM):
            files.remove(path, global_root)
            report.lines.append(f"Removed OpenCode plugin {path}")
        else:
            report.warnings.append(_not_ours(path))
    installed.remove(global_root, lambda r: r.target == TARGET and r.kind == "plugin")
    for config in config_paths(project, env):
        _clean_config(config, report, global_root)
    return report
