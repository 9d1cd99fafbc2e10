// Example Code Clash bot in JavaScript (Node.js): a random legal mover.
//
// Follows the bot guide to the letter: run as `node random_bot.js
// /path/to/state.json` with game_dir as the working directory, writes
// move.json there, exits 0 on a move, 1 when state.json is malformed, 2 when
// it has no legal move, 3 on an internal error. It keeps its turn count in
// the data file js-bot.json. Node's standard library only.
"use strict";
const crypto = require("crypto");
const fs = require("fs");

const SIZE = 5;
const DATA_FILE = "js-bot.json";

const homeRow = (color, r) => (color === "white" ? r === 0 || r === 1 : r === 3 || r === 4);
const forward = (color) => (color === "white" ? 1 : -1);
const onBoard = (r, c) => r >= 0 && r < SIZE && c >= 0 && c < SIZE;

function setupMoves(state) {
  const me = state.playerColor;
  const other = me === "white" ? "black" : "white";
  const step = state.setupStep;
  const board = state.board;
  const blocked = new Set((state.blockedTiles || []).map((t) => t.join(",")));
  const rowsOf = step === 2 ? other : me;
  let kinds = { 1: [null], 2: [null], 3: [null] }[step];
  if (step === 4) {
    let bishops = 0, pawns = 0;
    for (const row of board) {
      for (const p of row) {
        if (p && p.color === me && p.type === "B") bishops++;
        if (p && p.color === me && p.type === "P") pawns++;
      }
    }
    kinds = (bishops < 2 ? [[0, 3]] : []).concat(pawns < 3 ? [[0, 4]] : []);
  }
  const out = [];
  for (const kind of kinds || []) {
    for (let r = 0; r < SIZE; r++) {
      for (let c = 0; c < SIZE; c++) {
        if (homeRow(rowsOf, r) && board[r][c] === null && !blocked.has(r + "," + c)) {
          const move = { to: [r, c] };
          if (kind !== null) move.from = kind;
          out.push(move);
        }
      }
    }
  }
  return out;
}

function playMoves(state) {
  const me = state.playerColor;
  const board = state.board;
  let shielded = null;
  for (const a of state.abilitiesActivated || []) {
    if (a.name === "shield" && a.target) shielded = a.target.join(",");
  }
  const piece = (r, c) => {
    const p = board[r][c];
    return p === null || p.type === "F" ? null : p;
  };
  const out = [];
  for (let r = 0; r < SIZE; r++) {
    for (let c = 0; c < SIZE; c++) {
      const p = piece(r, c);
      if (p === null || p.color !== me) continue;
      const targets = [];
      const t = p.type;
      if (t === "K") {
        for (const dr of [-1, 0, 1]) for (const dc of [-1, 0, 1]) if (dr || dc) targets.push([r + dr, c + dc]);
      } else if ("RBQ".includes(t)) {
        const dirs = [];
        if ("RQ".includes(t)) dirs.push([1, 0], [-1, 0], [0, 1], [0, -1]);
        if ("BQ".includes(t)) dirs.push([1, 1], [1, -1], [-1, 1], [-1, -1]);
        for (const [dr, dc] of dirs) {
          let rr = r + dr, cc = c + dc;
          while (onBoard(rr, cc)) {
            targets.push([rr, cc]);
            if (piece(rr, cc) !== null) break;
            rr += dr;
            cc += dc;
          }
        }
      } else if (t === "P") {
        const f = forward(me);
        if (onBoard(r + f, c) && piece(r + f, c) === null) out.push({ from: [r, c], to: [r + f, c] });
        for (const dc of [-1, 1]) {
          const q = onBoard(r + f, c + dc) ? piece(r + f, c + dc) : null;
          if (q !== null && q.color !== me && [r + f, c + dc].join(",") !== shielded) {
            out.push({ from: [r, c], to: [r + f, c + dc] });
          }
        }
        continue;
      }
      for (const [rr, cc] of targets) {
        if (!onBoard(rr, cc) || [rr, cc].join(",") === shielded) continue;
        const q = piece(rr, cc);
        if (q === null || q.color !== me) out.push({ from: [r, c], to: [rr, cc] });
      }
    }
  }
  return out;
}

function main() {
  if (process.argv.length !== 3) {
    console.error("usage: node random_bot.js /path/to/state.json");
    return 1;
  }
  let raw, state;
  try {
    raw = fs.readFileSync(process.argv[2]);
    state = JSON.parse(raw);
    if (typeof state.phase !== "string") throw new Error("no phase");
  } catch (e) {
    console.error("malformed state:", e.message);
    return 1;
  }
  let memory = { turns: 0 };
  if (fs.existsSync(DATA_FILE)) memory = JSON.parse(fs.readFileSync(DATA_FILE, "utf8"));
  const moves = state.phase === "setup" ? setupMoves(state) : playMoves(state);
  if (moves.length === 0) {
    console.error("no legal move");
    return 2;
  }
  // The random source is seeded from the state and the turn count.
  const seed = crypto.createHash("sha256").update(raw).update(String(memory.turns)).digest();
  const move = moves[seed.readUInt32BE(0) % moves.length];
  fs.writeFileSync("move.json", JSON.stringify({ move, ability: { name: null, target: null } }));
  memory.turns += 1;
  fs.writeFileSync(DATA_FILE, JSON.stringify(memory));
  return 0;
}

try {
  process.exitCode = main();
} catch (e) {
  // The guide's exit code 3: internal error.
  console.error("internal error:", e && e.stack ? e.stack : e);
  process.exitCode = 3;
}
