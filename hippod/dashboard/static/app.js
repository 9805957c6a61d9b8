// The dashboard's page: one view at a time, chosen by the address's #fragment, each drawn from one
// JSON route of the daemon. Memory text is only ever set as text, never parsed as HTML.
import { el, api, viewParams } from "./dom.js";
import { overview } from "./views/overview.js";
import { memoryMap } from "./views/map.js";
import { pinned, dormant } from "./views/lists.js";
import { conflicts } from "./views/conflicts.js";
import { sleeps } from "./views/sleeps.js";
import { tokens } from "./views/tokens.js";
import { cards } from "./views/cards.js";
import { search } from "./views/search.js";
import { graph } from "./views/graph.js";

const VIEWS = { overview, map: memoryMap, pinned, dormant, conflicts, sleeps, tokens, cards, graph, search };
let drawing = 0;

function current() {
  const [name, query] = location.hash.replace(/^#/, "").split("?");
  return { name: VIEWS[name] ? name : "overview", params: new URLSearchParams(query || "") };
}

async function show() {
  const { name, params } = current();
  const turn = ++drawing;
  for (const section of document.querySelectorAll("main > section")) {
    section.hidden = section.id !== `view-${name}`;
  }
  for (const tab of document.querySelectorAll("#tabs a")) {
    tab.toggleAttribute("aria-current", tab.getAttribute("href") === `#${name}`);
  }
  const section = document.getElementById(`view-${name}`);
  const body = section.querySelector(".body");
  section.dataset.state = "loading";
  try {
    const content = await VIEWS[name](params);
    if (turn !== drawing) return; // another view was asked for meanwhile
    body.replaceChildren(content);
    // Charts size themselves from their container, which exists only now.
    for (const chart of body.querySelectorAll(".chart")) chart.dispatchEvent(new Event("attached"));
    // Drawn: the frame that shows the data is the next one.
    await new Promise((resolve) => requestAnimationFrame(resolve));
    if (turn !== drawing) return;
    performance.mark(`hippo:drawn:${name}`);
    section.dataset.state = "ready";
  } catch (error) {
    if (turn !== drawing) return;
    body.replaceChildren(el("p", { class: "error" }, `Could not load this view: ${error.message}`));
    section.dataset.state = "error";
  }
}

async function start() {
  const meta = await api("meta");
  const select = document.getElementById("store");
  const chosen = viewParams().get("store") || meta.stores[0].root;
  for (const store of meta.stores) {
    const label = `${store.kind === "global" ? "global" : "project"}: ${store.root}`;
    select.append(el("option", { value: store.root, selected: store.root === chosen }, label));
  }
  select.addEventListener("change", () => {
    const query = select.value === meta.stores[0].root ? "" : `?store=${encodeURIComponent(select.value)}`;
    location.assign(`/${query}${location.hash}`);
  });
  document.getElementById("version").textContent = `hippod ${meta.version} · tenant ${meta.tenant}`;
  const form = document.getElementById("search");
  const { name, params } = current();
  if (name === "search") form.q.value = params.get("q") || "";
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const query = form.q.value.trim();
    if (query) location.hash = `#search?q=${encodeURIComponent(query)}`;
  });
  window.addEventListener("hashchange", show);
  await show();
}

start().catch((error) => {
  document.querySelector("main").replaceChildren(el("p", { class: "error" }, `The dashboard could not start: ${error.message}`));
});
