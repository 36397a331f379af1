(function () {
  "use strict";
  function byId(id) { return document.getElementById(id); }
  var rows = Array.prototype.slice.call(document.querySelectorAll("#trace-table tbody tr"));
  var f = { mode: byId("f-mode"), model: byId("f-model"), framework: byId("f-framework"),
            outcome: byId("f-outcome"), text: byId("f-text") };
  var count = byId("f-count");
  var cache = {};
  function pageText(anchor) {
    if (!Object.prototype.hasOwnProperty.call(cache, anchor)) {
      var s = byId(anchor);
      cache[anchor] = s ? s.textContent.toLowerCase() : "";
    }
    return cache[anchor];
  }
  function apply() {
    var mode = f.mode.value, model = f.model.value, fw = f.framework.value, outcome = f.outcome.value;
    var q = f.text.value.trim().toLowerCase();
    var shown = 0;
    rows.forEach(function (r) {
      var d = r.dataset;
      var modes = d.modes ? d.modes.split(" ") : [];
      var ok = true;
      if (mode === "__none__") { ok = modes.length === 0; } else if (mode) { ok = modes.indexOf(mode) >= 0; }
      if (ok && model) { ok = d.model === model; }
      if (ok && fw) { ok = d.framework === fw; }
      if (ok && outcome) { ok = d.outcome === outcome; }
      if (ok && q) { ok = r.textContent.toLowerCase().indexOf(q) >= 0 || pageText(d.anchor).indexOf(q) >= 0; }
      r.hidden = !ok;
      if (ok) { shown += 1; }
    });
    count.textContent = shown + " of " + rows.length + " traces";
  }
  var timer = null;
  ["mode", "model", "framework", "outcome"].forEach(function (k) { f[k].addEventListener("change", apply); });
  f.text.addEventListener("input", function () {
    if (timer !== null) { clearTimeout(timer); }
    timer = setTimeout(apply, 150);
  });
  // In-page trace "pages": show the trace section holding the target of the URL fragment.
  function show() {
    Array.prototype.forEach.call(document.querySelectorAll("section.trace.open"), function (s) {
      s.classList.remove("open");
    });
    var id = location.hash.slice(1);
    try { id = decodeURIComponent(id); } catch (e) { return; }
    var el = id ? byId(id) : null;
    var page = el ? el.closest("section.trace") : null;
    if (page) {
      page.classList.add("open");
      el.scrollIntoView();
    }
  }
  window.addEventListener("hashchange", show);
  show();
  apply();
})();
