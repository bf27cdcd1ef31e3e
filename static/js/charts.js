/* Golden-signal charts: every element with data-chart="<id>" is drawn with plotly from
   the JSON in <script id="<id>" type="application/json"> (Django's json_script). Runs
   when loaded, on DOMContentLoaded and after every htmx swap. plotly.min.js is loaded
   from the local static files on first need (never from a CDN).

   Live refresh: a .rb-signals block with data-refresh-url is re-read as JSON every
   data-refresh-seconds and each plot is redrawn in place with Plotly.react, so the page
   neither flickers nor loses a responder's zoom. Polling pauses while the tab is hidden
   (nobody looks, and every poll costs Prometheus range queries) and catches up when it
   is shown again. */
(function () {
  "use strict";
  if (window.RunbookCharts) { window.RunbookCharts.render(document); return; }

  var loading = null;
  var timer = null;
  var busy = false;

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

  // The time axis in the page's language: a d3 format the template translates (plotly
  // would name the months in English).
  function timeFormat() {
    var holder = document.querySelector("[data-time-format]");
    return holder ? holder.dataset.timeFormat : "";
  }

  function figure(data) {
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
      xaxis: { type: "date", title: { text: "" }, tickfont: { size: 10 }, tickformat: timeFormat() },
      yaxis: { title: { text: data.unit, font: { size: 10 } }, tickfont: { size: 10 }, rangemode: "tozero" },
      shapes: shapes, annotations: notes,
      paper_bgcolor: "rgba(0,0,0,0)", plot_bgcolor: "rgba(0,0,0,0)",
      uirevision: "keep",  // Plotly.react keeps a zoom or hidden trace across refreshes
    };
    return { traces: traces, layout: layout };
  }

  var CONFIG = { displaylogo: false, responsive: true, displayModeBar: false };

  function draw(div) {
    if (div.dataset.rendered) return;
    var holder = document.getElementById(div.dataset.chart);
    if (!holder) return;
    var fig = figure(JSON.parse(holder.textContent));
    div.dataset.rendered = "1";
    window.Plotly.newPlot(div, fig.traces, fig.layout, CONFIG);
  }

  function render(root) {
    var scope = root && root.querySelectorAll ? root : document;
    var divs = scope.querySelectorAll("[data-chart]");
    if (divs.length) {
      var holder = document.querySelector("[data-plotly-src]");
      plotly(holder && holder.dataset.plotlySrc, function () {
        Array.prototype.forEach.call(divs, draw);
      });
    }
    schedule();
  }

  // --- live refresh ---------------------------------------------------------------------
  function block() { return document.querySelector(".rb-signals[data-refresh-url]"); }

  function schedule() {
    var el = block();
    if (timer || !el) return;
    var seconds = Math.max(2, parseInt(el.dataset.refreshSeconds, 10) || 10);
    timer = window.setInterval(refresh, seconds * 1000);
  }

  function stop() { if (timer) { window.clearInterval(timer); timer = null; } }

  function rerender(el) {
    // The set of charts changed (a first line appeared, Prometheus came back or went
    // away): let htmx fetch the whole partial once instead of patching it.
    var section = el.closest("[hx-get]");
    if (section && window.htmx) window.htmx.ajax("GET", section.getAttribute("hx-get"), { target: section, swap: "innerHTML" });
  }

  function apply(el, answer) {
    var banner = el.querySelector(".rb-banner");
    if (answer.prometheus_error) { if (!banner) rerender(el); return; }  // still down: keep it
    if (banner) return rerender(el);  // Prometheus is back
    var divs = el.querySelectorAll("[data-chart]");
    var ids = Object.keys(answer.charts).filter(function (id) { return answer.charts[id].series.length; });
    if (ids.length !== divs.length) return rerender(el);
    for (var i = 0; i < divs.length; i++) {
      if (!answer.charts[divs[i].dataset.chart]) return rerender(el);
    }
    Array.prototype.forEach.call(divs, function (div) {
      var data = answer.charts[div.dataset.chart];
      var holder = document.getElementById(div.dataset.chart);
      if (holder) holder.textContent = JSON.stringify(data);
      var fig = figure(data);
      if (div.dataset.rendered) window.Plotly.react(div, fig.traces, fig.layout, CONFIG);
      else draw(div);
    });
    var range = el.querySelector("[data-signals-range]");
    if (range) range.textContent = answer.range;
  }

  function refresh() {
    var el = block();
    if (!el) return stop();  // the signals block left the page
    if (document.hidden || busy || !window.Plotly) return;
    busy = true;
    var url = el.dataset.refreshUrl + (el.dataset.refreshUrl.indexOf("?") < 0 ? "?" : "&") + "format=json";
    fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (r) { if (!r.ok) throw new Error("HTTP " + r.status); return r.json(); })
      .then(function (answer) { if (document.body.contains(el)) apply(el, answer); })
      .catch(function () { /* the console itself is unreachable: keep the last picture */ })
      .then(function () { busy = false; });
  }

  document.addEventListener("visibilitychange", function () {
    if (document.hidden) return stop();
    if (block()) { refresh(); schedule(); }  // catch up at once, then resume the rhythm
  });

  window.RunbookCharts = { render: render, refresh: refresh };
  document.addEventListener("DOMContentLoaded", function () { render(document); });
  document.addEventListener("htmx:afterSwap", function (e) { render(e.detail && e.detail.target); });
  render(document);
})();
