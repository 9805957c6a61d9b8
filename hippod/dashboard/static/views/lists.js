// Pinned memories and the dormant store, a page at a time.
import { el, api, number, fixed, when, pager, table, command, empty } from "../dom.js";
import { timeChart, seconds } from "../charts.js";

function memoryCell(item) {
  return el("td", { class: "content" }, item.content, ...item.tags.map((tag) => el("span", { class: "tag" }, tag)));
}

export async function pinned(params) {
  const data = await api("pinned", { page: params.get("page") || 0 });
  if (!data.count) return empty("No pinned memory. `hippoctl remember \"...\" --pin` pins one: it never decays and reaches every prompt.");
  return el(
    "div",
    {},
    el("p", { class: "muted" }, `${number(data.count)} pinned: they never decay, sleep never removes them, and the prompt hook injects them every time.`),
    table(
      ["memory", "layer", "retrieved", "pinned since"],
      data.rows.map((item) => el("tr", { dataset: { id: item.id } }, memoryCell(item), el("td", { class: "nowrap" }, item.layer), el("td", { class: "num" }, number(item.retrieval_count)), el("td", {}, when(item.when)))),
    ),
    pager(data.page, data.pages, params, "pinned"),
  );
}

export async function dormant(params) {
  const data = await api("dormant", { page: params.get("page") || 0 });
  if (!data.count) return empty("Nothing is dormant. Memories that fade below the threshold during a sleep are parked here, restorable, for 180 days.");
  const chart = timeChart(
    "Memories that went dormant, per day",
    data.per_day.map(([day]) => seconds(day)),
    [{ label: "went dormant", values: data.per_day.map(([, count]) => count) }],
    { yLabel: "memories" },
  );
  return el(
    "div",
    {},
    el("p", { class: "muted" }, `${number(data.count)} dormant: out of recall and context, kept for restoring.`),
    el("div", { class: "charts" }, chart),
    table(
      ["memory", "layer", "strength when parked", "dormant since", "restore"],
      data.rows.map((item) =>
        el(
          "tr",
          { dataset: { id: item.id } },
          memoryCell(item),
          el("td", { class: "nowrap" }, item.layer),
          el("td", { class: "num" }, fixed(item.strength)),
          el("td", {}, when(item.when)),
          el("td", {}, command(item.command)),
        ),
      ),
    ),
    pager(data.page, data.pages, params, "dormant"),
  );
}
