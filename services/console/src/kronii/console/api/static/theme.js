// The person's theme choice (automatic, light, dark), kept in this browser; applied before the page paints.
(function () {
  "use strict";
  var KEY = "kronii-theme";
  var NAMES = { auto: "automatic", light: "light", dark: "dark" };
  var NEXT = { auto: "light", light: "dark", dark: "auto" };
  function stored() {
    try { return localStorage.getItem(KEY) || "auto"; } catch (e) { return "auto"; }
  }
  function apply(theme) {
    if (theme === "auto") { document.documentElement.removeAttribute("data-theme"); }
    else { document.documentElement.setAttribute("data-theme", theme); }
    var button = document.getElementById("theme-toggle");
    if (button) { button.textContent = "Theme: " + NAMES[theme]; }
  }
  apply(stored());
  document.addEventListener("DOMContentLoaded", function () {
    apply(stored());
    var button = document.getElementById("theme-toggle");
    if (!button) { return; }
    button.addEventListener("click", function () {
      var theme = NEXT[stored()] || "auto";
      try { localStorage.setItem(KEY, theme); } catch (e) { /* private mode: this page only */ }
      apply(theme);
    });
  });
})();
