// judgelab annotate: the keyboard. Digits rate (a / b / t for a pair), s skips, b goes back (p for a pair),
// n opens the note (Esc leaves it).
// Every key clicks (or focuses) the element that carries it in data-key, so the page works the same
// with a mouse or without this script.
"use strict";

(function () {
  function keyOf(event) {
    if (event.key === "Enter") return "enter";
    return event.key.length === 1 ? event.key.toLowerCase() : "";
  }

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || event.isComposing) return;
    const target = event.target;
    if (target instanceof Element && target.closest("input, textarea, select")) {
      if (event.key === "Escape") target.blur();
      return;
    }
    const key = keyOf(event);
    if (!key) return;
    const element = document.querySelector('[data-key="' + CSS.escape(key) + '"]');
    if (!element) return;
    event.preventDefault();
    if (element.tagName === "TEXTAREA" || element.tagName === "INPUT") {
      element.focus();
    } else {
      element.click();
    }
  });

  // One answer per page: a second key press while the first is on its way is ignored.
  const form = document.getElementById("answer");
  if (form) {
    form.addEventListener("submit", function (event) {
      if (form.dataset.sent) {
        event.preventDefault();
        return;
      }
      form.dataset.sent = "1";
      document.body.classList.add("sending");
    });
  }
})();
