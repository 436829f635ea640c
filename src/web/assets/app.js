// Kultiva pages: the little script there is. htmx reads its settings from the
// <meta name="htmx-config"> of each page (no inline script: the Content-Security-Policy
// allows scripts from this origin only). Every form works without this file.
(function () {
  "use strict";
  // A form posted by htmx that failed at the network shows the page's offline note.
  document.addEventListener("htmx:sendError", function () {
    var note = document.getElementById("offline-note");
    if (note) { note.hidden = false; }
  });
  document.addEventListener("htmx:afterRequest", function (event) {
    var note = document.getElementById("offline-note");
    if (note && event.detail && event.detail.successful) { note.hidden = true; }
  });
})();
