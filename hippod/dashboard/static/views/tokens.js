// The token ledger: memory text sent to agents, re-read from their context, and saved by skipping
// blocks they already had, day by day and per surface.
import { el, api, number, table } from "../dom.js";
import { timeChart, seconds } from "../charts.js";

const SPANS = [7, 30, 90];

export async function tokens(params) {
  const span = Number(params.get("days") || 30);
  const data = await api("tokens", { days: span });
  const d = data.per_day;
  const chart = timeChart(
    `Tokens per day, last ${data.days} days (estimates: characters / 4)`,
    d.day.map(seconds),
    [
      { label: "sent", values: d.sent },
      { label: "re-read", values: d.reread },
      { label: "saved", values: d.saved },
    ],
    { yLabel: "tokens" },
  );
  const spans = el(
    "div",
    { class: "toolbar" },
    SPANS.map((n) => el("a", { class: `button${n === data.days ? " active" : ""}`, href: `#tokens?days=${n}` }, `${n} days`)),
  );
  const cell = (value) => el("td", { class: "num" }, value === null ? "–" : number(value));
  const rows = Object.entries(data.totals.surfaces).map(([name, f]) =>
    el("tr", { dataset: { surface: name } }, el("td", {}, name), cell(f.sent), cell(f.sends), cell(f.reread), cell(f.skipped), cell(f.saved)),
  );
  const t = data.totals.total;
  rows.push(el("tr", { class: "total", dataset: { surface: "total" } }, el("th", {}, "total"), cell(t.sent), cell(t.sends), cell(t.reread), cell(t.skipped), cell(t.saved)));
  return el("div", {}, spans, el("div", { class: "charts" }, chart), table(["surface", "sent", "sends", "re-read", "skipped", "saved"], rows));
}
