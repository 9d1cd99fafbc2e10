"use strict";
// The projector page's boards: the final's games playing now, each drawn
// from its last position as the server streams them ("boards": the list
// whole, at most a few times a second).
(function () {
  var box = document.querySelector("[data-boards]");
  if (!box || !window.EventSource) { return; }
  var boards = document.getElementById("boards");
  var none = document.getElementById("boards-none");
  var frozen = document.getElementById("boards-frozen");
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined) { e.textContent = text; }
    return e;
  }
  // owner is who holds the square: 0 white, 1 black, -1 no one.
  function owner(f, r, c, letter) {
    if (f.owners) { return f.owners[r][c]; }
    if (!letter || letter === "?") { return -1; }
    return letter === letter.toUpperCase() ? 0 : 1;
  }
  function draw(f) {
    var rows = f.cells || [], cols = rows.length ? rows[0].length : 0;
    var g = el("div", "mini");
    g.style.gridTemplateColumns = "repeat(" + cols + ", 1fr)";
    rows.forEach(function (row, r) {
      row.forEach(function (letter, c) {
        var sq = el("div", (r + c) % 2 ? "d" : "l");
        if (letter === "?") { sq.className += " fog"; }
        var who = owner(f, r, c, letter);
        var label = f.labels && f.labels[r] && f.labels[r][c] ? f.labels[r][c] : letter;
        if (who === 0 || who === 1) {
          sq.appendChild(el("span", who === 0 ? "pw" : "pb", label));
        } else if (letter && letter !== "?") {
          sq.appendChild(el("span", "g", letter));
        }
        sq.dataset.piece = letter || "";
        g.appendChild(sq);
      });
    });
    return g;
  }
  function card(b) {
    var a = el("a", "live-board");
    a.href = "/live/" + b.id;
    a.dataset.game = b.id;
    var who = el("div", "who");
    who.appendChild(el("span", "w", b.white));
    who.appendChild(el("span", "b", b.black));
    a.appendChild(who);
    a.appendChild(draw(b.board || {}));
    a.appendChild(el("div", "ply", (b.playoff ? "playoff \u00b7 " : b.round ? "round " + b.round + " \u00b7 " : "") + "turn " + b.plies));
    return a;
  }
  var src = new EventSource(box.dataset.boards);
  src.addEventListener("boards", function (m) {
    var d = JSON.parse(m.data);
    boards.replaceChildren.apply(boards, (d.games || []).map(card));
    none.hidden = d.frozen || (d.games || []).length > 0;
    frozen.hidden = !d.frozen;
  });
})();
