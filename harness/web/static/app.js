// The event pages' script: the deadline's countdown, dropping a file on the
// upload form, the live state of a team's submissions and the final's live
// standings (server-sent events). Everything it shows is set as text, never
// as markup, except the fragments the server rendered and escaped.
"use strict";

function countdown() {
  document.querySelectorAll(".countdown[data-until]").forEach(function (el) {
    var until = Date.parse(el.dataset.until);
    function tick() {
      var left = Math.max(0, Math.floor((until - Date.now()) / 1000));
      if (left === 0) { el.textContent = "closed"; return; }
      var d = Math.floor(left / 86400), h = Math.floor(left % 86400 / 3600),
          m = Math.floor(left % 3600 / 60), s = left % 60;
      el.textContent = (d ? d + "d " : "") + h + "h " + String(m).padStart(2, "0") + "m " + String(s).padStart(2, "0") + "s left";
      setTimeout(tick, 1000);
    }
    tick();
  });
}

function dropzone() {
  var drop = document.getElementById("drop"), input = document.getElementById("file"), form = document.getElementById("upload");
  if (!drop || !input || !form) { return; }
  ["dragenter", "dragover"].forEach(function (t) {
    drop.addEventListener(t, function (e) { e.preventDefault(); drop.classList.add("over"); });
  });
  ["dragleave", "drop"].forEach(function (t) {
    drop.addEventListener(t, function (e) { e.preventDefault(); drop.classList.remove("over"); });
  });
  drop.addEventListener("drop", function (e) {
    if (e.dataTransfer && e.dataTransfer.files.length > 0) {
      input.files = e.dataTransfer.files;
      form.requestSubmit();
    }
  });
}

function showState(row, ev) {
  var badge = row.querySelector(".state");
  if (badge) {
    badge.textContent = ev.state;
    badge.className = "state state-" + ev.state;
  }
  var summary = row.querySelector(".summary");
  if (summary && ev.done) {
    summary.textContent = "";
    if (ev.active) {
      var strong = document.createElement("strong");
      strong.textContent = "active";
      summary.append(strong, " ");
    }
    summary.append(ev.summary || "");
  }
}

function live() {
  var rows = document.querySelectorAll("[data-submission]");
  if (rows.length === 0 || !window.EventSource) { return; }
  var report = document.getElementById("report");
  var src = new EventSource("/team/events");
  src.onmessage = function (m) {
    var ev = JSON.parse(m.data);
    // The stream starts with every state: act only on what the page does
    // not show yet.
    var changed = false;
    document.querySelectorAll('[data-submission="' + ev.id + '"]').forEach(function (row) {
      var badge = row.querySelector(".state");
      if (badge && badge.textContent !== ev.state) {
        changed = true;
        showState(row, ev);
      }
    });
    if (!changed || !ev.done) { return; }
    // A notice that waited for this result has had its answer.
    document.querySelectorAll(".notice.until-done").forEach(function (n) { n.remove(); });
    if (location.search.indexOf("notice=") >= 0) { history.replaceState(null, "", location.pathname + location.hash); }
    if (document.getElementById("versions")) {
      // A finished validation brings its games and may move the active
      // version: refresh those sections (parsed, never run).
      fetch("/team", { credentials: "same-origin" }).then(function (r) {
        if (r.ok) { return r.text(); }
        throw new Error(r.status);
      }).then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        ["versions", "games"].forEach(function (id) {
          var old = document.getElementById(id), fresh = doc.getElementById(id);
          if (old && fresh) { old.replaceWith(fresh); }
        });
      }).catch(function () {});
    }
    if (report && document.querySelector('#facts[data-submission="' + ev.id + '"]')) {
      fetch(report.dataset.report, { credentials: "same-origin" }).then(function (r) {
        if (r.ok) { return r.text(); }
        throw new Error(r.status);
      }).then(function (html) { report.innerHTML = html; }).catch(function () {});
    }
  };
}

// standings keeps the final's standings current: each message of the
// stream says they changed, and the part is asked for again (the server
// renders it as the asker may see it: frozen, for a team, while the
// scoreboard is frozen).
function standings() {
  var parts = document.querySelectorAll("[data-live]");
  if (parts.length === 0 || !window.EventSource) { return; }
  var src = new EventSource("/standings/events");
  src.onmessage = function () {
    parts.forEach(function (part) {
      fetch(part.dataset.live, { credentials: "same-origin" }).then(function (r) {
        if (r.ok) { return r.text(); }
        throw new Error(r.status);
      }).then(function (html) { part.innerHTML = html; }).catch(function () {});
    });
  };
}

// swissRounds is a Swiss final's default rounds for n teams: ceil(log2 n) + 2.
function swissRounds(n) {
  return n < 2 ? 1 : Math.ceil(Math.log2(n)) + 2;
}

// estimate follows the final's form: the games a round robin plays and
// how long they take, at the mean game time the server gave, as the
// organizer changes the games per pair and how many play at once.
function estimate() {
  var p = document.getElementById("estimate"), form = document.getElementById("start-final");
  if (!p || !form) { return; }
  var teams = Number(p.dataset.teams), mean = Number(p.dataset.meanMs);
  var about = function (ms) {
    var s = ms / 1000;
    if (s >= 7200) { return "about " + (s / 3600).toFixed(s >= 35820 ? 0 : 1) + " h"; }
    if (s >= 120) { return "about " + (s / 60).toFixed(s >= 597 ? 0 : 1) + " min"; }
    return "about " + s.toFixed(s >= 9.95 ? 0 : 1) + " s";
  };
  var set = function (id, text) {
    var el = document.getElementById(id);
    if (el) { el.textContent = text; }
  };
  var update = function () {
    var pair = Math.max(1, Number(form.elements.games_per_pair.value) || 1);
    var once = Math.max(1, Number(form.elements.concurrency.value) || 1);
    var top = Number(form.elements.top.value) || 0;
    var n = top > 0 ? Math.min(top, teams) : teams;
    var rounds = Number(form.elements.rounds.value) || swissRounds(n);
    var games = n * (n - 1) / 2 * pair, swiss = rounds * Math.floor(n / 2) * pair;
    set("estimate-teams", String(n));
    set("estimate-pair", String(pair));
    set("estimate-once", String(once));
    set("estimate-games", String(games));
    set("estimate-rounds", String(rounds));
    set("estimate-swiss-games", String(swiss));
    if (mean > 0) {
      set("estimate-time", about(games * mean / once));
      set("estimate-swiss-time", about(swiss * mean / once));
    }
  };
  form.addEventListener("input", update);
  update();
}

// viewerAt opens the embedded viewer at the ply the page's address names
// (/games/ID#ply=N).
function viewerAt() {
  var viewer = document.getElementById("viewer");
  if (viewer && /^#ply=\d+/.test(location.hash)) {
    viewer.src = viewer.getAttribute("src") + location.hash;
  }
}

document.addEventListener("DOMContentLoaded", function () {
  viewerAt();
  estimate();
  countdown();
  standings();
  dropzone();
  live();
});
