/* Tracking reports: every element with data-report-chart="<id>" is drawn with the local
   plotly.min.js from the figure in <script id="<id>" type="application/json"> (Django's
   json_script). The figure (data + layout) is built server-side in
   postmortems/reports/charts.py and passed through unchanged, so this file stays dumb. */
(function () {
  "use strict";
  var CONFIG = { displaylogo: false, responsive: true, displayModeBar: false };
  // The page's words come from the template, in the viewer's language (no text in JS).
  var SCRIPT = document.currentScript;
  var UNAVAILABLE = (SCRIPT && SCRIPT.dataset.unavailable) ||
    "Charts unavailable: static/vendor/plotly.min.js did not load. The tables below have the same numbers.";

  function draw(div) {
    if (div.dataset.rendered) return;
    var holder = document.getElementById(div.dataset.reportChart);
    if (!holder) return;
    var fig = JSON.parse(holder.textContent);
    div.dataset.rendered = "1";
    window.Plotly.newPlot(div, fig.data, fig.layout, CONFIG);
  }

  function render() {
    if (!window.Plotly) {
      // plotly.min.js failed to load (a broken static deployment): say so where the
      // charts would be; the tables and CSV links still carry every number.
      document.querySelectorAll("[data-report-chart]").forEach(function (div) {
        div.textContent = UNAVAILABLE;
        div.className += " muted small";
      });
      return;
    }
    document.querySelectorAll("[data-report-chart]").forEach(draw);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", render);
  else render();
})();
