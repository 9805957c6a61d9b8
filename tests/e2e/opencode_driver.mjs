// Loads an OpenCode plugin file the way OpenCode does (every export is a plugin function, called
// with the plugin input) and plays a scenario at it: events are fired without waiting, as
// OpenCode's bus delivers them; hooks are awaited, as OpenCode awaits them.
//
//   node opencode_driver.mjs <plugin.mjs> <directory> <scenario.json>
//
// A scenario is a list of steps:
//   {"event": {...}}                       fire an event (not awaited)
//   {"chat": "<session id>"}               a user message in that session (chat.message)
//   {"system": "<session id>" | null}      build a system prompt; its parts are printed
//   {"settle": true}                       wait for every event fired so far
//   {"dispose": true}                      the plugin's dispose hook
// Prints {"systems": [[...], ...]}: the system prompt of each "system" step, in order.

import { pathToFileURL } from "node:url";
import { readFileSync } from "node:fs";

const [pluginPath, directory, scenarioPath] = process.argv.slice(2);
const mod = await import(pathToFileURL(pluginPath).href);
const input = { client: {}, project: {}, directory, worktree: directory, serverUrl: new URL("http://localhost:4096") };
const hooks = [];
for (const plugin of new Set(Object.values(mod))) hooks.push(await plugin(input));

const pending = [];
const systems = [];
for (const step of JSON.parse(readFileSync(scenarioPath, "utf8"))) {
  if (step.event) {
    for (const hook of hooks) if (hook.event) pending.push(hook.event({ event: step.event }));
  } else if (step.chat) {
    for (const hook of hooks) await hook["chat.message"]?.({ sessionID: step.chat }, { message: {}, parts: [] });
  } else if ("system" in step) {
    const output = { system: ["You are OpenCode."] };
    const given = step.system === null ? {} : { sessionID: step.system };
    for (const hook of hooks) await hook["experimental.chat.system.transform"]?.({ ...given, model: {} }, output);
    systems.push(output.system);
  } else if (step.settle) {
    await Promise.all(pending.splice(0));
  } else if (step.dispose) {
    for (const hook of hooks) await hook.dispose?.();
  }
}
await Promise.all(pending);
process.stdout.write(JSON.stringify({ systems }) + "\n");
