// The overview: what `hippoctl status` prints, one panel per store (the project's, then the global).
import { el, api, figure, number, fixed, when } from "../dom.js";

function panel(store, data) {
  const layers = Object.entries(store.layers).sort(([a], [b]) => a.localeCompare(b));
  return el(
    "article",
    { class: "panel", dataset: { storeKind: store.kind } },
    el("h3", {}, `${store.kind} store`),
    el("p", { class: "path" }, store.path, el("span", { class: "muted" }, ` · tenant ${store.tenant} · schema ${store.schema}`)),
    el(
      "div",
      { class: "figures" },
      figure("memories", number(store.total), "total"),
      ...layers.map(([layer, count]) => figure(layer, number(count), `layer-${layer}`)),
      figure("pinned", number(store.pinned), "pinned"),
      figure("superseded", number(store.superseded), "superseded"),
      figure("dormant", number(store.dormant), "dormant"),
      figure("open conflicts", number(store.open_conflicts), "open_conflicts"),
      figure(`at risk (< ${data.at_risk_below})`, number(store.at_risk), "at_risk"),
      figure("mean strength", fixed(store.mean_strength), "mean_strength"),
    ),
    el(
      "p",
      { class: "muted" },
      `Sleeps: ${number(store.sleep_count)}, last ${when(store.last_sleep)}. Remembered ${number(store.total_remembered)}, `
        + `recalled ${number(store.total_recalled)}, forgotten ${number(store.total_forgotten)}.`,
    ),
  );
}

export async function overview() {
  const data = await api("overview");
  return el("div", { class: "panels" }, data.status.stores.map((store) => panel(store, data)));
}
