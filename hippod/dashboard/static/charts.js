// Charts drawn with uPlot (vendored under static/vendor, loaded before this module). Each chart is a
// box that draws itself once it is on the page and follows its box's width.
import { el } from "./dom.js";

export const COLOURS = ["#2f6fdf", "#d9822b", "#2e9e5b", "#9b59b6", "#c0392b", "#16a2b8", "#7f8c8d", "#b5a22c"];
const HEIGHT = 240;

function box(title, build) {
  const area = el("div", { class: "plot" });
  const chart = el("figure", { class: "chart" }, el("figcaption", {}, title), area);
  let plot = null;
  chart.addEventListener("attached", () => {
    if (plot || typeof uPlot === "undefined") return;
    plot = build(Math.max(240, area.clientWidth), area);
    new ResizeObserver(() => {
      const width = Math.max(240, area.clientWidth);
      if (Math.abs(width - plot.width) > 1) plot.setSize({ width, height: HEIGHT });
    }).observe(area);
  });
  return chart;
}

function series(names, options = {}) {
  return names.map((name, i) => ({
    label: name,
    stroke: COLOURS[i % COLOURS.length],
    fill: options.fill ? `${COLOURS[i % COLOURS.length]}33` : undefined,
    width: 2,
    paths: options.paths ? options.paths() : undefined,
    points: { show: options.points ?? false },
    spanGaps: false,
  }));
}

/** Lines over a numeric x axis; `marks` are horizontal lines (value, label) drawn across. */
export function lineChart(title, x, lines, { xLabel = "", yLabel = "", yRange = null, marks = [] } = {}) {
  return box(title, (width, area) => {
    const data = [x, ...lines.map((line) => line.values), ...marks.map((mark) => x.map(() => mark.value))];
    const all = [...series(lines.map((line) => line.label)), ...marks.map((mark) => ({
      label: mark.label, stroke: "#c0392b", width: 1, dash: [6, 4], points: { show: false },
    }))];
    return new uPlot({
      width,
      height: HEIGHT,
      scales: { x: { time: false }, y: yRange ? { range: yRange } : {} },
      axes: [{ label: xLabel }, { label: yLabel, size: 60 }],
      legend: { live: false },
      series: [{ label: xLabel }, ...all],
    }, data, area);
  });
}

/** Step outlines over bins (a histogram per series), all on one axis. */
export function histogram(title, edges, rows, { xLabel = "", yLabel = "", marks = [] } = {}) {
  return box(title, (width, area) => {
    const data = [edges, ...rows.map((row) => row.values)];
    return new uPlot({
      width,
      height: HEIGHT,
      scales: { x: { time: false, range: [0, 1] } },
      axes: [{ label: xLabel }, { label: yLabel, size: 60 }],
      legend: { live: false },
      series: [{ label: xLabel }, ...series(rows.map((row) => row.label), { fill: true, paths: () => uPlot.paths.stepped({ align: 1 }) })],
      hooks: { draw: [(u) => drawMarks(u, marks)] },
    }, data, area);
  });
}

/** Series over time (x in seconds since the epoch): bars for one series, lines with points for more. */
export function timeChart(title, times, rows, { yLabel = "" } = {}) {
  return box(title, (width, area) => {
    const bars = rows.length === 1;
    return new uPlot({
      width,
      height: HEIGHT,
      scales: { x: { time: true, range: () => padded(times) }, y: { range: (u, min, max) => [0, Math.max(1, max * 1.1)] } },
      axes: [{}, { label: yLabel, size: 60 }],
      legend: { live: false },
      series: [{}, ...series(rows.map((row) => row.label), {
        fill: bars,
        points: !bars,
        paths: bars ? () => uPlot.paths.bars({ size: [0.7, 40] }) : undefined,
      })],
    }, [times, ...rows.map((row) => row.values)], area);
  });
}

/** A time axis with room either side of its points: a day when there is only one (uPlot's own
    range for a single point spans a thousand days). */
function padded(times) {
  const min = Math.min(...times);
  const max = Math.max(...times);
  const pad = max > min ? (max - min) * 0.05 : 86400;
  return [min - pad, max + pad];
}

/** Vertical lines at x values (the dormant threshold, the at-risk line), labelled at the top. */
function drawMarks(u, marks) {
  const { ctx } = u;
  ctx.save();
  for (const mark of marks) {
    const x = Math.round(u.valToPos(mark.value, "x", true));
    ctx.strokeStyle = mark.colour || "#c0392b";
    ctx.setLineDash([6, 4]);
    ctx.lineWidth = 1;
    ctx.beginPath();
    ctx.moveTo(x, u.bbox.top);
    ctx.lineTo(x, u.bbox.top + u.bbox.height);
    ctx.stroke();
    ctx.fillStyle = mark.colour || "#c0392b";
    ctx.font = `${12 * devicePixelRatio}px sans-serif`;
    // Each label a line lower than the one before, so two close marks stay readable.
    ctx.fillText(mark.label, x + 4, u.bbox.top + (14 + 14 * marks.indexOf(mark)) * devicePixelRatio);
  }
  ctx.restore();
}

/** Seconds since the epoch of an ISO instant or a YYYY-MM-DD day (local midnight). */
export function seconds(text) {
  return (text.length === 10 ? new Date(`${text}T00:00:00`) : new Date(text)).getTime() / 1000;
}
