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
  // Copy buttons: a read-only field's value (a sensor's ingest URL or topic) to the clipboard.
  // Without this script the buttons stay hidden and the field is selected and copied by hand.
  function copyButtons() {
    var buttons = document.querySelectorAll("button[data-copy]");
    Array.prototype.forEach.call(buttons, function (button) {
      var field = document.getElementById(button.getAttribute("data-copy"));
      if (!field) { return; }
      var status = document.getElementById(field.id + "-status");
      field.addEventListener("focus", function () { field.select(); });
      button.hidden = false;
      button.addEventListener("click", function () {
        var said = function () { if (status) { status.textContent = button.getAttribute("data-copied"); } };
        field.select();
        if (navigator.clipboard && window.isSecureContext) {
          navigator.clipboard.writeText(field.value).then(said, function () {});
        } else if (document.execCommand && document.execCommand("copy")) {
          said();
        }
      });
    });
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", copyButtons);
  } else {
    copyButtons();
  }
})();
