// The conversation page: a running reply shown as it is written (server-sent events from
// /console/conversations/<thread>/live); when it ends, the transcript is read again.
(function () {
  "use strict";
  var source = null;

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) { node.className = cls; }
    if (text) { node.textContent = text; }
    return node;
  }

  function liveItem() {
    var li = document.getElementById("live");
    if (!li) {
      li = el("li", "msg msg-assistant msg-live");
      li.id = "live";
      li.setAttribute("aria-live", "polite");
      li.append(el("span", "role", "assistant"), " ", el("span", "status status-running", document.getElementById("transcript").dataset.writing || "writing…"),
        el("ul", "steps"), el("div", "text"));
      document.getElementById("transcript").appendChild(li);
      var empty = document.querySelector("#transcript .empty");
      if (empty) { empty.hidden = true; }
    }
    return li;
  }

  function show(reply) {
    var li = liveItem();
    var steps = li.querySelector(".steps");
    steps.replaceChildren.apply(steps, reply.steps.map(function (s) {
      return el("li", "step step-" + s.state, s.label);
    }));
    li.querySelector(".text").textContent = reply.text;
  }

  function reread() {
    fetch(location.pathname, { credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (html) {
        var fresh = html && new DOMParser().parseFromString(html, "text/html").getElementById("transcript");
        var now = document.getElementById("transcript");
        if (fresh && now) { now.replaceWith(fresh); }
      });
  }

  function watch() {
    var box = document.getElementById("conversation-state");
    if (source || !box || box.dataset.running !== "true" || typeof EventSource === "undefined") { return; }
    source = new EventSource(box.dataset.live);
    source.addEventListener("reply", function (e) { show(JSON.parse(e.data)); });
    source.addEventListener("end", function () { source.close(); source = null; reread(); });
    source.onerror = function () { source.close(); source = null; };  // the next state poll retries
  }

  document.addEventListener("DOMContentLoaded", watch);
  document.addEventListener("htmx:load", watch);  // a reply that starts while the page is open
})();
