// Wasp-Py board: draws the server's game state and sends the human's clicks as moves.
// The engine runs in the server; this page long-polls GET /api/games/ID?since=V for changes.
"use strict";

const GLYPHS = { k: "\u265A", q: "\u265B", r: "\u265C", b: "\u265D", n: "\u265E", p: "\u265F" };
const FILES = "abcdefgh";
const NAMES = { q: "queen", r: "rook", b: "bishop", n: "knight" };

const $ = (id) => document.getElementById(id);

const ui = {
  game: null,        // the last state from the server
  flipped: false,
  selected: null,    // square name of the piece the human picked
  promotion: null,   // {from, to} while the chooser is open
  busy: false,       // a request is on its way
  pollToken: 0,      // a new game starts a new poll loop; old loops see the token change
};

// -- talking to the server --------------------------------------------------------------

async function api(method, path, body) {
  const options = { method, headers: {} };
  if (body !== undefined) {
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, options);
  } catch (err) {
    throw new Error("cannot reach the server (is `wasp gui` still running?)");
  }
  let data = null;
  try {
    data = await response.json();
  } catch (err) {
    data = null;
  }
  if (!response.ok) {
    const reason = data && data.error ? data.error : `${response.status} ${response.statusText}`;
    const error = new Error(reason);
    error.status = response.status;
    throw error;
  }
  return data;
}

function say(text, kind) {
  const box = $("message");
  box.textContent = text || "";
  box.className = text ? kind || "info" : "";
}

async function act(method, path, body) {
  // A request from a button or a click: the answer is the new state, or an error to show.
  ui.busy = true;
  try {
    const state = await api(method, path, body);
    say("");
    if (state && state.id) show(state);
    return state;
  } catch (err) {
    say(err.message, "error");
    if (err.status === 404 && ui.game && /no game/.test(err.message)) ui.game = null;
    return null;
  } finally {
    ui.busy = false;
  }
}

async function pollLoop(token) {
  // Ask for the state whenever the version moves on; wait 25 s at most per request.
  while (token === ui.pollToken && ui.game) {
    const g = ui.game;
    try {
      const state = await api("GET", `/api/games/${g.id}?since=${g.version}&wait=25`);
      if (token !== ui.pollToken) return;
      if (state.version !== ui.game.version) show(state);
      if (/cannot reach/.test($("message").textContent)) say("");
    } catch (err) {
      if (token !== ui.pollToken) return;
      say(err.message, "error");
      if (err.status === 404) return;
      await new Promise((resolve) => setTimeout(resolve, 1500));
    }
  }
}

function follow(state) {
  ui.game = null;
  ui.selected = null;
  closePromotion();
  show(state);
  sessionStorage.setItem("wasp-game", state.id);
  ui.pollToken += 1;
  pollLoop(ui.pollToken);
}

// -- reading the set-up form --------------------------------------------------------------

function readPlayer(side) {
  if ($(`${side}-type`).value === "human") return { type: "human" };
  const value = Number($(`${side}-value`).value);
  if (!Number.isFinite(value) || value <= 0) {
    throw new Error(`${side}: the engine's limit must be a positive number`);
  }
  if ($(`${side}-mode`).value === "depth") return { type: "engine", depth: Math.round(value) };
  return { type: "engine", movetime: Math.round(value * 1000) };
}

function writePlayer(side, player) {
  $(`${side}-type`).value = player.type;
  if (player.type === "engine") {
    if (player.depth !== undefined) {
      $(`${side}-mode`).value = "depth";
      $(`${side}-value`).value = player.depth;
    } else {
      $(`${side}-mode`).value = "time";
      $(`${side}-value`).value = player.movetime / 1000;
    }
  }
  markHumanFieldsets();
}

function markHumanFieldsets() {
  for (const side of ["white", "black"]) {
    const box = document.querySelector(`fieldset[data-side="${side}"]`);
    box.classList.toggle("human", $(`${side}-type`).value === "human");
  }
}

async function newGame(event) {
  if (event) event.preventDefault();
  let body;
  try {
    body = { white: readPlayer("white"), black: readPlayer("black") };
  } catch (err) {
    say(err.message, "error");
    return;
  }
  const fen = $("fen").value.trim();
  if (fen) body.fen = fen;
  const old = ui.game;
  let state;
  try {
    state = await api("POST", "/api/games", body);
  } catch (err) {
    say(err.message, "error");  // a bad FEN: the old game stays on the board
    return;
  }
  if (old) api("POST", `/api/games/${old.id}/close`).catch(() => {});
  ui.flipped = body.white.type === "engine" && body.black.type === "human";
  say("");
  follow(state);
}

async function applyPlayers() {
  if (!ui.game) return;
  try {
    const body = { white: readPlayer("white"), black: readPlayer("black") };
    await act("POST", `/api/games/${ui.game.id}/settings`, body);
  } catch (err) {
    say(err.message, "error");
  }
}

// -- the board ----------------------------------------------------------------------------

function placement(fen) {
  // {square: "P"} from the FEN's first field.
  const pieces = {};
  const rows = fen.split(" ")[0].split("/");
  rows.forEach((row, i) => {
    let file = 0;
    for (const ch of row) {
      if (/\d/.test(ch)) file += Number(ch);
      else pieces[FILES[file++] + (8 - i)] = ch;
    }
  });
  return pieces;
}

function pieceSpan(ch) {
  const span = document.createElement("span");
  const white = ch === ch.toUpperCase();
  span.className = `piece ${white ? "w" : "b"}`;
  span.textContent = GLYPHS[ch.toLowerCase()] + "\uFE0E";
  span.dataset.piece = ch;
  return span;
}

function targetsFrom(square) {
  if (!ui.game) return [];
  return ui.game.legal.filter((m) => m.startsWith(square)).map((m) => m.slice(2, 4));
}

function drawBoard() {
  const g = ui.game;
  const board = $("board");
  board.textContent = "";
  if (!g) return;
  const pieces = placement(g.fen);
  const last = g.last_move ? [g.last_move.slice(0, 2), g.last_move.slice(2, 4)] : [];
  const targets = ui.selected ? targetsFrom(ui.selected) : [];
  for (let row = 0; row < 8; row++) {
    for (let col = 0; col < 8; col++) {
      const rank = ui.flipped ? row + 1 : 8 - row;
      const file = ui.flipped ? 7 - col : col;
      const name = FILES[file] + rank;
      const sq = document.createElement("div");
      sq.className = `sq ${(file + rank) % 2 === 1 ? "dark" : "light"}`;
      sq.id = `sq-${name}`;
      sq.dataset.square = name;
      sq.setAttribute("role", "gridcell");
      if (last.includes(name)) sq.classList.add("last");
      if (g.check === name) sq.classList.add("check");
      if (ui.selected === name) sq.classList.add("selected");
      if (targets.includes(name)) sq.classList.add("target");
      if (pieces[name]) {
        sq.classList.add("occupied");
        sq.appendChild(pieceSpan(pieces[name]));
      }
      if (col === 0) sq.appendChild(coord("rank", String(rank)));
      if (row === 7) sq.appendChild(coord("file", FILES[file]));
      board.appendChild(sq);
    }
  }
  board.classList.toggle("frozen", !g.human_to_move);
  board.dataset.fen = g.fen;
  board.dataset.version = g.version;
  board.dataset.flipped = ui.flipped;
}

function coord(kind, text) {
  const span = document.createElement("span");
  span.className = `coord ${kind}`;
  span.textContent = text;
  return span;
}

function clickSquare(name) {
  const g = ui.game;
  if (!g || ui.busy || ui.promotion) return;
  if (!g.human_to_move) {
    if (!g.result) say(g.thinking ? "the engine is thinking" : "it is not a human's turn", "info");
    return;
  }
  if (ui.selected && targetsFrom(ui.selected).includes(name)) {
    const from = ui.selected;
    const moves = g.legal.filter((m) => m.startsWith(from + name));
    ui.selected = null;
    if (moves.some((m) => m.length === 5)) {
      openPromotion(from, name);
      drawBoard();
      return;
    }
    sendMove(moves[0]);
    return;
  }
  const mine = g.legal.some((m) => m.startsWith(name));
  ui.selected = mine && ui.selected !== name ? name : null;
  drawBoard();
}

async function sendMove(uci) {
  drawBoard();
  await act("POST", `/api/games/${ui.game.id}/move`, { move: uci });
}

function openPromotion(from, to) {
  ui.promotion = { from, to };
  const box = $("promotion-pieces");
  box.textContent = "";
  const white = ui.game.turn === "w";
  for (const p of ["q", "r", "b", "n"]) {
    const button = document.createElement("button");
    button.type = "button";
    button.dataset.piece = p;
    button.title = NAMES[p];
    button.setAttribute("aria-label", `promote to ${NAMES[p]}`);
    button.appendChild(pieceSpan(white ? p.toUpperCase() : p));
    button.addEventListener("click", () => choosePromotion(p));
    box.appendChild(button);
  }
  $("promotion").classList.remove("hidden");
  box.firstChild.focus();
}

function closePromotion() {
  ui.promotion = null;
  $("promotion").classList.add("hidden");
}

function choosePromotion(piece) {
  const { from, to } = ui.promotion;
  closePromotion();
  sendMove(from + to + piece);
}

// -- the panels ---------------------------------------------------------------------------

function sideName(side) {
  const g = ui.game;
  const colour = side === "w" ? "White" : "Black";
  const player = g.players[side === "w" ? "white" : "black"];
  return player.type === "engine" ? `${colour} (Wasp-Py)` : colour;
}

function drawStatus() {
  const g = ui.game;
  const status = $("status");
  status.classList.remove("thinking");
  if (g.result) {
    status.textContent = "Game over";
  } else if (g.thinking) {
    status.textContent = `${sideName(g.turn)} is thinking`;
    status.classList.add("thinking");
  } else if (g.paused && !g.human_to_move) {
    status.textContent = `${sideName(g.turn)} to move (engine paused)`;
  } else {
    status.textContent = `${sideName(g.turn)} to move${g.check ? " \u2014 check!" : ""}`;
  }
  const result = $("result");
  if (g.result) {
    result.textContent = `${g.result.result} \u2014 ${g.result.reason}`;
    result.classList.remove("hidden");
  } else {
    result.classList.add("hidden");
    result.textContent = "";
  }
  if (g.engine_error) say(g.engine_error, "error");
}

function drawAnalysis() {
  const g = ui.game;
  let a = null;
  let detail = "";
  if (g.thinking && g.live) {
    a = g.live;
    detail = `thinking: depth ${a.depth}, ${(a.time_ms / 1000).toFixed(1)} s`;
  } else {
    for (let i = g.moves.length - 1; i >= 0; i--) {
      if (g.moves[i].analysis) {
        a = g.moves[i].analysis;
        const nodes = a.nodes >= 1e6 ? `${(a.nodes / 1e6).toFixed(1)}M` : `${Math.round(a.nodes / 1e3)}k`;
        detail = `after ${g.moves[i].san}: depth ${a.depth}, ${(a.time_ms / 1000).toFixed(1)} s, ${nodes} nodes (White's view)`;
        break;
      }
    }
  }
  $("eval").textContent = a ? a.score : "\u2013";
  $("eval-detail").textContent = detail;
  $("pv").textContent = a ? a.pv_text : "";
}

function drawMoves() {
  const g = ui.game;
  const box = $("moves");
  box.textContent = "";
  const table = document.createElement("table");
  let number = g.first_move_number;
  let row = null;
  let white = g.first_turn === "w";
  g.moves.forEach((m, i) => {
    if (white || row === null) {
      row = table.insertRow();
      const num = row.insertCell();
      num.className = "num";
      num.textContent = `${number}.`;
      if (!white) row.insertCell().textContent = "\u2026";
    }
    const cell = row.insertCell();
    const span = document.createElement("span");
    span.className = `move ${m.by}`;
    if (i === g.moves.length - 1) span.classList.add("latest");
    span.textContent = m.san;
    span.dataset.uci = m.uci;
    cell.appendChild(span);
    if (m.analysis) {
      const score = document.createElement("span");
      score.className = "score";
      score.textContent = m.analysis.score;
      cell.appendChild(score);
      span.title = `${m.analysis.score} depth ${m.analysis.depth}: ${m.analysis.pv_text}`;
    }
    if (!white) number += 1;
    white = !white;
  });
  box.appendChild(table);
  box.scrollTop = box.scrollHeight;
}

function drawControls() {
  const g = ui.game;
  $("undo").disabled = !g || g.moves.length === 0;
  $("movenow").disabled = !g || !g.thinking;
  const anyEngine = g && (g.players.white.type === "engine" || g.players.black.type === "engine");
  $("pause").disabled = !anyEngine;
  $("pause").textContent = g && g.paused ? "Resume engine" : "Pause engine";
  $("save").href = g ? `/api/games/${g.id}/pgn` : "#";
}

function show(state) {
  const g = ui.game;
  if (!g || g.id !== state.id || g.version !== state.version) {
    if (g && (g.id !== state.id || g.fen !== state.fen)) ui.selected = null;
    if (ui.promotion && (!state.human_to_move || (g && g.fen !== state.fen))) closePromotion();
  }
  ui.game = state;
  drawBoard();
  drawStatus();
  drawAnalysis();
  drawMoves();
  drawControls();
}

// -- wiring -------------------------------------------------------------------------------

function wire() {
  $("board").addEventListener("click", (event) => {
    const sq = event.target.closest(".sq");
    if (sq) clickSquare(sq.dataset.square);
  });
  $("flip").addEventListener("click", () => {
    ui.flipped = !ui.flipped;
    drawBoard();
  });
  $("undo").addEventListener("click", () => {
    if (ui.game) act("POST", `/api/games/${ui.game.id}/undo`, {});
  });
  $("pause").addEventListener("click", () => {
    if (ui.game) act("POST", `/api/games/${ui.game.id}/settings`, { paused: !ui.game.paused });
  });
  $("movenow").addEventListener("click", () => {
    if (ui.game) act("POST", `/api/games/${ui.game.id}/stop`, {});
  });
  $("save").addEventListener("click", (event) => {
    if (!ui.game) event.preventDefault();
  });
  $("promotion-cancel").addEventListener("click", () => {
    closePromotion();
    drawBoard();
  });
  $("setup-form").addEventListener("submit", newGame);
  $("apply").addEventListener("click", applyPlayers);
  $("copyfen").addEventListener("click", () => {
    if (ui.game) $("fen").value = ui.game.fen;
  });
  for (const side of ["white", "black"]) {
    $(`${side}-type`).addEventListener("change", markHumanFieldsets);
  }
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && ui.promotion) {
      closePromotion();
      drawBoard();
    }
  });
  markHumanFieldsets();
}

async function start() {
  wire();
  const saved = sessionStorage.getItem("wasp-game");
  if (saved) {
    try {
      const state = await api("GET", `/api/games/${saved}`);
      writePlayer("white", state.players.white);
      writePlayer("black", state.players.black);
      follow(state);
      return;
    } catch (err) {
      sessionStorage.removeItem("wasp-game");
    }
  }
  await newGame();
}

start();
