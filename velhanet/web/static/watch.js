// The spectators' pages: one EventSource each, no framework. Every name a player chose goes into
// the page as text (textContent), never as markup; only the board's SVG, drawn by the server, is markup.
"use strict";
(function () {
  const status = document.getElementById("status");
  function text(tag, value, cls) {
    const el = document.createElement(tag);
    el.textContent = value;
    if (cls) el.className = cls;
    return el;
  }
  function connect(url, handlers) {
    const source = new EventSource(url);
    source.onopen = () => { status.textContent = "live"; };
    source.onerror = () => { status.textContent = "reconnecting…"; };
    for (const name of Object.keys(handlers)) {
      source.addEventListener(name, (e) => handlers[name](JSON.parse(e.data)));
    }
  }
  function started(seconds) {
    return new Date(seconds * 1000).toLocaleTimeString();
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
      row.append(link, text("td", game.family + " · " + game.gameType), text("td", game.players.join(" – ")),
        text("td", String(game.moves)), text("td", game.state === "over" ? (game.result || "over") : "playing",
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
    function seconds(s) { return s.toFixed(s < 10 ? 2 : 1) + " s"; }
    function addMove(m) {
      const li = text("li", m[1]);
      li.value = m[0];
      li.appendChild(text("span", seconds(m[2]), "time"));
      moves.appendChild(li);
      moves.dataset.count = String(moves.children.length);
      li.scrollIntoView({ block: "nearest" });
    }
    function showBoard(svg, count) {
      board.innerHTML = svg;
      board.dataset.moves = String(count); // the board is after this many moves
    }
    function ended(r) { result.textContent = r; document.body.dataset.state = "over"; }
    connect(location.pathname.replace(/\/$/, "") + "/events", {
      snapshot: (g) => {
        document.getElementById("title").textContent = g.players.join(" – ") + " (" + g.gameType + ")";
        document.title = "velhanet: " + g.players.join(" – ");
        showBoard(g.svg, g.moves);
        moves.replaceChildren();
        moves.dataset.count = "0";
        g.moveList.forEach(addMove);
        document.body.dataset.state = g.state;
        if (g.result) ended(g.result);
      },
      move: (m) => addMove(m.move),
      board: (b) => showBoard(b.svg, b.moves),
      end: (e) => { showBoard(e.svg, e.moves); ended(e.result); },
    });
  }

  if (document.body.dataset.page === "game") gamePage(); else listPage();
})();
