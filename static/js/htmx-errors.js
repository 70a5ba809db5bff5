/* htmx requests never fail silently. htmx swaps 409/422 answers (see responseHandling in base.html); any
 * other error status, a lost connection or a timeout arrives here and is shown in a banner that screen
 * readers announce (role=alert). Parts of a page that report their own errors (the scoring form) carry
 * data-own-errors and are left to their own script.
 */
(function () {
  "use strict";

  function banner() {
    var el = document.getElementById("request-error");
    if (el) { return el; }
    el = document.createElement("div");
    el.id = "request-error";
    el.className = "request-error";
    el.setAttribute("role", "alert");
    el.hidden = true;
    var text = document.createElement("span");
    text.className = "request-error-text";
    var close = document.createElement("button");
    close.type = "button";
    close.className = "secondary";
    close.textContent = "Dismiss";
    close.addEventListener("click", function () { el.hidden = true; });
    el.appendChild(text);
    el.appendChild(close);
    var main = document.querySelector("main") || document.body;
    main.insertBefore(el, main.firstChild);
    return el;
  }

  function show(text) {
    var el = banner();
    el.querySelector(".request-error-text").textContent = text;
    el.hidden = false;
    el.scrollIntoView({ block: "nearest" });
  }

  function ownsErrors(event) {
    var elt = event.detail && event.detail.elt;
    return !!(elt && elt.closest && elt.closest("[data-own-errors]"));
  }

  document.addEventListener("htmx:responseError", function (event) {
    if (ownsErrors(event)) { return; }
    var status = event.detail.xhr ? event.detail.xhr.status : 0;
    var text = status === 403 ? "Not allowed (403): you may have been signed out. Reload the page and sign in again."
      : status === 404 ? "Not found (404): this may have been removed meanwhile. Reload the page."
      : status >= 500 ? "The server failed (" + status + "). Nothing was changed by this request; try again."
      : "The request was refused (" + status + "). Reload the page and try again.";
    show(text);
  });
  document.addEventListener("htmx:sendError", function (event) {
    if (ownsErrors(event)) { return; }
    show("No connection to the server: nothing was sent. Check the connection and try again.");
  });
  document.addEventListener("htmx:timeout", function (event) {
    if (ownsErrors(event)) { return; }
    show("The server took too long to answer. Try again.");
  });
  document.addEventListener("htmx:beforeRequest", function () {
    var el = document.getElementById("request-error");
    if (el) { el.hidden = true; }
  });
})();
