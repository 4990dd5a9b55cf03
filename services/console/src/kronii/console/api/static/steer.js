// The Agents and Control pages' actions are htmx posts whose answer is the page again (#main): a
// refusal (4xx) or a silent service (503) is that page too, with its sentence on top, so it is swapped
// in like any answer instead of being dropped as an error.
(function () {
  "use strict";
  document.addEventListener("htmx:beforeSwap", function (event) {
    var source = event.detail.requestConfig && event.detail.requestConfig.elt;
    if (event.detail.xhr.status >= 400 && source && source.closest && source.closest("[data-steer]")) {
      event.detail.shouldSwap = true;
      event.detail.isError = false;
    }
  });
})();
