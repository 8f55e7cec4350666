// The Metrics page's live charts: poll /console/metrics/data and draw with uPlot.
(function () {
  "use strict";
  var SERIES = {
    first_visible: [["p50", "first_visible_p50", "#2563eb"], ["p99", "first_visible_p99", "#dc2626"]],
    answers: [["answers", "answers", "#16a34a"]],
    rate_limited: [["429s", "rate_limited", "#ea580c"]],
    run: [["p50", "run_p50", "#2563eb"], ["p99", "run_p99", "#dc2626"]]
  };
  var charts = [];

  function make(el) {
    var lines = SERIES[el.dataset.chart];
    var opts = {
      width: Math.max(el.clientWidth, 200), height: 160,
      series: [{}].concat(lines.map(function (l) {
        return { label: l[0], stroke: l[2], width: 2, spanGaps: false };
      })),
      axes: [{}, { size: 50 }]
    };
    var empty = [[]].concat(lines.map(function () { return []; }));
    charts.push({ el: el, lines: lines, plot: new uPlot(opts, empty, el) });
  }

  function draw(data) {
    var s = data.series;
    charts.forEach(function (c) {
      c.plot.setData([s.t].concat(c.lines.map(function (l) { return s[l[1]]; })));
      c.el.dataset.points = String(s.t.length);
    });
  }

  function poll(box) {
    fetch(box.dataset.source, { credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (data) {
        if (data) { draw(data); }
        setTimeout(function () { poll(box); }, ((data && data.step) || 2) * 1000);
      })
      .catch(function () { setTimeout(function () { poll(box); }, 5000); });
  }

  function start() {
    var box = document.querySelector(".charts");
    if (!box || typeof uPlot === "undefined") { return; }
    box.querySelectorAll(".chart").forEach(make);
    window.addEventListener("resize", function () {
      charts.forEach(function (c) { c.plot.setSize({ width: Math.max(c.el.clientWidth, 200), height: 160 }); });
    });
    poll(box);
  }

  document.addEventListener("DOMContentLoaded", start);
})();
