// The memory map: every memory counted by layer with its live strength (histograms over the whole
// store, figured by the daemon), a page of memories at a time, and decay curves down to the dormant
// threshold, as sleep judges fading.
import { el, api, figure, number, fixed, when, days, strength, pager, table, empty } from "../dom.js";
import { histogram, lineChart } from "../charts.js";

const SORTS = { weakest: "weakest first", strongest: "strongest first", retrieved: "most retrieved", recent: "recently retrieved" };

function link(params, changes) {
  const next = new URLSearchParams(params);
  for (const [key, value] of Object.entries(changes)) {
    if (value === null) next.delete(key);
    else next.set(key, value);
  }
  next.delete("page");
  return `#map?${next}`;
}

function layerCard(f, data, params) {
  const active = params.get("layer") === f.layer;
  return el(
    "a",
    { class: `panel layer${active ? " active" : ""}`, href: link(params, { layer: active ? null : f.layer }), dataset: { layer: f.layer } },
    el("h3", {}, f.layer),
    el(
      "div",
      { class: "figures" },
      figure("memories", number(f.count), "count"),
      figure("mean strength", fixed(f.mean), "mean"),
      figure("pinned", number(f.pinned), "pinned"),
      figure(`at risk (< ${data.at_risk_below})`, number(f.at_risk), "at_risk"),
      figure(`below ${data.dormant_below}`, number(f.fading), "fading"),
    ),
  );
}

function curvesChart(curves, data) {
  if (!curves.series.length) return empty("No memory on this page can fade.");
  const gap = curves.basis === "adaptive" && curves.mean_gap_days > 1 ? `, half-lives stretched by the ${fixed(curves.mean_gap_days, 1)}-day gap between sleeps` : "";
  return lineChart(
    `Decay to the dormant threshold if not used again (decay basis ${curves.basis}${gap})`,
    curves.days,
    curves.series.map((s) => ({ label: s.label, values: s.points })),
    // From 0 to a little over the strongest curve: weak memories' curves stay readable.
    { xLabel: "days from now", yLabel: "strength", yRange: (u, min, max) => [0, Math.min(1, Math.max(data.dormant_below * 2, max * 1.1))], marks: [{ value: data.dormant_below, label: `dormant below ${data.dormant_below}` }] },
  );
}

function row(item, selected, toggle) {
  const tr = el(
    "tr",
    { class: selected ? "selected" : "", dataset: { id: item.id }, onclick: () => toggle(item.id, tr) },
    el("td", {}, strength(item.strength)),
    el("td", { class: "nowrap" }, item.layer),
    el("td", { class: "content" }, item.content, item.pinned ? el("span", { class: "tag" }, "pinned") : null, item.superseded ? el("span", { class: "tag" }, "superseded") : null),
    el("td", { class: "num retrievals" }, number(item.retrieval_count)),
    el("td", { class: "num marks" }, el("span", { class: "good" }, `+${item.good}`), " ", el("span", { class: "bad" }, `−${item.bad}`)),
    el("td", {}, item.protected ? `never (${item.protected})` : days(item.days_to_dormant)),
    el("td", {}, when(item.last_retrieved)),
  );
  return tr;
}

export async function memoryMap(params) {
  const page = Number(params.get("page") || 0);
  const data = await api("map", { sort: params.get("sort"), layer: params.get("layer"), page });
  if (!data.total) return empty("This store holds no memories yet.");
  // One more edge than bins, the last bin's count repeated, so the final step reaches 1.
  const edges = Array.from({ length: data.bins + 1 }, (_, i) => i / data.bins);
  const hist = histogram(
    `Strength of every memory, by layer (${number(data.total)} memories)`,
    edges,
    data.layers.map((f) => ({ label: f.layer, values: [...f.histogram, f.histogram[f.histogram.length - 1]] })),
    {
      xLabel: "strength",
      yLabel: "memories",
      marks: [
        { value: data.dormant_below, label: "dormant" },
        { value: data.at_risk_below, label: "at risk", colour: "#d9822b" },
      ],
    },
  );
  const chosen = new Set(data.curves.series.map((s) => s.id));
  const holder = el("div", { class: "curves" }, curvesChart(data.curves, data));
  async function toggle(id, tr) {
    if (chosen.has(id)) chosen.delete(id);
    else chosen.add(id);
    tr.classList.toggle("selected", chosen.has(id));
    const curves = chosen.size ? await api("curves", { ids: [...chosen].join(",") }) : { series: [], days: [] };
    holder.replaceChildren(curvesChart(curves, data));
    holder.querySelector(".chart")?.dispatchEvent(new Event("attached"));
  }
  const sort = el(
    "select",
    { "aria-label": "Order", onchange: (event) => { location.hash = link(params, { sort: event.target.value }); } },
    Object.entries(SORTS).map(([value, label]) => el("option", { value, selected: value === data.sort }, label)),
  );
  const layer = data.layer ? ` in ${data.layer}` : "";
  return el(
    "div",
    {},
    el("div", { class: "panels layers" }, data.layers.map((f) => layerCard(f, data, params))),
    el("div", { class: "charts" }, hist, holder),
    el("div", { class: "toolbar" }, el("label", {}, "Order ", sort), el("span", { class: "muted" }, `Memories${layer}; click a row to add or remove its curve.`)),
    table(
      ["strength", "layer", "memory", "retrieved", "outcomes", "dormant", "last retrieved"],
      data.rows.map((item) => row(item, chosen.has(item.id), toggle)),
    ),
    pager(data.page, data.pages, params, "map"),
  );
}
