// Small helpers every view uses: building elements (text is always set as text), asking the daemon
// for a view's JSON, and the shared pieces of a page (numbers, dates, pagers, tables, commands).

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === false || value === null || value === undefined) continue;
    if (key === "class") node.className = value;
    else if (key === "dataset") Object.assign(node.dataset, value);
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (value === true) node.setAttribute(key, "");
    else node.setAttribute(key, String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/** The page's own query (?store=...), which every view's request carries. */
export function viewParams() {
  return new URLSearchParams(location.search);
}

// Where the daemon cannot see which user a connection comes from, the page is opened with the local
// token in its fragment (#token=...): kept for this tab only, taken out of the address at once, and
// sent back with every request for data.
const TOKEN = "hippo-local-token";
const given = location.hash.match(/^#token=([A-Za-z0-9_-]+)$/);
if (given) {
  sessionStorage.setItem(TOKEN, given[1]);
  history.replaceState(null, "", location.pathname + location.search);
}

export async function api(name, params = {}) {
  const query = new URLSearchParams();
  const store = viewParams().get("store");
  if (store) query.set("store", store);
  for (const [key, value] of Object.entries(params)) {
    if (value !== null && value !== undefined && value !== "") query.set(key, value);
  }
  const headers = { Accept: "application/json" };
  const token = sessionStorage.getItem(TOKEN);
  if (token) headers.Authorization = `Bearer ${token}`;
  const answer = await fetch(`/api/${name}?${query}`, { headers });
  const data = await answer.json();
  if (!answer.ok) throw new Error(data.error || `HTTP ${answer.status}`);
  return data;
}

export const number = (value) => (value === null || value === undefined ? "–" : Number(value).toLocaleString("en"));
export const fixed = (value, digits = 2) => (value === null || value === undefined ? "–" : Number(value).toFixed(digits));

/** "1 memory", "3 memories": a count with its noun. */
export function plural(count, one, many = `${one}s`) {
  return `${number(count)} ${count === 1 ? one : many}`;
}

/** A stored instant as this machine's local date and time, to the minute (the charts' time too). */
export function when(iso) {
  if (!iso) return "never";
  const t = new Date(iso);
  if (Number.isNaN(t.getTime())) return iso;
  const two = (n) => String(n).padStart(2, "0");
  return `${t.getFullYear()}-${two(t.getMonth() + 1)}-${two(t.getDate())} ${two(t.getHours())}:${two(t.getMinutes())}`;
}

export function days(value) {
  if (value === null || value === undefined) return "never";
  if (value < 1) return "next sleep";
  if (value < 365) return `in ${Math.round(value)} d`;
  return `in ${(value / 365).toFixed(1)} y`;
}

export function strength(value) {
  return el("span", { class: "strength" }, el("meter", { min: 0, max: 1, low: 0.2, optimum: 1, value }), fixed(value));
}

/** A figure with its label, e.g. on the overview. */
export function figure(label, value, field) {
  return el("div", { class: "figure" }, el("span", { class: "value", dataset: field ? { field } : undefined }, value), el("span", { class: "label" }, label));
}

/** A command to copy into a terminal. */
export function command(text) {
  const code = el("code", {}, text);
  const copy = el("button", {
    type: "button",
    class: "copy",
    title: "Copy",
    onclick: () => navigator.clipboard?.writeText(text).then(() => { copy.textContent = "Copied"; }),
  }, "Copy");
  return el("div", { class: "command" }, code, copy);
}

/** "Page n of m" with links that change one parameter of the view's #fragment. */
export function pager(page, pages, params, name) {
  const link = (to, label) => {
    const next = new URLSearchParams(params);
    next.set("page", to);
    return el("a", { href: `#${name}?${next}`, class: "button" }, label);
  };
  return el(
    "div",
    { class: "pager" },
    page > 0 ? link(page - 1, "Previous") : null,
    el("span", {}, `Page ${number(page + 1)} of ${number(pages)}`),
    page + 1 < pages ? link(page + 1, "Next") : null,
  );
}

/** A table in a box of its own width, so a narrow screen scrolls the table, not the page. */
export function table(headings, rows) {
  return el(
    "div",
    { class: "scroll" },
    el("table", {}, el("thead", {}, el("tr", {}, headings.map((h) => el("th", {}, h)))), el("tbody", {}, rows)),
  );
}

export function empty(text) {
  return el("p", { class: "empty" }, text);
}
