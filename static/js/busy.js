/* Loading states. An action still running after 300 ms says so: its button gets the class "is-busy" (a small
 * spinner, see base.html) and aria-busy, and a polite status line reads "Working…" to screen readers. This
 * covers every form that submits a page (draws, reports, imports, Delphi, sign-in …) and every htmx request
 * made by a form or a button; requests without either (autosaves, progress polling) show their own state.
 * A submitted page keeps its button busy (and disabled against a second click) until the next page arrives;
 * coming back to it with the browser's Back button resets it. Forms that download a file carry data-no-busy.
 */
(function () {
  "use strict";

  var DELAY_MS = 300;

  function status() {
    var el = document.getElementById("busy-status");
    if (el) { return el; }
    el = document.createElement("p");
    el.id = "busy-status";
    el.className = "visually-hidden";
    el.setAttribute("role", "status");
    el.setAttribute("aria-live", "polite");
    document.body.appendChild(el);
    return el;
  }

  function busy(button) {
    button.classList.add("is-busy");
    button.setAttribute("aria-busy", "true");
    status().textContent = "Working…";
  }

  function idle(button) {
    button.classList.remove("is-busy");
    button.removeAttribute("aria-busy");
    if (button.dataset.busyDisabled) { button.disabled = false; delete button.dataset.busyDisabled; }
    var el = document.getElementById("busy-status");
    if (el && !document.querySelector(".is-busy")) { el.textContent = ""; }
  }

  function submitButton(form, submitter) {
    return submitter || form.querySelector("button[type=submit], button:not([type]), input[type=submit]");
  }

  function isHtmx(el) {
    return ["hx-post", "hx-get", "hx-put", "hx-patch", "hx-delete"].some(function (name) { return el.hasAttribute(name); });
  }

  // A form that loads a new page.
  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!(form instanceof HTMLFormElement) || form.hasAttribute("data-no-busy")) { return; }
    window.setTimeout(function () {  // after every other submit handler had its say
      if (event.defaultPrevented || isHtmx(form)) { return; }
      var button = submitButton(form, event.submitter);
      if (!button) { return; }
      window.setTimeout(function () {
        busy(button);
        if (!button.disabled) { button.disabled = true; button.dataset.busyDisabled = "1"; }
      }, DELAY_MS);
    }, 0);
  });

  // htmx requests made by a form or a button.
  var timers = new WeakMap();
  function requester(event) {
    var elt = event.detail && event.detail.elt;
    if (!elt || elt.hidden) { return null; }
    if (elt instanceof HTMLButtonElement) { return elt; }
    if (elt instanceof HTMLFormElement) { return submitButton(elt, event.detail.requestConfig && event.detail.requestConfig.submitter); }
    return null;
  }
  document.body.addEventListener("htmx:beforeRequest", function (event) {
    var button = requester(event);
    if (!button) { return; }
    timers.set(event.detail.xhr, { button: button, timer: window.setTimeout(function () { busy(button); }, DELAY_MS) });
  });
  document.body.addEventListener("htmx:afterRequest", function (event) {
    var entry = timers.get(event.detail.xhr);
    if (!entry) { return; }
    window.clearTimeout(entry.timer);
    idle(entry.button);
  });

  window.addEventListener("pageshow", function (event) {
    if (event.persisted) { document.querySelectorAll(".is-busy").forEach(idle); }
  });
})();
