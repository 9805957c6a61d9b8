// Charts drawn with uPlot (vendored under static/vendor, loaded before this module). Each chart is a
// box that draws itself once it is on the page and follows its box's width; its figure element keeps
// the uPlot instance as `plot`, for scripts that read what was drawn.
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
    chart.plot = plot;
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

/** A vertical axis as wide as its widest tick label needs: a fixed width let long numbers (12,000 tokens)
    run into the axis title beside them. */
function valueAxis(label) {
  return {
    label,
    size(u, values, axisIdx, cycleNum) {
      const axis = u.axes[axisIdx];
      if (cycleNum > 1) return axis._size; // uPlot asks again after a resize of the plot: settle
      u.ctx.font = axis.font[0];
      const widest = Math.max(0, ...(values || []).map((v) => u.ctx.measureText(String(v)).width));
      return Math.ceil(axis.ticks.size + axis.gap + widest / devicePixelRatio + 4);
    },
  };
}

const two = (n) => String(n).padStart(2, "0");

/** A day as the rest of the page writes it: YYYY-MM-DD, this machine's local date. */
export function isoDay(t) {
  return `${t.getFullYear()}-${two(t.getMonth() + 1)}-${two(t.getDate())}`;
}

/** A time axis's tick labels in ISO dates (uPlot's own are US dates, 11/5); below a day apart, the
    time of day, with the date under the first tick of each day. */
function timeValues(u, splits, axisIdx, space, incr) {
  let shown = null;
  return splits.map((s) => {
    const t = new Date(s * 1000);
    const day = isoDay(t);
    if (incr >= 86400) return day;
    const seconds = incr < 60 ? `:${two(t.getSeconds())}` : "";
    const time = `${two(t.getHours())}:${two(t.getMinutes())}${seconds}`;
    const label = day === shown ? time : `${time}\n${day}`;
    shown = day;
    return label;
  });
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
      axes: [{ label: xLabel }, valueAxis(yLabel)],
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
      axes: [{ label: xLabel }, valueAxis(yLabel)],
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
      // An ISO date is wider than uPlot's 11/5: ticks at least 90 px apart keep them clear of each other.
      axes: [{ values: timeValues, space: 90 }, valueAxis(yLabel)],
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
    range for a single point spans a thousand days), and at least an hour, so two sleeps a few seconds
    apart are not drawn on an axis of tenths of a second. */
function padded(times) {
  const min = Math.min(...times);
  const max = Math.max(...times);
  const pad = max > min ? Math.max((max - min) * 0.05, 3600) : 86400;
  return [min - pad, max + pad];
}

/** Vertical lines at x values (the dormant threshold, the at-risk line), labelled at the top, each
    label inside the plotting area so it never covers the axes' tick labels around it. */
function drawMarks(u, marks) {
  const { ctx } = u;
  const { left, top, width, height } = u.bbox;
  const gap = 4 * devicePixelRatio;
  ctx.save();
  for (const mark of marks) {
    const x = Math.round(u.valToPos(mark.value, "x", true));
    ctx.strokeStyle = mark.colour || "#c0392b";
    ctx.setLineDash([6, 4]);
    ctx.lineWidth = 1;
    ctx.beginPath();
    ctx.moveTo(x, top);
    ctx.lineTo(x, top + height);
    ctx.stroke();
    ctx.fillStyle = mark.colour || "#c0392b";
    ctx.font = `${12 * devicePixelRatio}px sans-serif`;
    // uPlot leaves the axes' alignment set (right-aligned, for the y tick labels): set our own.
    ctx.textAlign = "left";
    ctx.textBaseline = "alphabetic";
    // Right of the line, or left of it where the plot ends first; never past either edge.
    const wide = ctx.measureText(mark.label).width;
    const right = x + gap + wide <= left + width ? x + gap : x - gap - wide;
    const at = Math.min(Math.max(right, left + gap), left + width - wide);
    // Each label a line lower than the one before, so two close marks stay readable.
    ctx.fillText(mark.label, at, top + (14 + 14 * marks.indexOf(mark)) * devicePixelRatio);
  }
  ctx.restore();
}

/** Seconds since the epoch of an ISO instant or a YYYY-MM-DD day (local midnight). */
export function seconds(text) {
  return (text.length === 10 ? new Date(`${text}T00:00:00`) : new Date(text)).getTime() / 1000;
}
