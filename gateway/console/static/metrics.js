// The Metrics page's live charts: poll /console/metrics/data and draw with uPlot. The x axis is
// the last `span` seconds in minute ticks (HH:MM, local time; the date is the axis' label), the
// y axes say their unit. A point appears only once a full minute lies before it.
(function () {
  "use strict";
  var BLUE = "#2563eb", RED = "#dc2626";
  var CHARTS = {
    first_visible: { unit: "latency", time: true, lines: [["p50", "first_visible_p50", BLUE], ["p99", "first_visible_p99", RED]] },
    answers: { unit: "answers / min", lines: [["answers", "answers", "#16a34a"]] },
    rate_limited: { unit: "429s / min", lines: [["429s", "rate_limited", "#ea580c"]] },
    run: { unit: "duration", time: true, lines: [["p50", "run_p50", BLUE], ["p99", "run_p99", RED]] }
  };
  var charts = [], span = 600, newest = null, hhmm, day, words = {};
  // the page's language: its template gives each word's translation (data-texts)
  function tr(word) { return words[word] || word; }

  function secs(v) {
    if (v == null) { return "—"; }
    return v < 1 ? Math.round(v * 1000) + " ms" : +v.toFixed(v < 10 ? 2 : 1) + " s";
  }
  function count(v) { return v == null ? "—" : String(+v.toFixed(2)); }
  function shown(el, name, ticks) { el.dataset[name] = ticks.join("|"); return ticks; }  // for tests
  function end() { return newest || Date.now() / 1000; }

  function make(el) {
    var kind = CHARTS[el.dataset.chart], fmt = kind.time ? secs : count;
    var opts = {
      width: Math.max(el.clientWidth, 200), height: 200,
      scales: {
        x: { time: true, range: function () { return [end() - span, end()]; } },
        y: { range: function (u, min, max) { return [0, max > 0 ? max * 1.15 : (kind.time ? 1 : 5)]; } }
      },
      series: [{ label: tr("at"), value: function (u, v) { return v == null ? "—" : day(new Date(v * 1000)) + " " + hhmm(new Date(v * 1000)); } }]
        .concat(kind.lines.map(function (l) {
          return { label: tr(l[0]), stroke: l[2], width: 2, spanGaps: false, value: function (u, v) { return fmt(v); } };
        })),
      axes: [
        { label: function () { return (el.dataset.day = day(new Date(end() * 1000))) + " " + tr("(local time)"); },
          labelSize: 20, incrs: [60, 120, 300, 600, 900, 1800, 3600], space: 50,
          values: function (u, splits) { return shown(el, "xticks", splits.map(function (s) { return hhmm(new Date(s * 1000)); })); } },
        { label: tr(kind.unit), labelSize: 20, size: 64,
          incrs: kind.time ? undefined : [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000],
          values: function (u, splits) { return shown(el, "yticks", splits.map(fmt)); } }
      ]
    };
    var empty = [[]].concat(kind.lines.map(function () { return []; }));
    charts.push({ el: el, lines: kind.lines, plot: new uPlot(opts, empty, el) });
  }

  function draw(data) {
    var s = data.series, t = s.t;
    span = data.span || span;
    newest = t.length ? t[t.length - 1] : null;
    document.getElementById("collecting").hidden = !data.collecting;
    charts.forEach(function (c) {
      c.plot.setData([t].concat(c.lines.map(function (l) { return s[l[1]]; })));
      c.el.dataset.points = String(s.answers.filter(function (v) { return v != null; }).length);
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
    hhmm = uPlot.fmtDate("{HH}:{mm}");
    day = uPlot.fmtDate("{YYYY}-{MM}-{DD}");
    words = JSON.parse(box.dataset.texts || "{}");
    box.querySelectorAll(".chart").forEach(make);
    window.addEventListener("resize", function () {
      charts.forEach(function (c) { c.plot.setSize({ width: Math.max(c.el.clientWidth, 200), height: 200 }); });
    });
    poll(box);
  }

  document.addEventListener("DOMContentLoaded", start);
})();
