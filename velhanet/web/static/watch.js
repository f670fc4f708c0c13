// The spectators' pages: one EventSource each, no framework. Every name a player chose goes into
// the page as text (textContent), never as markup; only the board's SVG, drawn by the server, is markup
// (from the event stream, or for a replayed game from this site's /game/<id>/board/<n>).
// No word is written here: the page carries the site's words in its language (data-words, velhanet/web/texts.py).
"use strict";
(function () {
  const status = document.getElementById("status");
  const words = JSON.parse(document.body.dataset.words || "{}");
  const lang = document.documentElement.lang || "en";
  function say(key, values) {
    let said = words[key] || key;
    for (const name of Object.keys(values || {})) said = said.replace("{" + name + "}", String(values[name]));
    return said;
  }
  function gameType(name) { return name === "chess" ? say("chess") : name; } // Gambit's game, in the page's language
  function text(tag, value, cls) {
    const el = document.createElement(tag);
    el.textContent = value;
    if (cls) el.className = cls;
    return el;
  }
  function connect(url, handlers) {
    const source = new EventSource(url);
    source.onopen = () => { status.textContent = say("live"); };
    source.onerror = () => { status.textContent = say("reconnecting"); };
    for (const name of Object.keys(handlers)) {
      source.addEventListener(name, (e) => handlers[name](JSON.parse(e.data)));
    }
  }
  function started(seconds) {
    return new Date(seconds * 1000).toLocaleTimeString(lang);
  }

  function listPage() {
    const body = document.querySelector("#games tbody");
    const empty = document.getElementById("empty");
    const rows = new Map();
    function show(game) {
      let row = rows.get(game.id);
      if (!row) {
        row = document.createElement("tr");
        row.id = "game-" + game.id;
        rows.set(game.id, row);
        body.insertBefore(row, body.firstChild);
      }
      row.className = game.state;
      row.dataset.moves = game.moves;
      row.replaceChildren();
      const link = document.createElement("td");
      const a = text("a", game.id);
      a.href = "/game/" + game.id;
      link.appendChild(a);
      row.append(link, text("td", game.family + " · " + gameType(game.gameType)), text("td", game.players.join(" – ")),
        text("td", String(game.moves)), text("td", game.state === "over" ? (game.result || say("over")) : say("playing"),
          "state-" + game.state), text("td", started(game.startedAt)));
      empty.hidden = rows.size > 0;
    }
    connect("/events", {
      games: (games) => { rows.clear(); body.replaceChildren(); games.forEach(show); empty.hidden = rows.size > 0; },
      game: show,
      gone: (g) => { const row = rows.get(g.id); if (row) { row.remove(); rows.delete(g.id); } },
    });
  }

  function gamePage() {
    const board = document.getElementById("board");
    const moves = document.getElementById("moves");
    const result = document.getElementById("result");
    const base = location.pathname.replace(/\/$/, "");
    let replay = null;
    function seconds(s) {
      const digits = s < 10 ? 2 : 1;
      return s.toLocaleString(lang, { minimumFractionDigits: digits, maximumFractionDigits: digits }) + " s";
    }
    // One item per half-move (its value the move's number, which the step bar uses); a chess game's items say
    // "1. e4" and "e5", two to a line (the list is "paired").
    function addMove(m) {
      const li = text("li", m[1]);
      li.value = m[0];
      if (m[2] !== null) li.appendChild(text("span", seconds(m[2]), "time"));
      moves.appendChild(li);
      moves.dataset.count = String(moves.children.length);
      li.scrollIntoView({ block: "nearest" });
    }
    function showBoard(svg, count) {
      board.innerHTML = svg;
      board.dataset.moves = String(count); // the board is after this many moves
    }
    function ended(r) { result.textContent = r; document.body.dataset.state = "over"; }

    // A replayed game: the board after any move, fetched from the server when asked for.
    function stepper(total) {
      const buttons = {};
      for (const name of ["first", "previous", "play", "next", "last"]) {
        buttons[name] = document.getElementById("step-" + name);
      }
      const at = document.getElementById("step-at");
      let current = total;
      let asked = 0; // only the latest board asked for is shown, whatever order the answers come in
      let timer = null;
      function mark(n) {
        current = n;
        at.textContent = say("moveOf", { n: n, total: total });
        for (const li of moves.children) li.classList.toggle("current", li.value === n);
        if (n > 0 && moves.children[n - 1]) moves.children[n - 1].scrollIntoView({ block: "nearest" });
        buttons.first.disabled = buttons.previous.disabled = n === 0;
        buttons.next.disabled = buttons.last.disabled = n === total;
      }
      function show(n) {
        n = Math.max(0, Math.min(total, n));
        mark(n);
        const ticket = ++asked;
        fetch(base + "/board/" + n)
          .then((r) => (r.ok ? r.text() : Promise.reject(new Error("HTTP " + r.status))))
          .then((svg) => { if (ticket === asked) showBoard(svg, n); },
            (e) => { if (ticket === asked) status.textContent = say("notLoaded", { n: n, error: e.message }); });
      }
      function pause() {
        if (timer !== null) clearInterval(timer);
        timer = null;
        buttons.play.textContent = say("play");
      }
      function go(n) { pause(); show(n); }
      function playOrPause() {
        if (timer !== null) { pause(); return; }
        if (current >= total) show(0);
        buttons.play.textContent = say("pause");
        timer = setInterval(() => { show(current + 1); if (current >= total) pause(); }, 600);
      }
      buttons.first.addEventListener("click", () => go(0));
      buttons.previous.addEventListener("click", () => go(current - 1));
      buttons.next.addEventListener("click", () => go(current + 1));
      buttons.last.addEventListener("click", () => go(total));
      buttons.play.addEventListener("click", playOrPause);
      moves.addEventListener("click", (e) => {
        const li = e.target.closest("li");
        if (li && li.parentElement === moves) go(li.value);
      });
      document.addEventListener("keydown", (e) => {
        if (e.altKey || e.ctrlKey || e.metaKey || e.shiftKey) return;
        const to = { ArrowLeft: current - 1, ArrowRight: current + 1, Home: 0, End: total }[e.key];
        if (to === undefined) return;
        e.preventDefault();
        go(to);
      });
      document.body.classList.add("replay");
      document.getElementById("steps").hidden = false;
      return { mark, current: () => current };
    }

    connect(base + "/events", {
      snapshot: (g) => {
        document.getElementById("title").textContent = g.players.join(" – ") + " (" + gameType(g.gameType) + ")";
        document.title = "velhanet: " + g.players.join(" – ");
        moves.classList.toggle("paired", Boolean(g.paired));
        if (g.paired) { // a chess game: its PGN, so far, from this site
          document.getElementById("pgn-link").href = base + ".pgn";
          document.getElementById("pgn").hidden = false;
        }
        moves.replaceChildren();
        moves.dataset.count = "0";
        g.moveList.forEach(addMove);
        document.body.dataset.state = g.state;
        if (g.result) ended(g.result);
        if (!g.steps) {
          showBoard(g.svg, g.moves);
        } else if (replay === null) { // the final position first, as it came with the game
          replay = stepper(g.moves);
          showBoard(g.svg, g.moves);
          replay.mark(g.moves);
        } else { // a reconnection: the board shown stays, the move list was rebuilt
          replay.mark(replay.current());
        }
        if (g.steps) status.textContent = say("replay");
      },
      move: (m) => addMove(m.move),
      board: (b) => showBoard(b.svg, b.moves),
      end: (e) => {
        showBoard(e.svg, e.moves);
        ended(e.result);
        if (e.steps && replay === null) { replay = stepper(e.moves); replay.mark(e.moves); } // a finished chess game
      },
    });
  }

  if (document.body.dataset.page === "game") gamePage(); else listPage();
})();
