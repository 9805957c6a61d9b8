// The entity graph: the entities the memories name (file paths, code names, entity: tags, artifacts,
// decisions, policies) and their relations, laid out the same way on every draw; a node's link shows
// it with its neighbours. What `recall --hops` walks.
import { el, api, number, table, empty } from "../dom.js";

const SVG = "http://www.w3.org/2000/svg";
const WIDTH = 1000;
const HEIGHT = 640;
const COLOURS = { entity: "#f59e0b", artifact: "#ec4899", file: "#3b82f6", symbol: "#10b981", decision: "#6366f1", policy: "#ef4444" };

function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
  for (const child of children) node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  return node;
}

// Force layout with no randomness: nodes start on a circle, then repel each other and are pulled
// along their relations for a fixed number of steps, so the same graph always draws the same.
function layout(nodes, edges) {
  const n = nodes.length;
  const at = new Map();
  const cx = WIDTH / 2, cy = HEIGHT / 2;
  nodes.forEach((node, i) => {
    const angle = (2 * Math.PI * i) / Math.max(1, n);
    at.set(node.id, { x: cx + 0.4 * HEIGHT * Math.cos(angle), y: cy + 0.4 * HEIGHT * Math.sin(angle) });
  });
  if (n < 2) return at;
  const k = Math.sqrt((WIDTH * HEIGHT) / n);
  const steps = 200;
  for (let step = 0; step < steps; step++) {
    const move = new Map(nodes.map((node) => [node.id, { x: 0, y: 0 }]));
    for (let i = 0; i < n; i++) {
      const a = at.get(nodes[i].id);
      for (let j = i + 1; j < n; j++) {
        const b = at.get(nodes[j].id);
        const dx = a.x - b.x, dy = a.y - b.y;
        const d = Math.hypot(dx, dy) || 0.01;
        const push = (k * k) / d;
        const ma = move.get(nodes[i].id), mb = move.get(nodes[j].id);
        ma.x += (dx / d) * push; ma.y += (dy / d) * push;
        mb.x -= (dx / d) * push; mb.y -= (dy / d) * push;
      }
    }
    for (const e of edges) {
      const a = at.get(e.source), b = at.get(e.target);
      if (!a || !b) continue;
      const dx = a.x - b.x, dy = a.y - b.y;
      const d = Math.hypot(dx, dy) || 0.01;
      const pull = (d * d) / k;
      const ma = move.get(e.source), mb = move.get(e.target);
      ma.x -= (dx / d) * pull; ma.y -= (dy / d) * pull;
      mb.x += (dx / d) * pull; mb.y += (dy / d) * pull;
    }
    const limit = Math.max(1, (WIDTH / 10) * (1 - step / steps));
    for (const node of nodes) {
      const p = at.get(node.id), m = move.get(node.id);
      const d = Math.hypot(m.x, m.y) || 0.01;
      p.x = Math.max(20, Math.min(WIDTH - 20, p.x + (m.x / d) * Math.min(d, limit)));
      p.y = Math.max(20, Math.min(HEIGHT - 20, p.y + (m.y / d) * Math.min(d, limit)));
    }
  }
  return at;
}

function focusLink(name) {
  return `#graph?${new URLSearchParams({ entity: name })}`;
}

function drawing(data) {
  const at = layout(data.nodes, data.edges);
  const lines = data.edges
    .filter((e) => at.has(e.source) && at.has(e.target))
    .map((e) => {
      const a = at.get(e.source), b = at.get(e.target);
      return svg("line", { class: "edge", x1: a.x.toFixed(1), y1: a.y.toFixed(1), x2: b.x.toFixed(1), y2: b.y.toFixed(1), "data-rel": e.rel }, svg("title", {}, e.rel));
    });
  const dots = data.nodes.map((node) => {
    const p = at.get(node.id);
    const label = node.name.length > 24 ? `${node.name.slice(0, 23)}…` : node.name;
    const link = svg(
      "a",
      { href: focusLink(node.name), class: "node", "data-id": node.id, "data-type": node.type, transform: `translate(${p.x.toFixed(1)},${p.y.toFixed(1)})` },
      svg("title", {}, `${node.type}: ${node.name} (${node.memories} memories)`),
      svg("circle", { r: Math.min(14, 5 + 2 * Math.log2(1 + node.memories)), fill: COLOURS[node.type] || "#64748b" }),
      svg("text", { x: 10, y: 4 }, label),
    );
    return link;
  });
  return svg("svg", { class: "graph", viewBox: `0 0 ${WIDTH} ${HEIGHT}`, role: "img", "aria-label": "entity graph" }, svg("g", {}, ...lines), svg("g", {}, ...dots));
}

function legend(nodes) {
  const types = [...new Set(nodes.map((n) => n.type))].sort();
  return el("p", { class: "legend" }, types.map((t) => el("span", { class: "kind" }, svg("svg", { class: "dot", viewBox: "0 0 10 10" }, svg("circle", { cx: 5, cy: 5, r: 5, fill: COLOURS[t] || "#64748b" })), ` ${t} `)));
}

export async function graph(params) {
  const entity = params.get("entity");
  const data = await api("graph", { entity });
  if (!data.nodes.length) {
    return empty(entity ? `No entity named “${entity}”.` : "No entities yet. Memories that name files, code (`retry_budget`, PaymentGateway), entity: tags, artifacts, decisions or policies make them.");
  }
  const cut = data.truncated ? ` (the first ${number(data.nodes.length)} shown)` : "";
  const heading = entity
    ? el("p", { class: "muted" }, `“${entity}” and its neighbours: ${number(data.nodes.length)} entities, ${number(data.edges.length)} relations. `, el("a", { href: "#graph" }, "Whole graph"))
    : el("p", { class: "muted" }, `${number(data.nodes.length)} entities, ${number(data.edges.length)} relations${cut}. recall --hops walks from a result to the memories that name the same ones.`);
  const names = new Map(data.nodes.map((n) => [n.id, n.name]));
  const rows = data.nodes.map((n) =>
    el("tr", { dataset: { id: n.id } }, el("td", {}, el("a", { href: focusLink(n.name) }, n.name)), el("td", {}, n.type), el("td", { class: "num" }, number(n.memories)), el("td", {}, data.edges.filter((e) => e.source === n.id).map((e) => names.get(e.target)).slice(0, 5).join(", "))),
  );
  return el("div", {}, heading, legend(data.nodes), el("div", { class: "graph-box" }, drawing(data)), table(["entity", "type", "memories", "relates to"], rows));
}
