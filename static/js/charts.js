/* Golden-signal charts: every element with data-chart="<id>" is drawn with plotly from
   the JSON in <script id="<id>" type="application/json"> (Django's json_script). Runs
   when loaded, on DOMContentLoaded and after every htmx swap. plotly.min.js is loaded
   from the local static files on first need (never from a CDN). */
(function () {
  "use strict";
  if (window.RunbookCharts) { window.RunbookCharts.render(document); return; }

  var loading = null;

  function plotly(src, done) {
    if (window.Plotly) return done();
    if (!src) return;
    if (!loading) {
      loading = [];
      var s = document.createElement("script");
      s.src = src;
      s.onload = function () { var q = loading; loading = []; q.forEach(function (f) { f(); }); };
      document.head.appendChild(s);
    }
    loading.push(done);
  }

  function draw(div) {
    if (div.dataset.rendered) return;
    var holder = document.getElementById(div.dataset.chart);
    if (!holder) return;
    var data = JSON.parse(holder.textContent);
    div.dataset.rendered = "1";
    var traces = data.series.map(function (s) {
      return { x: s.x, y: s.y, name: s.name, type: "scatter", mode: "lines",
               line: { width: 2 }, hovertemplate: "%{y:.3~g} " + data.unit + "<extra>%{fullData.name}</extra>" };
    });
    var shapes = [], notes = [];
    Object.keys(data.marks || {}).forEach(function (label) {
      var x = data.marks[label];
      shapes.push({ type: "line", xref: "x", yref: "paper", x0: x, x1: x, y0: 0, y1: 1,
                    line: { color: "#c62828", width: 1, dash: "dot" } });
      notes.push({ x: x, y: 1, xref: "x", yref: "paper", text: label, showarrow: false,
                   font: { size: 10, color: "#c62828" }, xanchor: "left", yanchor: "top" });
    });
    var layout = {
      margin: { l: 48, r: 12, t: 8, b: 32 }, height: 220, showlegend: traces.length > 1 && traces.length <= 4,
      legend: { orientation: "h", y: -0.25, font: { size: 10 } },
      xaxis: { type: "date", title: { text: "" }, tickfont: { size: 10 } },
      yaxis: { title: { text: data.unit, font: { size: 10 } }, tickfont: { size: 10 }, rangemode: "tozero" },
      shapes: shapes, annotations: notes,
      paper_bgcolor: "rgba(0,0,0,0)", plot_bgcolor: "rgba(0,0,0,0)",
    };
    window.Plotly.newPlot(div, traces, layout, { displaylogo: false, responsive: true, displayModeBar: false });
  }

  function render(root) {
    var scope = root && root.querySelectorAll ? root : document;
    var divs = scope.querySelectorAll("[data-chart]");
    if (!divs.length) return;
    var holder = document.querySelector("[data-plotly-src]");
    plotly(holder && holder.dataset.plotlySrc, function () {
      Array.prototype.forEach.call(divs, draw);
    });
  }

  window.RunbookCharts = { render: render };
  document.addEventListener("DOMContentLoaded", function () { render(document); });
  document.addEventListener("htmx:afterSwap", function (e) { render(e.detail && e.detail.target); });
  render(document);
})();
