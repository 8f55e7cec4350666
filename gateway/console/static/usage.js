// The Usage page's charts over days: fetch the range's series once and draw with uPlot, as the
// Metrics page does. The x axis is UTC days (YYYY-MM-DD), a point a day; the y axes say their unit.
(function () {
  "use strict";
  var CHARTS = {
    tokens: { unit: "tokens", lines: [["in", "prompt", "#2563eb"], ["out", "completion", "#16a34a"]] },
    cost: { unit: "cost", lines: [["cost", "cost", "#ea580c"]] }
  };
  var DAY = 86400, words = {};
  // the page's language: its template gives each word's translation (data-texts)
  function tr(word) { return words[word] || word; }

  function utcDay(s) { return new Date(s * 1000).toISOString().slice(0, 10); }
  function count(v) { return v == null ? "—" : (+v.toFixed(v < 1 ? 4 : 2)).toLocaleString("en"); }
  function shown(el, name, ticks) { el.dataset[name] = ticks.join("|"); return ticks; }  // for tests

  function draw(el, data) {
    var kind = CHARTS[el.dataset.chart], s = data.series, t = s.t;
    var unit = kind.unit === "cost" ? data.currency : tr(kind.unit);
    var opts = {
      width: Math.max(el.clientWidth, 200), height: 200,
      tzDate: function (ts) { return uPlot.tzDate(new Date(ts * 1000), "Etc/UTC"); },  // days are UTC
      scales: {
        x: { time: true, range: function () { return [t[0] - DAY / 2, t[t.length - 1] + DAY / 2]; } },
        y: { range: function (u, min, max) { return [0, max > 0 ? max * 1.15 : 1]; } }
      },
      series: [{ label: tr("day"), value: function (u, v) { return v == null ? "—" : utcDay(v); } }]
        .concat(kind.lines.map(function (l) {
          return { label: tr(l[0]), stroke: l[2], width: 2, points: { show: true }, value: function (u, v) { return count(v); } };
        })),
      axes: [
        { label: tr("day (UTC)"), labelSize: 20, space: 70, incrs: [DAY, 2 * DAY, 7 * DAY, 14 * DAY, 28 * DAY],
          values: function (u, splits) { return shown(el, "xticks", splits.map(utcDay)); } },
        { label: unit, labelSize: 20, size: 70,
          values: function (u, splits) { return shown(el, "yticks", splits.map(count)); } }
      ]
    };
    var plot = new uPlot(opts, [t].concat(kind.lines.map(function (l) { return s[l[1]]; })), el);
    el.dataset.days = String(t.length);
    el.dataset.total = String(kind.lines.reduce(function (sum, l) {
      return sum + s[l[1]].reduce(function (a, b) { return a + b; }, 0);
    }, 0));
    window.addEventListener("resize", function () { plot.setSize({ width: Math.max(el.clientWidth, 200), height: 200 }); });
  }

  function start() {
    var box = document.querySelector(".charts");
    if (!box || typeof uPlot === "undefined") { return; }
    words = JSON.parse(box.dataset.texts || "{}");
    fetch(box.dataset.source, { credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (data) {
        if (data) { box.querySelectorAll(".chart").forEach(function (el) { draw(el, data); }); }
      });
  }

  document.addEventListener("DOMContentLoaded", start);
})();
