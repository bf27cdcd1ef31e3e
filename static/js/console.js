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
      // The words come from the page, in the viewer's language (base.html).
      banner.textContent = (banner.dataset.text || "")
        .replace("{time}", failedAt.toLocaleTimeString(document.documentElement.lang || undefined))
        .replace("{seconds}", document.body.dataset.liveRefresh || "?");
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

/* The browser's time zone, for the server to show times in (console/viewer.py). Set on
   every page so a laptop that travels follows; IANA names need no escaping. */
(function () {
  "use strict";
  var zone;
  try { zone = Intl.DateTimeFormat().resolvedOptions().timeZone; } catch (e) { return; }
  if (!zone || /[^A-Za-z0-9_+\-\/]/.test(zone)) return;
  if (document.cookie.split("; ").indexOf("console_tz=" + zone) !== -1) return;
  document.cookie = "console_tz=" + zone + "; path=/; max-age=31536000; SameSite=Lax" +
    (location.protocol === "https:" ? "; Secure" : "");
})();
