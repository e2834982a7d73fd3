// Live updates for the inbox: the server sends `change` when the person's event stream
// moves; the list is fetched again (through the gateway, with the person's own key).
"use strict";
(function () {
  const status = document.querySelector("[data-live-src]");
  if (!status || !window.EventSource) return;
  const target = document.querySelector(status.dataset.liveTarget);
  const source = new EventSource("/events");
  let refreshing = Promise.resolve();

  function refresh() {
    refreshing = refreshing.then(async () => {
      const response = await fetch(status.dataset.liveSrc, { credentials: "same-origin" });
      if (response.redirected) {  // the session ended: go where the console sends us
        window.location.assign(response.url);
        return;
      }
      if (!response.ok) return;
      const html = await response.text();
      const focused = document.activeElement && target.contains(document.activeElement);
      const before = target.querySelectorAll("[data-source-id]").length;
      const doc = new DOMParser().parseFromString(html, "text/html");
      target.replaceChildren(...doc.body.childNodes);
      const after = target.querySelectorAll("[data-source-id]").length;
      if (focused) target.focus();
      if (after !== before) {
        status.textContent = after > before
          ? `Live: ${after - before} new memor${after - before === 1 ? "y" : "ies"} waiting for review.`
          : "Live: the inbox changed.";
      }
    }).catch(() => {});
  }

  source.addEventListener("ready", () => {
    status.textContent = "Live: new memories appear here as agents save them.";
    status.dataset.live = "on";
  });
  source.addEventListener("change", refresh);
  source.addEventListener("error", () => {
    status.textContent = "Live updates paused; reconnecting…";
    status.dataset.live = "off";
  });
})();
