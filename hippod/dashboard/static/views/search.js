// Search: recall through the daemon's recall handler, which here strengthens nothing, so looking
// at a memory does not change it.
import { el, api, fixed, number, plural, when, empty } from "../dom.js";

function result(item) {
  return el(
    "li",
    { class: "result", dataset: { id: item.id } },
    el("p", { class: "content" }, item.content),
    el(
      "p",
      { class: "meta" },
      `${item.layer} · ${item.source} · strength ${fixed(item.strength)} · score ${fixed(item.score, 3)} · `,
      el("span", { class: "retrievals" }, `retrieved ${plural(item.retrieval_count, "time")}`),
      ` · last ${when(item.last_retrieved)}`,
      item.pinned ? " · pinned" : "",
      el("code", { class: "id" }, item.id),
    ),
  );
}

export async function search(params) {
  const query = params.get("q") || "";
  if (!query) return empty("Type words to look for in the box above.");
  const data = await api("search", { q: query });
  const head = el("p", { class: "muted" }, `${data.results.length} of ${number(data.candidates)} candidates for “${data.query}”. Searching here strengthens nothing.`);
  if (!data.results.length) return el("div", {}, head, empty("No memory matches."));
  return el("div", {}, head, el("ol", { class: "results" }, data.results.map(result)));
}
