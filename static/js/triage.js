/* The live triage partial (#runbook-triage polls itself through htmx) must not take away
   what the responder has open:
   - each poll sends the version of what is on screen (data-triage-version) as `v`; the
     server answers 204 when nothing shown has changed, and htmx then swaps nothing. The
     204 carries the evaluation time, which is written into the "evaluated" label;
   - when something did change, the <details> that were open are opened again after the
     swap, and a poll never replaces the partial while the runbook picker is in use. */
(function () {
  "use strict";
  if (window.RunbookTriage) return;
  window.RunbookTriage = true;

  var SECTION = "runbook-triage";

  function isPoll(detail) {
    var elt = detail && (detail.elt || (detail.requestConfig && detail.requestConfig.elt));
    return !!elt && elt.id === SECTION;  // the section's own hx-get, not a form inside it
  }

  function key(details) {
    if (details.dataset.keep) return details.dataset.keep;
    var summary = details.querySelector("summary");
    return summary ? summary.textContent.trim() : "";
  }

  function pickerBusy(section) {
    var select = section.querySelector('[data-testid="runbook-picker"] select');
    if (!select) return false;
    var chosen = select.options[select.selectedIndex];
    return document.activeElement === select || (chosen && !chosen.defaultSelected);
  }

  var reopen = null;

  document.addEventListener("htmx:configRequest", function (e) {
    if (!isPoll(e.detail) || e.detail.verb !== "get") return;
    var shown = e.detail.elt.querySelector("[data-triage-version]");
    if (shown) e.detail.parameters.v = shown.dataset.triageVersion;
  });

  document.addEventListener("htmx:beforeSwap", function (e) {
    var target = e.detail.target;
    if (!target || target.id !== SECTION) return;
    if (isPoll(e.detail) && pickerBusy(target)) { e.detail.shouldSwap = false; return; }
    reopen = Array.prototype.filter
      .call(target.querySelectorAll("details[open]"), function (d) { return key(d); })
      .map(key);
  });

  document.addEventListener("htmx:afterSwap", function (e) {
    var target = e.detail.target;
    if (!target || target.id !== SECTION || !reopen) return;
    var keep = reopen;
    reopen = null;
    Array.prototype.forEach.call(target.querySelectorAll("details"), function (d) {
      if (keep.indexOf(key(d)) >= 0) d.open = true;
    });
  });

  document.addEventListener("htmx:afterRequest", function (e) {
    var xhr = e.detail.xhr;
    if (!isPoll(e.detail) || !xhr || xhr.status !== 204) return;
    var when = xhr.getResponseHeader("X-Triage-Evaluated");
    var label = document.querySelector("#" + SECTION + " [data-triage-evaluated]");
    if (when && label) label.textContent = when;
  });
})();
