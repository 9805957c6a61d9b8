// The last sleeps: their counts over time, and for each what it merged (with the sources) and what
// it retired (went dormant, removed as duplicate or junk).
import { el, api, number, plural, when, empty } from "../dom.js";
import { timeChart, seconds } from "../charts.js";

function named(item) {
  return el(
    "li",
    { dataset: { id: item.id } },
    item.content === null ? el("span", { class: "muted" }, "(text no longer stored)") : item.content,
    " ",
    el("code", { class: "id" }, item.id),
    item.detail ? el("span", { class: "muted" }, ` · ${item.detail}`) : null,
  );
}

/** What a sleep did, in words, leaving out what it did not do (a sleep that only shared says so,
    not `merged 0 into 0`). */
function summary(c) {
  const parts = [
    c.merged ? `merged ${number(c.merged)} into ${number(c.semantic_created)}` : null,
    c.dormant_moved ? `${number(c.dormant_moved)} went dormant` : null,
    c.deduped ? plural(c.deduped, "duplicate") : null,
    c.junk_removed ? `${number(c.junk_removed)} junk` : null,
    c.new_conflicts ? plural(c.new_conflicts, "new conflict") : null,
    c.shared ? `shared ${number(c.shared)}` : null,
  ].filter(Boolean);
  return [`${number(c.active)} active`, ...(parts.length ? parts : ["nothing changed"])].join(" · ");
}

function run(item, open) {
  const c = item.counts;
  const merges = item.merges.map((merge) =>
    el(
      "li",
      { class: "merge", dataset: { id: merge.id } },
      el("p", {}, merge.content, " ", el("code", { class: "id" }, merge.id)),
      el("p", { class: "muted" }, "from:"),
      el("ul", {}, merge.sources.map(named)),
    ),
  );
  const retired = item.retired.map((group) =>
    el(
      "div",
      { class: "retired", dataset: { op: group.op } },
      el("h5", {}, `${number(group.count)} ${group.label}`),
      el("ul", {}, group.items.map(named)),
      group.count > group.items.length ? el("p", { class: "muted" }, `… and ${number(group.count - group.items.length)} more`) : null,
    ),
  );
  return el(
    "details",
    { class: "run", open },
    el(
      "summary",
      {},
      el("strong", {}, when(item.ts)),
      ` · ${summary(c)}`,
    ),
    item.merges.length ? el("h4", {}, `Merged (${number(item.merges_total)})`) : null,
    item.merges.length ? el("ul", { class: "merges" }, merges) : null,
    item.merges_total > item.merges.length ? el("p", { class: "muted" }, `… and ${number(item.merges_total - item.merges.length)} more`) : null,
    retired.length ? el("h4", {}, "Retired") : null,
    ...retired,
    !item.merges.length && !retired.length ? el("p", { class: "muted" }, "Nothing merged or retired for this tenant.") : null,
  );
}

export async function sleeps() {
  const data = await api("sleeps");
  if (!data.runs.length) return empty("No sleep has run on this store yet (hippoctl sleep).");
  const ordered = [...data.runs].reverse();
  const chart = timeChart(
    "What each sleep did",
    ordered.map((r) => seconds(r.ts)),
    [
      // Apart from one another: `removed` counts the dormant, duplicates and junk together.
      { label: "merged", values: ordered.map((r) => r.counts.merged) },
      { label: "went dormant", values: ordered.map((r) => r.counts.dormant_moved) },
      { label: "duplicates", values: ordered.map((r) => r.counts.deduped) },
      { label: "junk", values: ordered.map((r) => r.counts.junk_removed) },
      { label: "shared", values: ordered.map((r) => r.counts.shared) },
    ],
    { yLabel: "memories" },
  );
  return el("div", {}, el("div", { class: "charts" }, chart), data.runs.map((r, i) => run(r, i === 0)));
}
