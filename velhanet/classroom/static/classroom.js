// The class server's one script: it keeps a page current by the event stream named in the body's
// data-live. It holds no word of its own: the page is rendered again (in the reader's language) when
// one of its hand-ins changes, unless the reader is choosing a file to hand in.
"use strict";
(function () {
  const body = document.body;
  const live = body.dataset.live;
  if (!live || !window.EventSource) return;
  let pending = null;
  const busy = () => {
    const chosen = document.getElementById("archive");
    return chosen && chosen.files && chosen.files.length > 0;
  };
  const renderAgain = () => {
    if (pending) return;
    pending = setTimeout(() => {
      pending = null;
      if (busy()) return renderAgain();
      location.reload();
    }, 700);
  };
  const shown = (event) => {
    let data;
    try { data = JSON.parse(event.data); } catch (error) { return; }
    const row = document.querySelector('tr[data-hand-in="' + Number(data.id) + '"]');
    const position = data.position === undefined ? "" : String(data.position);
    if (!row) {
      if (body.dataset.reload || data.status) renderAgain();
      return;
    }
    if (row.dataset.status !== data.status || (row.dataset.position || "") !== position) {
      row.dataset.status = data.status;
      row.dataset.position = position;
      renderAgain();
    }
  };
  const stream = new EventSource(live);
  stream.addEventListener("handin", shown);
  document.querySelectorAll("tr[data-hand-in]").forEach((row) => {
    const status = row.querySelector(".status");
    const found = status && status.textContent.match(/\d+/);
    if (row.dataset.status === "queued" && found) row.dataset.position = found[0];
  });
})();
