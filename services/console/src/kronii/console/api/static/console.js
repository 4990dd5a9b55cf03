// Live updates: one EventSource on /events for the topics the page's elements listen to
// (data-live="activity agents"), each event re-triggered on those elements as "kronii:<topic>", so an
// element with hx-get and hx-trigger="kronii:activity" re-fetches its fragment.
(function () {
  "use strict";
  function listeners() { return document.querySelectorAll("[data-live]"); }
  function topicsOf(element) { return (element.getAttribute("data-live") || "").split(/\s+/).filter(Boolean); }
  document.addEventListener("DOMContentLoaded", function () {
    var topics = {};
    listeners().forEach(function (element) { topicsOf(element).forEach(function (t) { topics[t] = true; }); });
    var names = Object.keys(topics);
    if (!names.length || !window.EventSource) { return; }
    var source = new EventSource("/events?topics=" + encodeURIComponent(names.join(",")));
    names.forEach(function (topic) {
      source.addEventListener(topic, function (event) {
        var detail = {};
        try { detail = JSON.parse(event.data); } catch (e) { detail = {}; }
        listeners().forEach(function (element) {
          if (topicsOf(element).indexOf(topic) >= 0 && window.htmx) {
            window.htmx.trigger(element, "kronii:" + topic, detail);
          }
        });
      });
    });
    window.addEventListener("beforeunload", function () { source.close(); });
  });
})();
