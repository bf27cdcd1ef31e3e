/* Tells the on-call engineer when live refresh stops working (network trouble is when
   incidents happen), and when it recovers. No framework; htmx does the fetching. */
(function () {
  "use strict";
  var banner = null;
  var failedAt = null;

  function isPoll(elt) {
    var trigger = elt && elt.getAttribute && elt.getAttribute("hx-trigger");
    return !!trigger && trigger.indexOf("every ") !== -1;
  }

  function stale() {
    banner = banner || document.getElementById("stale-banner");
    if (!failedAt) failedAt = new Date();
    document.body.classList.add("stale");
    if (banner) {
      banner.textContent = "Live refresh failing since " + failedAt.toLocaleTimeString() +
        "; retrying every " + (document.body.dataset.liveRefresh || "few") +
        " s. What you see may be out of date.";
      banner.hidden = false;
    }
  }

  function fresh() {
    if (!failedAt) return;
    failedAt = null;
    document.body.classList.remove("stale");
    if (banner) banner.hidden = true;
  }

  document.addEventListener("htmx:sendError", function (evt) { if (isPoll(evt.detail.elt)) stale(); });
  document.addEventListener("htmx:responseError", function (evt) { if (isPoll(evt.detail.elt)) stale(); });
  document.addEventListener("htmx:afterRequest", function (evt) {
    if (isPoll(evt.detail.elt) && evt.detail.successful) fresh();
  });
})();

/* Close buttons of htmx-loaded dialogs: `data-dialog-close="<id>"` empties that container.
   A delegated listener instead of inline handlers, which the Content-Security-Policy forbids. */
document.addEventListener("click", function (evt) {
  "use strict";
  var button = evt.target.closest && evt.target.closest("[data-dialog-close]");
  if (!button) return;
  var container = document.getElementById(button.getAttribute("data-dialog-close"));
  if (container) container.innerHTML = "";
});
