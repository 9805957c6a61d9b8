// Open conflicts: both memories side by side, each with the `resolve` command that keeps it.
import { el, api, number, fixed, when, command, empty } from "../dom.js";

function side(item, label) {
  return el(
    "div",
    { class: "side", dataset: { id: item.id } },
    el("h4", {}, label, " ", el("code", {}, item.id)),
    el("p", { class: "content" }, item.content),
    el("p", { class: "meta" }, `${item.layer} · strength ${fixed(item.strength)} · retrieved ${number(item.retrieval_count)} · +${item.good} −${item.bad} · ${when(item.created)}`),
    command(item.keep),
  );
}

function card(conflict) {
  return el(
    "article",
    { class: "conflict", dataset: { conflict: conflict.id } },
    el("h3", {}, `#${conflict.id} · ${conflict.reason}`, el("span", { class: "muted" }, ` · score ${fixed(conflict.score)} · found ${when(conflict.detected_at)}`)),
    el("div", { class: "sides" }, conflict.sides.map((s, i) => side(s, i === 0 ? "A" : "B"))),
    el("p", { class: "muted" }, "Keep one (the other is weakened; add --forget to delete it or --reject-loser to refuse its text for good), or see both in a terminal:"),
    command(conflict.show),
  );
}

export async function conflicts() {
  const data = await api("conflicts");
  if (!data.count) return empty("No open conflicts. Sleep looks for pairs of memories that say opposite things.");
  const more = data.count > data.rows.length ? ` (the first ${data.rows.length} shown)` : "";
  return el("div", {}, el("p", { class: "muted" }, `${number(data.count)} open${more}.`), data.rows.map(card));
}
