// Wasp-Py runs: the list of runs under the served directory and a live page for each.
// Everything is drawn here (tables, SVG charts, a small board); the data comes from
// /api/runs, /api/run, /api/run/games and /api/run/game, polled while a page is open.
"use strict";

const POLL_MS = 2000;
const SVG = "http://www.w3.org/2000/svg";
const GLYPHS = { k: "\u265A", q: "\u265B", r: "\u265C", b: "\u265D", n: "\u265E", p: "\u265F" };
const COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
                "#7f7f7f", "#bcbd22", "#17becf"];

const view = {
  route: null,       // {page: "list"} or {page: "run", id}
  version: null,     // the shown page's data version: redraw only when it changes
  timer: null,
  filters: { engine: "", result: "", termination: "" },
  gamesVersion: null,
  replay: null,      // {game, ply} of the game on the board
};

const $ = (id) => document.getElementById(id);

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(c));
  return node;
}

function svg(tag, attrs = {}, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  return node;
}

async function getJSON(url) {
  const res = await fetch(url, { cache: "no-store" });
  let data;
  try {
    data = await res.json();
  } catch (e) {
    throw new Error(`${url}: ${res.status} ${res.statusText}`);
  }
  if (!res.ok) throw new Error(data.error || `${url}: ${res.status}`);
  return data;
}

function showError(message) {
  const box = $("error");
  box.textContent = message || "";
  box.classList.toggle("hidden", !message);
}

function fmt(x, digits = 1) {
  if (x === null || x === undefined || Number.isNaN(x)) return "-";
  return Number(x).toFixed(digits);
}

function when(t) {
  if (!t) return "-";
  const d = new Date(t * 1000);
  return d.toLocaleString();
}

// -- charts --------------------------------------------------------------------------------

function niceTicks(lo, hi, count = 5) {
  if (!(hi > lo)) { hi = lo + 1; lo -= 1; }
  const raw = (hi - lo) / count;
  const mag = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw);
  const ticks = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + 1e-9; v += step) ticks.push(+v.toFixed(10));
  return ticks;
}

// series: [{name, points: [[x, y], ...], color?, step?}], hlines: [{y, label, color}]
function lineChart({ title, series, hlines = [], width = 520, height = 230, xLabel = "",
                     yLabel = "", yMin, yMax }) {
  const m = { l: 52, r: 12, t: 22, b: 34 };
  const root = svg("svg", { width, height, class: "chart", role: "img", "aria-label": title });
  root.append(svg("text", { x: m.l, y: 15, class: "title" }, title));
  const pts = series.flatMap((s) => s.points).filter((p) => p[1] !== null);
  const ys = pts.map((p) => p[1]).concat(hlines.map((h) => h.y));
  const xs = pts.map((p) => p[0]);
  if (!pts.length) {
    root.append(svg("text", { x: width / 2, y: height / 2, "text-anchor": "middle" }, "no data yet"));
    return root;
  }
  let x0 = Math.min(...xs), x1 = Math.max(...xs);
  if (x1 === x0) x1 = x0 + 1;
  let y0 = yMin !== undefined ? yMin : Math.min(...ys);
  let y1 = yMax !== undefined ? yMax : Math.max(...ys);
  if (y1 === y0) { y0 -= 1; y1 += 1; }
  const pad = (y1 - y0) * 0.05;
  y0 -= pad; y1 += pad;
  const X = (x) => m.l + (x - x0) / (x1 - x0) * (width - m.l - m.r);
  const Y = (y) => height - m.b - (y - y0) / (y1 - y0) * (height - m.t - m.b);
  for (const t of niceTicks(y0, y1)) {
    root.append(svg("line", { x1: m.l, x2: width - m.r, y1: Y(t), y2: Y(t), class: "grid" }));
    root.append(svg("text", { x: m.l - 4, y: Y(t) + 4, "text-anchor": "end" }, String(t)));
  }
  for (const t of niceTicks(x0, x1, 6)) {
    root.append(svg("text", { x: X(t), y: height - m.b + 14, "text-anchor": "middle" }, String(t)));
  }
  root.append(svg("line", { x1: m.l, x2: m.l, y1: m.t, y2: height - m.b, class: "axis" }));
  root.append(svg("line", { x1: m.l, x2: width - m.r, y1: height - m.b, y2: height - m.b, class: "axis" }));
  if (xLabel) root.append(svg("text", { x: width - m.r, y: height - 4, "text-anchor": "end" }, xLabel));
  if (yLabel) root.append(svg("text", { x: 4, y: m.t - 8 }, yLabel));
  for (const h of hlines) {
    root.append(svg("line", { x1: m.l, x2: width - m.r, y1: Y(h.y), y2: Y(h.y),
                              stroke: h.color || "#999", "stroke-dasharray": "5 4" }));
    if (h.label) root.append(svg("text", { x: width - m.r - 2, y: Y(h.y) - 3, "text-anchor": "end" }, h.label));
  }
  series.forEach((s, i) => {
    const good = s.points.filter((p) => p[1] !== null);
    if (!good.length) return;
    let d = "";
    good.forEach((p, k) => {
      if (k === 0) d += `M${X(p[0])},${Y(p[1])}`;
      else if (s.step) d += `H${X(p[0])}V${Y(p[1])}`;
      else d += `L${X(p[0])},${Y(p[1])}`;
    });
    const color = s.color || COLORS[i % COLORS.length];
    root.append(svg("path", { d, fill: "none", stroke: color, "stroke-width": 1.6 }));
    if (good.length === 1) root.append(svg("circle", { cx: X(good[0][0]), cy: Y(good[0][1]), r: 3, fill: color }));
  });
  if (series.length > 1) {
    let lx = m.l + 8;
    series.forEach((s, i) => {
      const color = s.color || COLORS[i % COLORS.length];
      root.append(svg("rect", { x: lx, y: m.t + 2, width: 10, height: 3, fill: color }));
      const label = svg("text", { x: lx + 13, y: m.t + 7 }, s.name);
      root.append(label);
      lx += 20 + 6.5 * s.name.length;
    });
  }
  return root;
}

// bars: [{label, value, color?}]
function barChart({ title, bars, width = 520, height = 230, horizontal = false }) {
  const root = svg("svg", { width, height, class: "chart", role: "img", "aria-label": title });
  root.append(svg("text", { x: 10, y: 15, class: "title" }, title));
  if (!bars.length) {
    root.append(svg("text", { x: width / 2, y: height / 2, "text-anchor": "middle" }, "no data yet"));
    return root;
  }
  const vmax = Math.max(...bars.map((b) => Math.abs(b.value)), 1e-9);
  const neg = bars.some((b) => b.value < 0);
  if (horizontal) {
    const m = { l: 170, r: 50, t: 24, b: 6 };
    const h = (height - m.t - m.b) / bars.length;
    const zero = neg ? m.l + (width - m.l - m.r) / 2 : m.l;
    const scale = (neg ? (width - m.l - m.r) / 2 : width - m.l - m.r) / vmax;
    bars.forEach((b, i) => {
      const y = m.t + i * h;
      const w = Math.abs(b.value) * scale;
      root.append(svg("rect", { x: b.value < 0 ? zero - w : zero, y: y + 2, width: w, height: h - 4,
                                fill: b.color || (b.value < 0 ? "#d62728" : "#1f77b4") }));
      root.append(svg("text", { x: m.l - 4, y: y + h / 2 + 4, "text-anchor": "end" }, b.label));
      root.append(svg("text", { x: width - 4, y: y + h / 2 + 4, "text-anchor": "end" },
                          fmt(b.value, Math.abs(b.value) < 10 ? 1 : 0)));
    });
    return root;
  }
  const m = { l: 30, r: 10, t: 38, b: 30 };
  const w = (width - m.l - m.r) / bars.length;
  bars.forEach((b, i) => {
    const hgt = Math.abs(b.value) / vmax * (height - m.t - m.b);
    const x = m.l + i * w;
    root.append(svg("rect", { x: x + 4, y: height - m.b - hgt, width: w - 8, height: hgt,
                              fill: b.color || COLORS[i % COLORS.length] }));
    root.append(svg("text", { x: x + w / 2, y: height - m.b + 14, "text-anchor": "middle" }, b.label));
    root.append(svg("text", { x: x + w / 2, y: height - m.b - hgt - 3, "text-anchor": "middle" }, String(b.value)));
  });
  return root;
}

// A square's value on a blue-white-red scale in [-lim, lim]
function heatColor(v, lim) {
  const t = Math.max(-1, Math.min(1, v / (lim || 1)));
  const a = Math.round(255 * (1 - Math.abs(t)));
  return t >= 0 ? `rgb(255,${a},${a})` : `rgb(${a},${a},255)`;
}

function heatMap({ title, values, size = 24 }) {
  const width = 8 * size + 30, height = 8 * size + 28;
  const root = svg("svg", { width, height, class: "chart", role: "img", "aria-label": title });
  root.append(svg("text", { x: 4, y: 14, class: "title" }, title));
  const lim = Math.max(1, ...values.map(Math.abs));
  for (let sq = 0; sq < 64; sq++) {
    const file = sq % 8, rank = Math.floor(sq / 8);
    const x = 20 + file * size, y = 20 + (7 - rank) * size;
    const r = svg("rect", { x, y, width: size, height: size, fill: heatColor(values[sq], lim) });
    r.append(svg("title", {}, `${"abcdefgh"[file]}${rank + 1}: ${values[sq]}`));
    root.append(r);
  }
  for (let i = 0; i < 8; i++) {
    root.append(svg("text", { x: 8, y: 20 + i * size + size / 2 + 4 }, String(8 - i)));
    root.append(svg("text", { x: 20 + i * size + size / 2 - 3, y: height - 1 }, "abcdefgh"[i]));
  }
  return root;
}

// -- the list ------------------------------------------------------------------------------

function stateBadge(state) {
  return el("span", { class: `state ${state}`, text: state });
}

function renderList(data) {
  $("root").textContent = data.root;
  const page = $("page");
  page.replaceChildren();
  page.append(el("h2", { text: `Runs (${data.runs.length})` }));
  if (!data.runs.length) {
    page.append(el("p", { text: `No runs under ${data.root} yet: wasp-match, wasp-tune spsa and ` +
      "wasp-tune tune write their run directories there (-rundir / -dir)." }));
  }
  const table = el("table", { class: "data", id: "runs-list" });
  table.append(el("tr", {}, ...["Run", "Kind", "State", "Engines / method", "Limits",
    "Progress", "Started", "Updated"].map((h, i) => el("th", { class: i < 4 ? "text" : "", text: h }))));
  for (const r of data.runs) {
    const tr = el("tr", { class: "click run", "data-id": r.id,
                          onclick: () => { location.hash = `#/run/${encodeURIComponent(r.id)}`; } });
    tr.append(el("td", { class: "text" }, el("a", { href: `#/run/${encodeURIComponent(r.id)}`, text: r.id })),
      el("td", { class: "text", text: r.kind }),
      el("td", { class: "text" }, stateBadge(r.state)),
      el("td", { class: "text", text: r.engines.length ? r.engines.join(" vs ") : (r.limits || "") }),
      el("td", { text: r.kind === "tuning" ? "" : r.limits }),
      el("td", { class: "games", text: r.progress + (r.detail ? `, ${r.detail}` : "") }),
      el("td", { text: when(r.started) }),
      el("td", { text: when(r.updated) }));
    table.append(tr);
  }
  page.append(table);
  for (const e of data.errors) page.append(el("p", { class: "muted", text: `${e.id}: ${e.error}` }));
  if (data.runs.some((r) => r.state === "stopped")) {
    page.append(el("p", { class: "muted", text: "A stopped run goes on where it stopped with " +
      "its resume command (shown on its page)." }));
  }
}

// -- a run's page --------------------------------------------------------------------------

function card(label, value, small) {
  return el("div", { class: "card" }, el("div", { class: "small", text: label }),
            el("div", { class: "big", text: value }), small ? el("div", { class: "small", text: small }) : "");
}

function runHeader(data) {
  const head = el("div", {});
  head.append(el("h2", {}, `${data.kind} run ${data.id} `, stateBadge(data.state)));
  const bits = [data.progress];
  if (data.limits) bits.push(data.limits);
  if (data.engines && data.engines.length) bits.push(data.engines.join(" vs "));
  head.append(el("p", { class: "muted", text: bits.join(" \u00b7 ") }));
  if (data.state === "stopped") head.append(el("p", { class: "muted", text: `Stopped: resume with ${data.resume}` }));
  return head;
}

function encounterBlock(enc) {
  const box = el("div", {});
  const score = enc.games ? (enc.wins + enc.draws / 2) / enc.games * 100 : 0;
  const cards = el("div", { class: "cards" });
  cards.append(card(`${enc.engine1} vs ${enc.engine2}`, `${enc.wins} - ${enc.draws} - ${enc.losses}`,
                    `W-D-L, ${enc.games} games, ${fmt(score, 1)} %`));
  if (enc.elo !== undefined) {
    cards.append(card("Elo", `${fmt(enc.elo)} \u00b1 ${fmt(enc.elo_err)}`, `LOS ${fmt(100 * enc.los, 1)} %`));
    cards.append(card("nElo", `${fmt(enc.nelo)} \u00b1 ${fmt(enc.nelo_err)}`, `draws ${fmt(100 * enc.draw_ratio, 1)} % of games`));
  }
  if (enc.sprt) {
    cards.append(card("LLR", `${fmt(enc.sprt.llr, 2)}`,
                      `bounds (${fmt(enc.sprt.lower, 2)}, ${fmt(enc.sprt.upper, 2)}) [${enc.sprt.elo0}, ${enc.sprt.elo1}]`));
  }
  box.append(cards);
  const charts = el("div", { class: "charts" });
  if (enc.sprt) {
    charts.append(lineChart({ title: "LLR after each game pair", xLabel: "games",
      series: [{ name: "LLR", points: [[0, 0], ...enc.sprt.path] }],
      hlines: [{ y: enc.sprt.upper, label: "H1", color: "#2e7d32" },
               { y: enc.sprt.lower, label: "H0", color: "#c62828" }] }));
  }
  if (enc.pentanomial) {
    charts.append(barChart({ title: "pentanomial (pair scores 0 ... 2)", width: 330,
      bars: enc.pentanomial.map((v, i) => ({ label: ["0", "0.5", "1", "1.5", "2"][i], value: v })) }));
  }
  box.append(charts);
  return box;
}

function ratingsTable(rows) {
  const t = el("table", { class: "data", id: "ratings" });
  const heads = ["Engine", "Games", "W", "D", "L", "Score", "Elo", "+/-", "depth", "seldepth",
                 "knps", "time/move", "p95", "clock left", "moves", "time losses", "crashes",
                 "illegal", "stalls"];
  t.append(el("tr", {}, ...heads.map((h, i) => el("th", { class: i ? "" : "text", text: h }))));
  for (const r of rows) {
    t.append(el("tr", {}, el("td", { class: "text", text: r.name }), el("td", { text: r.games }),
      el("td", { text: r.wins }), el("td", { text: r.draws }), el("td", { text: r.losses }),
      el("td", { text: r.score !== undefined ? `${fmt(100 * r.score, 1)} %` : "-" }),
      el("td", { text: fmt(r.elo) }), el("td", { text: fmt(r.elo_err) }),
      el("td", { text: fmt(r.mean_depth, 1) }), el("td", { text: fmt(r.seldepth, 1) }),
      el("td", { text: r.nps != null ? fmt(r.nps / 1000, 0) : "-" }),
      el("td", { text: r.time_median != null ? `${fmt(r.time_median, 3)} s` : "-" }),
      el("td", { text: r.time_p95 != null ? `${fmt(r.time_p95, 3)} s` : "-" }),
      el("td", { text: r.clock_left != null ? `${fmt(r.clock_left, 2)} s` : "-" }),
      el("td", { text: r.moves ?? "-" }), el("td", { text: r.time_losses ?? "-" }),
      el("td", { text: r.crashes ?? "-" }), el("td", { text: r.illegal_moves ?? "-" }),
      el("td", { text: r.stalls ?? "-" })));
  }
  return t;
}

function renderMatch(page, data, runId) {
  const total = data.total || 0;
  const cards = el("div", { class: "cards" });
  cards.append(card("games", `${data.games_stored}`, `of ${total}`));
  const steal = data.steal != null ? `${fmt(data.steal, 1)} %` : "-";
  const last = data.last_session || {};
  cards.append(card("host CPU steal", steal,
    last.cpu_steal_pct != null ? `last session ${fmt(last.cpu_steal_pct, 1)} %` : "now, this host"));
  if (data.decision) cards.append(card("SPRT", data.decision.result || JSON.stringify(data.decision)));
  page.append(cards);
  cards.firstChild.querySelector(".big").id = "games-count";
  for (const enc of data.encounters) page.append(encounterBlock(enc));
  page.append(el("h2", { text: "Engines" }), ratingsTable(data.ratings));
  const terms = Object.entries(data.terminations).map(([k, v]) => `${k} ${v}`).join(", ");
  page.append(el("p", { class: "muted", text: `Game endings: ${terms || "none yet"}` }));
  page.append(el("div", { id: "replay", class: "hidden" }));
  page.append(gamesSection(data, runId));
}

function gamesSection(data, runId) {
  const box = el("div", { id: "games" });
  box.append(el("h2", { text: "Games" }));
  const engines = data.config.engines.map((e) => e.name);
  const sel = (name, options) => {
    const s = el("select", { id: `filter-${name}`, onchange: () => {
      view.filters[name] = s.value; view.gamesVersion = null; loadGames(runId);
    } });
    for (const [value, label] of options) {
      const o = el("option", { value, text: label });
      if (view.filters[name] === value) o.selected = true;
      s.append(o);
    }
    return s;
  };
  box.append(el("div", { class: "filters" },
    "engine", sel("engine", [["", "any"], ...engines.map((n) => [n, n])]),
    "result", sel("result", [["", "any"], ["1-0", "1-0"], ["0-1", "0-1"], ["draw", "draw"],
                             ["win", "win (of the engine)"], ["loss", "loss (of the engine)"]]),
    "ending", sel("termination", [["", "any"], ...Object.keys(data.terminations).map((t) => [t, t])]),
    el("span", { id: "games-shown", class: "muted" })));
  box.append(el("table", { class: "data", id: "games-table" }));
  return box;
}

async function loadGames(runId) {
  const q = new URLSearchParams({ id: runId, limit: "100" });
  for (const [k, v] of Object.entries(view.filters)) if (v) q.set(k, v);
  let data;
  try {
    data = await getJSON(`/api/run/games?${q}`);
  } catch (e) {
    showError(e.message);
    return;
  }
  const table = $("games-table");
  if (!table) return;
  table.replaceChildren(el("tr", {}, ...["#", "White", "Black", "Result", "Ending", "Plies"]
    .map((h, i) => el("th", { class: i && i < 5 ? "text" : "", text: h }))));
  for (const g of data.games) {
    const tr = el("tr", { class: "click game", "data-id": g.id, title: g.reason,
                          onclick: () => openGame(runId, g.id) });
    if (view.replay && view.replay.game.id === g.id) tr.classList.add("selected");
    tr.append(el("td", { text: g.id }), el("td", { class: "text", text: g.white }),
      el("td", { class: "text", text: g.black }), el("td", { class: "text", text: g.result }),
      el("td", { class: "text", text: g.reason }), el("td", { text: g.plies }));
    table.append(tr);
  }
  $("games-shown").textContent = `${data.count} games match; the newest ${data.games.length} shown`;
}

// -- replaying a game ----------------------------------------------------------------------

async function openGame(runId, gameId) {
  try {
    const game = await getJSON(`/api/run/game?${new URLSearchParams({ id: runId, game: gameId })}`);
    view.replay = { game, ply: game.moves.length };
    drawReplay();
    document.querySelectorAll("#games-table tr.game").forEach((tr) =>
      tr.classList.toggle("selected", Number(tr.dataset.id) === game.id));
    $("replay").scrollIntoView({ behavior: "smooth", block: "nearest" });
  } catch (e) {
    showError(e.message);
  }
}

function boardFrom(fen, last) {
  const board = el("div", { id: "replay-board", role: "grid", "aria-label": "game position" });
  const rows = fen.split(" ")[0].split("/");
  const squares = {};
  rows.forEach((row, i) => {
    let file = 0;
    for (const ch of row) {
      if (/\d/.test(ch)) file += Number(ch);
      else squares["abcdefgh"[file++] + (8 - i)] = ch;
    }
  });
  for (let r = 8; r >= 1; r--) {
    for (let f = 0; f < 8; f++) {
      const name = "abcdefgh"[f] + r;
      const sq = el("div", { class: `sq ${(f + r) % 2 ? "dark" : "light"}`, "data-square": name });
      if (last && (last.slice(0, 2) === name || last.slice(2, 4) === name)) sq.classList.add("last");
      const ch = squares[name];
      if (ch) {
        const white = ch === ch.toUpperCase();
        sq.append(el("span", { class: `piece ${white ? "w" : "b"}`, "data-piece": ch, text: GLYPHS[ch.toLowerCase()] }));
      }
      board.append(sq);
    }
  }
  return board;
}

function drawReplay() {
  const box = $("replay");
  if (!box || !view.replay) return;
  const { game, ply } = view.replay;
  box.classList.remove("hidden");
  const fen = ply === 0 ? game.start_fen : game.moves[ply - 1].fen;
  const left = el("div", {});
  left.append(el("div", { text: `#${game.id}: ${game.white} - ${game.black}  ${game.result}` }));
  left.append(boardFrom(fen, ply ? game.moves[ply - 1].uci : null));
  const go = (p) => { view.replay.ply = Math.max(0, Math.min(game.moves.length, p)); drawReplay(); };
  left.append(el("div", { class: "replay-controls" },
    el("button", { type: "button", onclick: () => go(0), text: "|<" }),
    el("button", { type: "button", id: "replay-back", onclick: () => go(view.replay.ply - 1), text: "<" }),
    el("button", { type: "button", id: "replay-forward", onclick: () => go(view.replay.ply + 1), text: ">" }),
    el("button", { type: "button", onclick: () => go(game.moves.length), text: ">|" }),
    el("button", { type: "button", onclick: () => { view.replay = null; box.classList.add("hidden"); }, text: "close" })));
  left.append(el("div", { class: "muted", text: game.reason }));
  const moves = el("div", { id: "replay-moves" });
  let number = Number(game.start_fen.split(" ")[5] || 1);
  let whiteToMove = game.start_fen.split(" ")[1] === "w";
  game.moves.forEach((m, i) => {
    if (whiteToMove) moves.append(`${number}. `);
    else if (i === 0) moves.append(`${number}... `);
    const span = el("span", { class: `mv${m.book ? " book" : ""}${i + 1 === ply ? " current" : ""}`,
                              "data-ply": i + 1, text: m.san, title: m.comment || "",
                              onclick: () => go(i + 1) });
    moves.append(span, " ");
    if (!whiteToMove) number += 1;
    whiteToMove = !whiteToMove;
  });
  const points = game.moves.map((m, i) => [i + 1, m.score !== undefined ? Math.max(-1000, Math.min(1000, m.score)) : null]);
  const chart = lineChart({ title: "score (White's view, cp, capped at 10 pawns)", width: 420, height: 220,
    xLabel: "ply", series: [
      { name: "White's engine", points: points.filter((p, i) => game.moves[i].white), color: "#444" },
      { name: "Black's engine", points: points.filter((p, i) => !game.moves[i].white), color: "#c77" }],
    hlines: [{ y: 0 }] });
  box.replaceChildren(left, moves, chart);
}

document.addEventListener("keydown", (ev) => {
  if (!view.replay || ev.target.tagName === "SELECT") return;
  if (ev.key === "ArrowLeft") { view.replay.ply = Math.max(0, view.replay.ply - 1); drawReplay(); }
  if (ev.key === "ArrowRight") { view.replay.ply = Math.min(view.replay.game.moves.length, view.replay.ply + 1); drawReplay(); }
});

// -- SPSA and tuning pages -----------------------------------------------------------------

function renderSpsa(page, data, runId) {
  const cards = el("div", { class: "cards" });
  cards.append(card("iterations", `${data.done}`, `of ${data.iterations}, ${data.pairs} pairs each`));
  cards.append(card("games", `${data.games}`, ""));
  cards.firstChild.querySelector(".big").id = "spsa-iterations";
  cards.append(card("games/s", fmt(data.games_per_s_recent ?? data.games_per_s, 2),
                    `overall ${fmt(data.games_per_s, 2)}`));
  cards.append(card("schedule", `\u03b1 ${data.schedule.alpha}, \u03b3 ${data.schedule.gamma}`, `A = ${fmt(data.schedule.A, 1)}`));
  page.append(cards);
  const table = el("table", { class: "data", id: "spsa-params" });
  table.append(el("tr", {}, ...["Parameter", "start", "now", "change", "min", "max", "c_end", "r_end"]
    .map((h, i) => el("th", { class: i ? "" : "text", text: h }))));
  for (const p of data.params) {
    table.append(el("tr", {}, el("td", { class: "text", text: p.name }), el("td", { text: fmt(p.start, 2) }),
      el("td", { text: fmt(p.value, 2) }), el("td", { text: fmt(p.value - p.start, 2) }),
      el("td", { text: p.min }), el("td", { text: p.max }), el("td", { text: p.c_end }),
      el("td", { text: p.r_end })));
  }
  page.append(el("h2", { text: "Parameters" }), table);
  const charts = el("div", { class: "charts", id: "spsa-paths" });
  for (const p of data.params) {
    charts.append(lineChart({ title: p.name, width: 300, height: 170, xLabel: "iteration",
      series: [{ name: p.name, points: p.path }], hlines: [{ y: p.start, label: "start" }] }));
  }
  page.append(el("h2", { text: "Paths" }), charts);
  const sched = el("div", { class: "charts" });
  const first = data.params[0];
  if (first) {
    sched.append(lineChart({ title: `schedule of ${first.name}: c_k`, width: 360, height: 190,
      xLabel: "k", series: [{ name: "c_k", points: first.c_k }] }));
    sched.append(lineChart({ title: `schedule of ${first.name}: a_k`, width: 360, height: 190,
      xLabel: "k", series: [{ name: "a_k", points: first.a_k }] }));
  }
  sched.append(lineChart({ title: "score of theta+ per iteration", width: 360, height: 190,
    xLabel: "iteration", series: [{ name: "score", points: data.score }], hlines: [{ y: 0.5 }] }));
  page.append(el("h2", { text: "Schedule and results" }), sched);
  page.append(el("h2", { text: "Closing SPRT" }));
  if (data.sprt) {
    for (const enc of data.sprt.encounters) page.append(encounterBlock(enc));
    page.append(el("p", { class: "muted", text: `${data.sprt.games_stored} games` +
      (data.sprt.decision ? `, ${data.sprt.decision.result || ""}` : ", running or not finished") }));
  } else {
    page.append(el("p", { class: "muted", text: data.then_sprt
      ? "Not started yet: it runs after the last iteration."
      : "None asked for (-then-sprt elo0=0 elo1=5 plays the tuned values against the start values)." }));
  }
}

function renderTuning(page, data) {
  const cards = el("div", { class: "cards" });
  cards.append(card("method", data.method || "?", `K = ${fmt(data.k, 4)}`));
  cards.append(card("pass", `${data.pass}`, data.done ? "done" : ""));
  cards.firstChild.nextSibling.querySelector(".big").id = "tuning-pass";
  cards.append(card("weights changed", `${data.changed ?? "-"}`, `${data.steps} steps logged`));
  page.append(cards);
  const passes = data.passes || [];
  const series = [["e_train", "train"], ["e_valid", "validation"], ["e_train_qsearch", "train (qsearch)"],
                  ["e_valid_qsearch", "validation (qsearch)"]]
    .filter(([k]) => passes.some((p) => typeof p[k] === "number"))
    .map(([k, name]) => ({ name, points: passes.map((p) => [p.pass, typeof p[k] === "number" ? p[k] : null]) }));
  const charts = el("div", { class: "charts", id: "tuning-passes" });
  charts.append(lineChart({ title: "E at the end of each pass", xLabel: "pass", series, width: 560 }));
  charts.append(barChart({ title: "the weights that moved most (tuned - start, cp)", horizontal: true,
    width: 460, height: 40 + 18 * Math.max(1, (data.moved || []).length),
    bars: (data.moved || []).map((m) => ({ label: m.weight, value: m.after - m.before })) }));
  page.append(charts);
  const heat = el("div", { class: "charts", id: "tuning-psts" });
  for (const p of data.psts || []) {
    heat.append(heatMap({ title: `${p.piece} ${p.phase}`, values: p.after }));
    heat.append(heatMap({ title: `${p.piece} ${p.phase} change`, values: p.change }));
  }
  page.append(el("h2", { text: "Piece-square tables (tuned, and the change)" }), heat);
}

function renderRun(data, runId) {
  $("root").textContent = data.id;
  const page = $("page");
  const keepReplay = view.replay;
  page.replaceChildren(runHeader(data));
  if (data.kind === "match") {
    renderMatch(page, data, runId);
    view.replay = keepReplay;
    drawReplay();
    loadGames(runId);
  } else if (data.kind === "spsa") {
    renderSpsa(page, data, runId);
  } else {
    renderTuning(page, data);
  }
}

// -- routing and polling -------------------------------------------------------------------

function parseRoute() {
  const h = location.hash.replace(/^#\/?/, "");
  if (h.startsWith("run/")) return { page: "run", id: decodeURIComponent(h.slice(4)) };
  return { page: "list" };
}

async function refresh() {
  const route = view.route;
  try {
    if (route.page === "list") {
      const data = await getJSON("/api/runs");
      const version = JSON.stringify(data.runs.map((r) => [r.id, r.state, r.progress, r.updated]));
      if (version !== view.version) { view.version = version; renderList(data); }
    } else {
      const data = await getJSON(`/api/run?${new URLSearchParams({ id: route.id })}`);
      const version = `${data.state}|${data.version}|${data.sprt ? data.sprt.version : ""}`;
      if (version !== view.version) { view.version = version; renderRun(data, route.id); }
    }
    $("live").textContent = `updated ${new Date().toLocaleTimeString()}`;
    showError("");
  } catch (e) {
    showError(e.message);
  }
}

function start() {
  clearTimeout(view.timer);
  view.route = parseRoute();
  view.version = null;
  view.replay = null;
  view.filters = { engine: "", result: "", termination: "" };
  const loop = async () => {
    await refresh();
    view.timer = setTimeout(loop, POLL_MS);
  };
  loop();
}

window.addEventListener("hashchange", start);
start();
