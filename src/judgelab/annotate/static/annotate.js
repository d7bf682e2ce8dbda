// judgelab annotate: the keyboard. Digits rate (a / b / t for a pair), s skips, b goes back (p for a pair),
// n opens the note (Esc leaves it), h the history, r folds the reference, ? the help, d dark or light.
// Every key clicks (or focuses) the element that carries it in data-key, so the page works the same
// with a mouse or without this script. With several aspects on the page, a digit rates the aspect in
// focus and moves on to the next; after the last, the answer is saved.
"use strict";

(function () {
  const THEME = "judgelab-annotate-theme";
  const root = document.documentElement;
  try {  // before the page is drawn: a remembered choice wins over the system's
    const stored = localStorage.getItem(THEME);
    if (stored === "dark" || stored === "light") root.dataset.theme = stored;
  } catch (e) { /* storage off: follow the system */ }

  function toggleTheme() {
    const dark = root.dataset.theme ? root.dataset.theme === "dark"
      : matchMedia("(prefers-color-scheme: dark)").matches;
    root.dataset.theme = dark ? "light" : "dark";
    try { localStorage.setItem(THEME, root.dataset.theme); } catch (e) { /* not remembered */ }
  }

  function keyOf(event) {
    if (event.key === "Enter") return "enter";
    return event.key.length === 1 ? event.key.toLowerCase() : "";
  }

  function groups() { return Array.from(document.querySelectorAll(".aspect-group")); }
  function activeGroup() { return document.querySelector(".aspect-group.active"); }
  function chosen(group) { return group.querySelector("input:checked") !== null; }

  function activate(group) {
    groups().forEach(function (g) { g.classList.toggle("active", g === group); });
    if (group) group.scrollIntoView({block: "nearest"});
  }

  // After a choice in `group`: on to the next aspect without a value; the choice that gives the last
  // one its value saves. On a reopened item (every aspect had one) it moves to the next, and after the
  // last, saves: one aspect can be changed alone.
  function complete() { return groups().every(chosen); }
  function advance(group) {
    const all = groups();
    const form = document.getElementById("answer");
    const wasComplete = form.dataset.complete === "1";
    form.dataset.complete = complete() ? "1" : "";
    const at = all.indexOf(group);
    const open = all.slice(at + 1).concat(all.slice(0, at)).find(function (g) { return !chosen(g); });
    if (open) return activate(open);
    if (!wasComplete || at === all.length - 1) {
      form.requestSubmit(document.getElementById("save"));
    } else {
      activate(all[at + 1]);
    }
  }

  function help() { return document.getElementById("help"); }
  function toggleHelp(show) {
    const overlay = help();
    if (overlay) overlay.hidden = show === undefined ? !overlay.hidden : !show;
  }

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || event.isComposing) return;
    const target = event.target;
    if (target instanceof Element && target.closest("textarea, input[type=text], input:not([type]), select")) {
      if (event.key === "Escape") target.blur();
      return;
    }
    const overlay = help();
    if (overlay && !overlay.hidden) {  // the help is open: ? or Esc closes it, other keys do nothing
      if (event.key === "Escape" || event.key === "?") {
        event.preventDefault();
        toggleHelp(false);
      }
      return;
    }
    const active = activeGroup();
    if (active && (event.key === "ArrowDown" || event.key === "ArrowUp")) {
      const all = groups();
      const next = all[all.indexOf(active) + (event.key === "ArrowDown" ? 1 : -1)];
      if (next) {
        event.preventDefault();
        activate(next);
      }
      return;
    }
    const key = keyOf(event);
    if (!key) return;
    const selector = '[data-key="' + CSS.escape(key) + '"]';
    const element = (active && active.querySelector(selector)) || document.querySelector(selector);
    if (!element) return;
    event.preventDefault();
    if (element.tagName === "TEXTAREA" || element.tagName === "INPUT") {
      element.focus();
    } else {
      element.click();
    }
  });

  document.addEventListener("DOMContentLoaded", function () {
    const theme = document.getElementById("theme");
    if (theme) theme.addEventListener("click", toggleTheme);
    const button = document.getElementById("help-button");
    if (button) button.addEventListener("click", function () { toggleHelp(); });
    const overlay = help();
    if (overlay) overlay.addEventListener("click", function (event) { if (event.target === overlay) toggleHelp(false); });

    const form = document.getElementById("answer");
    if (!form) return;
    form.dataset.complete = groups().length && complete() ? "1" : "";
    // Several aspects: a choice (key or mouse) moves the focus on; clicking an aspect focuses it.
    groups().forEach(function (group) {
      group.addEventListener("change", function () { activate(group); advance(group); });
      group.addEventListener("click", function () { if (!group.classList.contains("active")) activate(group); });
    });
    // One answer per page: a second key press while the first is on its way is ignored.
    form.addEventListener("submit", function (event) {
      if (form.dataset.sent) {
        event.preventDefault();
        return;
      }
      form.dataset.sent = "1";
      document.body.classList.add("sending");
    });
  });
})();
