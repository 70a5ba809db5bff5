/* Keyboard-first scoring page. No framework: htmx does the requests, this file does keys and time.
 *
 * 0–3      score the focused sub-dimension and move to the next one
 * ↓ → / ↑ ← next / previous sub-dimension (Tab and Shift+Tab work as usual)
 * Enter    submit when every sub-dimension is scored (and a rationale is given when required)
 * Ctrl+Enter submit from the rationale box; Esc leaves it
 * ?        show / hide the list of keys
 *
 * Active time: a second counts when the tab is visible and the expert pressed a key, moved the
 * mouse or scrolled within the last minute. It is sent every 15 s (heartbeat) and with every save;
 * the server caps each report, so the page cannot inflate it.
 */
(function () {
  "use strict";

  var ROW = "fieldset.subdim";
  var IDLE_AFTER_MS = 60000;
  var HEARTBEAT_EVERY_S = 15;
  var pendingSeconds = 0;
  var lastActivity = Date.now();

  function form() { return document.getElementById("score-form"); }
  function rows() { var f = form(); return f ? Array.prototype.slice.call(f.querySelectorAll(ROW)) : []; }
  function isLocked() { var f = form(); return !f || f.dataset.locked === "true"; }
  function rationale() { return document.getElementById("rationale"); }
  function scoreOf(row) {
    var checked = row.querySelector("input[type=radio]:checked");
    return checked ? Number(checked.value) : null;
  }
  function rationaleRequired() {
    return rows().some(function (r) { var s = scoreOf(r); return s === 0 || s === 3; });
  }
  function firstUnscored() {
    return rows().filter(function (r) { return scoreOf(r) === null; })[0] || null;
  }
  function message(text) {
    var el = document.getElementById("js-message");
    if (el) { el.textContent = text || ""; }
  }

  function refreshState() {
    var f = form();
    if (!f) { return; }
    rows().forEach(function (r) { r.classList.toggle("scored", scoreOf(r) !== null); });
    f.classList.toggle("needs-rationale", rationaleRequired());
  }

  function focusInitial() {
    if (isLocked()) { return; }
    var target = firstUnscored() || rows()[0];
    if (target) { target.focus({ preventScroll: false }); }
  }

  function setScore(row, value) {
    var input = row.querySelector('input[type=radio][value="' + value + '"]');
    if (!input || input.disabled) { return; }
    input.checked = true;
    input.dispatchEvent(new Event("change", { bubbles: true }));  // htmx autosaves on change
    refreshState();
    message("");
  }

  function afterLastRow() {
    var missing = firstUnscored();
    if (missing) { missing.focus(); return; }
    var box = rationale();
    if (rationaleRequired() && box && !box.value.trim()) { box.focus(); return; }
    var button = document.getElementById("submit-button");
    if (button) { button.focus(); }
  }

  function move(row, step) {
    var all = rows();
    var index = all.indexOf(row) + step;
    if (index >= all.length) { afterLastRow(); return; }
    all[Math.max(0, index)].focus();
  }

  function takeSeconds() { var s = pendingSeconds; pendingSeconds = 0; return s; }

  function trySubmit() {
    var f = form();
    if (!f || isLocked()) { return; }
    var missing = firstUnscored();
    if (missing) {
      message("Score every sub-dimension first.");
      missing.focus();
      return;
    }
    var box = rationale();
    if (rationaleRequired() && box && !box.value.trim()) {
      message("A rationale is required when any score is 0 or 3.");
      box.focus();
      return;
    }
    f.requestSubmit();
  }

  function toggleHelp() {
    var dialog = document.getElementById("keys-help");
    if (!dialog) { return; }
    if (dialog.open) { dialog.close(); } else { dialog.showModal(); }
  }

  document.addEventListener("keydown", function (event) {
    lastActivity = Date.now();
    var target = event.target;
    var typing = target.matches && target.matches("textarea, input[type=text]");
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      if (form() && form().contains(target)) { event.preventDefault(); trySubmit(); }
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey) { return; }
    if (event.key === "Escape") {
      if (typing) {
        var row = rows()[rows().length - 1];
        if (row) { row.focus(); }
      }
      return;  // an open <dialog> closes itself on Escape
    }
    if (typing) { return; }
    if (event.key === "?") { event.preventDefault(); toggleHelp(); return; }
    if (!form() || isLocked()) { return; }
    var current = target.closest ? target.closest(ROW) : null;
    if (!current && target === document.body && /^[0-3]$/.test(event.key)) {
      current = firstUnscored();  // nothing focused yet: start with the first open sub-dimension
    }
    if (/^[0-3]$/.test(event.key) && current) {
      event.preventDefault();
      setScore(current, event.key);
      move(current, 1);
      return;
    }
    if (current && (event.key === "ArrowDown" || event.key === "ArrowRight")) {
      event.preventDefault(); move(current, 1); return;
    }
    if (current && (event.key === "ArrowUp" || event.key === "ArrowLeft")) {
      event.preventDefault(); move(current, -1); return;
    }
    if (event.key === "Enter" && (current || target === document.body)) {
      event.preventDefault(); trySubmit();
    }
  });

  document.addEventListener("change", function (event) {
    if (event.target.closest && event.target.closest("#score-form")) { refreshState(); }
  });
  ["mousemove", "scroll", "click", "input"].forEach(function (name) {
    document.addEventListener(name, function () { lastActivity = Date.now(); }, { passive: true });
  });

  // Every request from the scoring form carries the active seconds counted since the last one.
  document.body.addEventListener("htmx:configRequest", function (event) {
    if (form() && form().contains(event.detail.elt)) {
      event.detail.parameters.seconds = String(takeSeconds());
    }
  });
  // Signed out meanwhile (session expired): go to the sign-in page instead of swapping it into the form.
  document.body.addEventListener("htmx:beforeSwap", function (event) {
    var xhr = event.detail.xhr;
    if (xhr && xhr.responseURL && xhr.responseURL.indexOf("/accounts/login/") !== -1) {
      event.detail.shouldSwap = false;
      window.location.href = xhr.responseURL;
    }
  });
  // A swapped-in item (after submit or skip) gets focus on its first open sub-dimension.
  document.body.addEventListener("htmx:afterSettle", function (event) {
    if (event.detail.target && event.detail.target.id === "scoring") {
      refreshState();
      focusInitial();
      window.scrollTo(0, 0);
    }
  });
  setInterval(function () {
    if (document.visibilityState === "visible" && Date.now() - lastActivity < IDLE_AFTER_MS && !isLocked()) {
      pendingSeconds += 1;
    }
  }, 1000);
  setInterval(function () {
    var f = form();
    if (!f || isLocked() || pendingSeconds <= 0) { return; }
    var token = f.querySelector("input[name=csrfmiddlewaretoken]");
    var body = new URLSearchParams({ seconds: String(takeSeconds()) });
    fetch(f.dataset.heartbeatUrl, {
      method: "POST", body: body, credentials: "same-origin",
      headers: { "X-CSRFToken": token ? token.value : "" },
    }).catch(function () { /* the next heartbeat will try again with fresh seconds */ });
  }, HEARTBEAT_EVERY_S * 1000);

  refreshState();
  focusInitial();
})();
