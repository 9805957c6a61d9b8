// The work queue's card board: one column per state, newest-updated first in each.
import { el, api, number, when } from "../dom.js";

function card(item) {
  return el(
    "li",
    { class: "card", dataset: { card: item.id } },
    el("p", { class: "title" }, item.title),
    el("p", { class: "meta" }, `#${item.id}`, item.repo ? ` · ${item.repo}` : "", ` · ${when(item.updated_at)}`),
  );
}

export async function cards() {
  const data = await api("cards");
  const columns = data.statuses.map((status) => {
    const shown = data.columns[status] || [];
    const count = data.counts[status] || 0;
    return el(
      "section",
      { class: "column", dataset: { status } },
      el("h3", {}, status, " ", el("span", { class: "count" }, number(count))),
      el("ul", {}, shown.map(card)),
      count > shown.length ? el("p", { class: "muted" }, `… and ${number(count - shown.length)} more`) : null,
    );
  });
  return el("div", {}, el("p", { class: "muted" }, "Cards move left to right: hippoctl card claim, block, review, complete."), el("div", { class: "board" }, columns));
}
