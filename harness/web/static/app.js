// The event pages' script: the deadline's countdown, dropping a file on the
// upload form, the live state of a team's submissions and the final's live
// standings (server-sent events). Everything it shows is set as text, never
// as markup, except the fragments the server rendered and escaped.
"use strict";

// countdown counts down to the deadline every second, in whichever
// countdown the page holds now (the live deadline replaces it).
function countdown() {
  function tick() {
    document.querySelectorAll(".countdown[data-until]").forEach(function (el) {
      var left = Math.max(0, Math.floor((Date.parse(el.dataset.until) - Date.now()) / 1000));
      if (left === 0) { el.textContent = "closed"; return; }
      var d = Math.floor(left / 86400), h = Math.floor(left % 86400 / 3600),
          m = Math.floor(left % 3600 / 60), s = left % 60;
      el.textContent = (d ? d + "d " : "") + h + "h " + String(m).padStart(2, "0") + "m " + String(s).padStart(2, "0") + "s left";
    });
    setTimeout(tick, 1000);
  }
  tick();
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
  // Out of the queue: its place in line says nothing any more.
  var place = row.querySelector(".queue-place");
  if (place && ev.state !== "queued") { place.remove(); }
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
// stream says they changed ("standings"), or the games playing did
// ("playing"), and the parts they show are asked for again (the server
// renders them as the asker may see them: frozen, for a team, while the
// scoreboard is frozen).
function standings() {
  var parts = document.querySelectorAll("[data-live]");
  if (parts.length === 0 || !window.EventSource) { return; }
  var src = new EventSource("/standings/events");
  src.onmessage = function (m) {
    parts.forEach(function (part) {
      if ((part.dataset.live === "/playing") !== (m.data === "playing")) { return; }
      fetch(part.dataset.live, { credentials: "same-origin" }).then(function (r) {
        if (r.ok) { return r.text(); }
        throw new Error(r.status);
      }).then(function (html) { part.innerHTML = html; }).catch(function () {});
    });
  };
}

// estimate follows the final's form: as the organizer changes the format,
// its choices, the games per pair or how many play at once, the server
// says again what each format plays and how long it takes (the same
// paragraph it serves with the page); the fields a format does not use
// are set aside.
function estimate() {
  var box = document.getElementById("estimate"), form = document.getElementById("start-final");
  if (!box || !form) { return; }
  var uses = { rounds: ["swiss", "stages"], advance: ["stages"], then: ["stages"], budget: ["rating"] };
  var pending = null;
  var update = function () {
    var format = form.elements.format.value;
    Object.keys(uses).forEach(function (name) {
      var field = form.elements[name];
      if (field && field.closest("label")) {
        field.closest("label").hidden = uses[name].indexOf(format) < 0;
      }
    });
    var query = new URLSearchParams(new FormData(form));
    query.delete("csrf");
    if (pending) { pending.abort(); }
    pending = new AbortController();
    fetch("/admin/estimate?" + query.toString(), { signal: pending.signal, credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.text() : Promise.reject(r.status); })
      .then(function (html) { box.innerHTML = html; box.dataset.ready = query.toString(); })
      .catch(function () { /* the page keeps the last estimate */ });
  };
  form.addEventListener("input", update);
  form.addEventListener("change", update);
  update();
}

// viewerAt opens the embedded viewer at the ply the page's address names
// (/games/ID#ply=N), in place of the one the page chose.
function viewerAt() {
  var viewer = document.getElementById("viewer");
  if (viewer && /^#ply=\d+/.test(location.hash)) {
    viewer.src = viewer.getAttribute("src").split("#")[0] + location.hash;
  }
}

// mine marks the asker's team's row in the final's standings, as they are
// drawn and each time they are drawn again.
function mine() {
  var me = document.body.dataset.team;
  if (!me) { return; }
  function mark() {
    document.querySelectorAll("#standings tr[data-team]").forEach(function (tr) {
      tr.classList.toggle("mine", tr.dataset.team === me);
    });
  }
  mark();
  var final = document.getElementById("final");
  if (final) { new MutationObserver(mark).observe(final, { childList: true, subtree: true }); }
}

document.addEventListener("DOMContentLoaded", function () {
  viewerAt();
  mine();
  estimate();
  countdown();
  standings();
  dropzone();
  live();
});
