/* Keyboard-first scoring page. No framework: htmx does the requests, this file does keys and time.
 *
 * 0–3      score the focused sub-dimension and move to the next one
 * ↓ → / ↑ ← next / previous sub-dimension (Tab and Shift+Tab work as usual)
 * Enter    submit when every sub-dimension is scored (and a rationale is given when required); in the
 *          rationale box too, once the form is complete (Shift+Enter is a new line there)
 * Ctrl+Enter submit from the rationale box; Esc leaves it
 * U        undo the submission just made (while "Undo" is offered)
 * X        outside my expertise (asks first);  F  flag the item as broken (and go to its note)
 * ?        show / hide the list of keys
 *
 * Nothing fails silently: the line at the top of the panel says "Saving…", "Draft saved at hh:mm" or
 * "Not saved — Retry"; a failed submit says so (role=alert) and keeps what was entered; after a
 * validation error the first marked field gets focus.
 *
 * Nothing typed is lost: the rationale autosaves while typing (htmx, debounced) and when the box is
 * left; unsaved changes are sent with navigator.sendBeacon when the page is hidden (the CSRF token
 * travels in the form body). If a save fails, the entries are kept in localStorage for this item; when the page
 * is hidden with unsaved changes they are also kept in sessionStorage (this tab only), because a reload can
 * reach the server before its own beacon. Either copy is put back (and saved) when the page is opened again
 * if it is newer than the server's copy, and both are removed as soon as a save succeeds or the server's copy
 * is found equal or newer. "Newer": a kept copy records the server's save time of the copy it started from
 * (`base`, the page's data-saved-at, then each autosave's); when the server still has that copy, the kept one
 * is newer. When the server has saved since (another tab or device, or a save still in flight when the page
 * was left), the two times are compared on the server's clock (the page carries the server's time when it was
 * rendered, so a wrong clock in the browser does not matter).
 *
 * Exactly once: every write (autosave, submit, skip, undo, the closing beacon) carries an idempotency key made for
 * that attempt (header Idempotency-Key; the beacon's form field idempotency_key). An attempt that got no answer
 * (no connection, a timeout, 502/503/504: the server may have stored it and lost only the answer) is sent again
 * with the same key: autosaves and submits by themselves after 1, 2 and 4 s, any write when the expert retries it
 * unchanged. The server answers a key it has stored from its receipt (200), so a retried submission is never met
 * by "already submitted" and a retried autosave never writes over a newer one. Any real answer ends the attempt;
 * the next write gets a new key.
 *
 * The address bar follows the item on the page: after a submit, skip or undo swaps another item (or "All
 * done") in, its URL replaces the current one (history.replaceState), so a reload shows what was on screen.
 *
 * Active time: a second counts when the tab is visible and the expert pressed a key, moved the
 * mouse or scrolled within the last minute. It is sent every 15 s (heartbeat) and with every save;
 * the server caps each report, so the page cannot inflate it.
 */
(function () {
  "use strict";

  var ROW = "fieldset.subdim";
  // The page's messages in the interface language: the template writes them, translated, into
  // <script type="application/json" id="scoring-messages">; English is the fallback. {name} is replaced (not
  // %(name)s: a template's _("…") literal doubles its % signs).
  var MESSAGES = (function () {
    var el = document.getElementById("scoring-messages");
    try { return el ? JSON.parse(el.textContent) : {}; } catch (e) { return {}; }
  }());
  function t(key, english, values) {
    var text = MESSAGES[key] || english;
    Object.keys(values || {}).forEach(function (name) { text = text.split("{" + name + "}").join(values[name]); });
    return text;
  }
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
  function message(text, focus) {
    var el = document.getElementById("js-message");
    if (!el) { return; }
    el.textContent = text || "";
    if (text) {
      el.scrollIntoView({ block: "nearest" });
      if (focus) { el.focus(); }
    }
  }
  function autosaver() { return document.getElementById("autosave"); }
  function itemId() { var f = form(); return f ? f.dataset.item : ""; }

  // --- Save state ----------------------------------------------------------------------------------
  var edits = 0;       // changes made on this page since it was loaded or swapped in
  var inFlight = 0;    // the value of `edits` the running autosave carries
  var saved = 0;       // the value of `edits` the server has confirmed

  function hasUnsaved() { return edits > saved; }

  function setStatus(state, text, retry) {
    var el = document.getElementById("save-status");
    if (!el) { return; }
    el.textContent = "";
    var span = document.createElement("span");
    span.dataset.state = state;
    if (state === "error") { span.className = "bad"; }
    span.textContent = text;
    el.appendChild(span);
    if (retry) {
      var button = document.createElement("button");
      button.type = "button";
      button.className = "secondary";
      button.id = "retry-save";
      button.textContent = t("retry", "Retry");
      button.addEventListener("click", function () { saveNow(); });
      el.appendChild(button);
    }
  }

  function localTimes() {  // the server says when it saved; show it in the expert's own clock
    var el = document.querySelector("#save-status time[datetime]");
    if (!el) { return; }
    var when = new Date(el.getAttribute("datetime"));
    if (!isNaN(when.getTime())) {
      el.textContent = when.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", hour12: false });
    }
  }

  function saveNow() {
    var el = autosaver();
    if (el && window.htmx) { window.htmx.trigger(el, "fb:save"); }
  }

  // --- Exactly-once writes: one idempotency key per attempt, the same key for its retries ---------------------
  var RETRY_DELAYS_MS = [1000, 2000, 4000];
  var attempts = {};  // kind ("draft", "submit", "skip", "undo") → { key, signature, tries }

  function newKey() {
    if (window.crypto && window.crypto.randomUUID) { return window.crypto.randomUUID(); }
    var bytes = new Uint8Array(16);  // randomUUID needs a secure context; getRandomValues does not
    window.crypto.getRandomValues(bytes);
    return Array.prototype.map.call(bytes, function (b) { return (b + 256).toString(16).slice(1); }).join("");
  }
  // What the attempt asks for: where it goes and what is entered (not the seconds, the token or the key itself).
  function signature(path, formData) {
    var pairs = [];
    if (formData && formData.forEach) {
      formData.forEach(function (value, name) {
        if (name !== "seconds" && name !== "csrfmiddlewaretoken" && name !== "idempotency_key") {
          pairs.push([name, String(value)]);
        }
      });
    }
    pairs.sort(function (a, b) { return a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0); });
    return path + "\n" + JSON.stringify(pairs);
  }
  function keyFor(kind, sig) {  // the open attempt's key when it asks the same again, else a new attempt
    var open = attempts[kind];
    if (open && open.signature === sig) { return open.key; }
    attempts[kind] = { key: newKey(), signature: sig, tries: 0 };
    return attempts[kind].key;
  }
  function writeKind(elt) {
    if (!elt) { return ""; }
    if (elt === autosaver()) { return "draft"; }
    if (elt === form()) { return "submit"; }
    if (elt.id === "skip-button") { return "skip"; }
    if (elt.closest && elt.closest(".undo-form")) { return "undo"; }
    return "";
  }
  function attemptOf(event) {  // the kind of write a finished request was, from the key it carried ("" if none)
    var config = event.detail.requestConfig;
    var key = config && config.headers ? config.headers["Idempotency-Key"] : "";
    var found = "";
    Object.keys(attempts).forEach(function (kind) { if (key && attempts[kind].key === key) { found = kind; } });
    return found;
  }
  function unanswered(status) { return status === 0 || status === 502 || status === 503 || status === 504; }
  // Send an unanswered autosave or submit again (same entries, so the same key), after the next delay; false when
  // its retries are used up or the page has moved on.
  function retryLater(kind) {
    var open = attempts[kind];
    if (!open || open.tries >= RETRY_DELAYS_MS.length) { return false; }
    var item = itemId();
    window.setTimeout(function () {
      if (attempts[kind] !== open || itemId() !== item || isLocked()) { return; }
      if (kind === "draft") { saveNow(); } else if (form()) { form().requestSubmit(); }
    }, RETRY_DELAYS_MS[open.tries]);
    open.tries += 1;
    return true;
  }

  // --- Entries kept in this browser when a save fails --------------------------------------------------
  function storeKey() { return "faithbench:draft:" + itemId(); }

  // The server's clock minus the browser's, from the time the server wrote into the page (0 without it).
  var clockOffset = 0;
  var knownSavedAt = 0;  // the server's save time of the newest copy this page knows the server has
  function readClock() {  // once per page load: the moment the response began is when the server wrote its time
    var f = form();
    var serverNow = f ? Number(f.dataset.serverNow) : NaN;
    if (isNaN(serverNow) || serverNow <= 0) { return; }
    var nav = window.performance && performance.getEntriesByType ? performance.getEntriesByType("navigation")[0] : null;
    var received = nav && nav.responseStart ? performance.timeOrigin + nav.responseStart : Date.now();
    clockOffset = serverNow - received;
  }
  function serverTime() { return Date.now() + clockOffset; }
  function serverSavedAt() {  // when the server's copy shown on the page was last written (0: never)
    var f = form();
    var at = f ? Number(f.dataset.savedAt) : NaN;
    return isNaN(at) ? 0 : at;
  }

  function entries() {
    var f = form();
    var data = { scores: {}, rationale: "", broken_note: "", flagged_broken: false, at: serverTime(),
                 base: knownSavedAt };
    if (!f) { return data; }
    f.querySelectorAll("input[type=radio]:checked").forEach(function (input) { data.scores[input.name] = input.value; });
    data.rationale = (f.querySelector("[name=rationale]") || {}).value || "";
    data.broken_note = (f.querySelector("[name=broken_note]") || {}).value || "";
    data.flagged_broken = !!(f.querySelector("[name=flagged_broken]") || {}).checked;
    return data;
  }

  function keepLocally(store) {  // store: window.localStorage (a failed save) or window.sessionStorage (page hide)
    if (!itemId() || isLocked()) { return; }
    try { (store || window.localStorage).setItem(storeKey(), JSON.stringify(entries())); } catch (e) { /* full or off */ }
  }

  function forgetLocally() {
    if (!itemId()) { return; }
    try { window.localStorage.removeItem(storeKey()); } catch (e) { /* storage off */ }
    try { window.sessionStorage.removeItem(storeKey()); } catch (e) { /* storage off */ }
  }

  function keptCopy() {  // the newer of the two kept copies, or null
    var newest = null;
    ["localStorage", "sessionStorage"].forEach(function (name) {
      var copy = null;
      try { copy = JSON.parse(window[name].getItem(storeKey()) || "null"); } catch (e) { copy = null; }
      if (copy && typeof copy === "object" && (!newest || (copy.at || 0) > (newest.at || 0))) { newest = copy; }
    });
    return newest;
  }

  function restoreLocally() {
    if (!itemId()) { return; }
    if (isLocked()) { forgetLocally(); return; }
    var kept = keptCopy();
    if (!kept) { forgetLocally(); return; }
    var now = entries();
    var same = kept.rationale === now.rationale && kept.broken_note === now.broken_note &&
      kept.flagged_broken === now.flagged_broken && JSON.stringify(kept.scores) === JSON.stringify(now.scores);
    if (same) { forgetLocally(); return; }
    // The server saved after the copy these entries started from, and after they were kept (another tab or
    // device): the server's copy wins.
    var server = serverSavedAt();
    if (server > (kept.base || 0) && server > (kept.at || 0)) { forgetLocally(); return; }
    var f = form();
    Object.keys(kept.scores || {}).forEach(function (name) {
      var input = f.querySelector('input[type=radio][name="' + name + '"][value="' + kept.scores[name] + '"]');
      if (input) { input.checked = true; }
    });
    if (f.querySelector("[name=rationale]")) { f.querySelector("[name=rationale]").value = kept.rationale || ""; }
    if (f.querySelector("[name=broken_note]")) { f.querySelector("[name=broken_note]").value = kept.broken_note || ""; }
    if (f.querySelector("[name=flagged_broken]")) { f.querySelector("[name=flagged_broken]").checked = !!kept.flagged_broken; }
    refreshState();
    edits += 1;
    setStatus("restored", t("restored", "Restored what you entered here before it could be saved; saving…"));
    saveNow();
  }

  // Leaving the page (closing the tab, following a link, switching apps on a phone): send what is unsaved.
  function flush() {
    var f = form();
    if (!f || isLocked() || !hasUnsaved()) { return; }
    var body = new FormData(f);  // includes csrfmiddlewaretoken: a beacon cannot set the X-CSRFToken header
    body.set("seconds", String(takeSeconds()));
    // The same key as an autosave of these entries still waiting for its answer: whichever arrives, it is stored once.
    body.set("idempotency_key", keyFor("draft", signature(new URL(f.dataset.draftUrl, window.location.href).pathname, body)));
    // Kept in this tab as well: a reload can reach the server before its own beacon does, and would then
    // show (and let the expert edit) older text. The next load keeps the newer of the server's and this copy.
    if (navigator.sendBeacon && f.dataset.draftUrl && navigator.sendBeacon(f.dataset.draftUrl, body)) {
      keepLocally(window.sessionStorage);
      saved = edits;
    } else {
      keepLocally();  // the browser would not queue the beacon: keep the entries for the next visit
    }
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

  function readyToSubmit() {  // every sub-dimension scored, and a rationale where one is required
    if (firstUnscored()) { return false; }
    var box = rationale();
    return !(rationaleRequired() && box && !box.value.trim());
  }

  function trySubmit() {
    var f = form();
    if (!f || isLocked()) { return; }
    var missing = firstUnscored();
    if (missing) {
      message(t("score_all", "Score every sub-dimension first."));
      missing.focus();
      return;
    }
    var box = rationale();
    if (rationaleRequired() && box && !box.value.trim()) {
      message(t("rationale_required", "A rationale is required when any score is 0 or 3."));
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
    // Enter in the rationale box submits once the form is complete; Shift+Enter (or an incomplete form) is a
    // new line. IME composition (isComposing) keeps its Enter.
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing && target === rationale() &&
        !isLocked() && readyToSubmit()) {
      event.preventDefault(); trySubmit(); return;
    }
    if (event.key === "Escape") {
      if (typing) {
        var row = rows()[rows().length - 1];
        if (row) { row.focus(); }
      }
      return;  // an open <dialog> closes itself on Escape
    }
    if (typing) { return; }
    if (event.key === "?") { event.preventDefault(); toggleHelp(); return; }
    if ((event.key === "u" || event.key === "U") && document.getElementById("undo-button")) {
      event.preventDefault(); document.getElementById("undo-button").click(); return;
    }
    if (!form() || isLocked()) { return; }
    if ((event.key === "x" || event.key === "X") && document.getElementById("skip-button")) {
      event.preventDefault(); document.getElementById("skip-button").click(); return;
    }
    if (event.key === "f" || event.key === "F") {
      var flag = form().querySelector("[name=flagged_broken]");
      if (flag && !flag.disabled) {
        event.preventDefault();
        flag.checked = !flag.checked;
        flag.dispatchEvent(new Event("change", { bubbles: true }));  // autosaves
        if (flag.checked && document.getElementById("broken_note")) { document.getElementById("broken_note").focus(); }
      }
      return;
    }
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
    if (event.target.closest && event.target.closest("#score-form")) { edits += 1; refreshState(); }
  });
  document.addEventListener("input", function (event) {
    if (event.target.closest && event.target.closest("#score-form") && event.target.type !== "radio") { edits += 1; }
  });
  window.addEventListener("pagehide", flush);
  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "hidden") { flush(); }
  });

  function isAutosave(event) { var el = autosaver(); return !!el && event.detail.elt === el; }
  function isSubmit(event) {
    var f = form();
    return !!f && f.contains(event.detail.elt) && !isAutosave(event);
  }

  // A submit (or skip) waits for a running autosave instead of racing it on the server: the two would write
  // the same rows at once (on SQLite, "database is locked"). htmx:confirm lets us hold the request back;
  // issueRequest(false) sends it later and still asks hx-confirm's question.
  var autosaveRunning = false;
  var waitingForAutosave = [];
  document.body.addEventListener("htmx:confirm", function (event) {
    if (!autosaveRunning || !isSubmit(event)) { return; }
    event.preventDefault();
    waitingForAutosave.push(function () { event.detail.issueRequest(false); });
  });
  function autosaveEnded() {
    if (autosaveRunning) { return; }  // htmx started the next queued autosave: wait for that one too
    var waiting = waitingForAutosave;
    waitingForAutosave = [];
    waiting.slice(-1).forEach(function (send) { send(); });  // a double Enter sends once
  }

  document.body.addEventListener("htmx:beforeRequest", function (event) {
    if (isAutosave(event)) {
      autosaveRunning = true;
      inFlight = edits;
      setStatus("saving", t("saving", "Saving…"));
    } else if (isSubmit(event)) {
      message("");
      var button = document.getElementById("submit-button");
      if (button) { button.setAttribute("aria-busy", "true"); }
      setStatus("saving", t("submitting", "Submitting…"));
    }
  });
  document.body.addEventListener("htmx:afterRequest", function (event) {
    if (!isAutosave(event)) { return; }
    autosaveRunning = false;
    window.setTimeout(autosaveEnded, 0);  // after htmx has started any queued autosave
    var status = event.detail.xhr ? event.detail.xhr.status : 0;
    if (event.detail.successful && status >= 200 && status < 300) {
      saved = Math.max(saved, inFlight);
      var confirmed = document.querySelector("#save-status [data-saved-at]");
      if (confirmed && Number(confirmed.dataset.savedAt) > knownSavedAt) { knownSavedAt = Number(confirmed.dataset.savedAt); }
      if (!hasUnsaved()) { forgetLocally(); }
      localTimes();
    } else if (status === 422) {
      keepLocally();  // the server said why (swapped into the status line); keep the entries meanwhile
    }
  });
  // Errors htmx does not swap (network failure, 5xx, 403, 404…): say so, keep the entries, offer a retry.
  function failed(event, reason) {
    var status = event.detail.xhr ? event.detail.xhr.status : 0;
    var kind = attemptOf(event);
    var retrying = unanswered(status) && (kind === "draft" || kind === "submit") && retryLater(kind);
    if (isAutosave(event)) {
      keepLocally();
      setStatus("error", retrying ?
        t("not_saved_retrying", "Not saved — {reason}. Your entries are kept in this browser. Trying again…", { reason: reason }) :
        t("not_saved", "Not saved — {reason}. Your entries are kept in this browser.", { reason: reason }), true);
    } else if (retrying) {  // the submission may have been stored: sent again with its key, it is stored once
      setStatus("saving", t("sending_again", "No answer from the server yet — sending again…"));
    } else if (isSubmit(event)) {
      var button = document.getElementById("submit-button");
      if (button) { button.removeAttribute("aria-busy"); }
      var submitting = event.detail.elt === form();
      setStatus("error", submitting ? t("submit_failed", "Submitting failed.") : t("send_failed", "Sending failed."),
        false);  // the reason is in the alert just above
      message(submitting ?
        t("submit_failed_why", "Submitting failed ({reason}). Nothing is lost: your entries are still here — try again.", { reason: reason }) :
        t("send_failed_why", "Sending failed ({reason}). Nothing is lost: your entries are still here — try again.", { reason: reason }), true);
    }
  }
  document.body.addEventListener("htmx:responseError", function (event) {
    var xhr = event.detail.xhr;
    var reason = xhr && xhr.status === 403 ? t("signed_out", "you may have been signed out (403)") :
      (xhr ? t("server_answered", "the server answered {status}", { status: String(xhr.status) }) :
        t("server_error", "the server answered an error"));
    failed(event, reason);
  });
  document.body.addEventListener("htmx:sendError", function (event) { failed(event, t("no_connection", "no connection to the server")); });
  document.body.addEventListener("htmx:timeout", function (event) { failed(event, t("too_long", "the server took too long")); });
  ["mousemove", "scroll", "click", "input"].forEach(function (name) {
    document.addEventListener(name, function () { lastActivity = Date.now(); }, { passive: true });
  });

  // Every request from the scoring form carries the active seconds counted since the last one.
  document.body.addEventListener("htmx:configRequest", function (event) {
    if (form() && form().contains(event.detail.elt)) {
      event.detail.parameters.seconds = String(takeSeconds());
    }
    var kind = writeKind(event.detail.elt);
    if (kind) {
      var path = new URL(event.detail.path, window.location.href).pathname;
      event.detail.headers["Idempotency-Key"] = keyFor(kind, signature(path, event.detail.formData));
    }
  });
  // A real answer (anything but no answer or a gateway's 502/503/504) ends the attempt: the next write gets a new key.
  document.body.addEventListener("htmx:afterRequest", function (event) {
    var kind = attemptOf(event);  // by its key: a submit's form has been swapped out by now
    var status = event.detail.xhr ? event.detail.xhr.status : 0;
    if (kind && !unanswered(status)) { delete attempts[kind]; }
  });
  // Signed out meanwhile (session expired): go to the sign-in page instead of swapping it into the form.
  document.body.addEventListener("htmx:beforeSwap", function (event) {
    var xhr = event.detail.xhr;
    if (xhr && xhr.responseURL && xhr.responseURL.indexOf("/accounts/login/") !== -1) {
      event.detail.shouldSwap = false;
      window.location.href = xhr.responseURL;
    }
  });
  function followUrl() {  // the address bar names the item on the page (see the header)
    var section = document.getElementById("scoring");
    var url = section ? section.dataset.url : "";
    if (url && window.location.pathname !== url) { window.history.replaceState(window.history.state, "", url); }
  }

  // A swapped-in item (after submit, skip or undo) gets focus on its first open sub-dimension; after a
  // validation error, on the first marked field (its message is read with it: aria-describedby).
  document.body.addEventListener("htmx:afterSettle", function (event) {
    if (event.detail.target && event.detail.target.id === "scoring") {
      followUrl();
      knownSavedAt = serverSavedAt();
      edits = 0; inFlight = 0; saved = 0;
      refreshState();
      window.scrollTo(0, 0);
      if (!focusFirstError()) { focusInitial(); }
      restoreLocally();
      localTimes();
    }
  });

  function focusFirstError() {
    var f = form();
    if (!f) { return false; }
    var field = f.querySelector("[aria-invalid=true]");
    var target = field || document.getElementById("form-errors");
    if (!target) { return false; }
    if (!target.hasAttribute("tabindex") && !/^(TEXTAREA|INPUT|SELECT|BUTTON)$/.test(target.tagName)) {
      target.setAttribute("tabindex", "-1");
    }
    target.focus({ preventScroll: true });
    target.scrollIntoView({ block: "center" });
    return true;
  }
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

  readClock();
  knownSavedAt = serverSavedAt();
  followUrl();
  refreshState();
  if (!focusFirstError()) { focusInitial(); }
  localTimes();
  // After htmx has set up the page (its own DOMContentLoaded listener was added first), so that the
  // restored entries can be saved through the autosave element.
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", restoreLocally);
  } else {
    restoreLocally();
  }
})();
