/* Delphi allocation form: a live running total per group of weights (100 points each).
 *
 * No framework and no floating point: every value is parsed from its text into tenths of a point
 * (an integer), the same rule the server applies (whole numbers or one decimal, 0–100; "12,5" is 12.5).
 * The page only helps; the server's validation decides, and the form is always sent when submitted.
 */
(function () {
  "use strict";

  var NUMBER = /^([+-]?)(\d*)(?:[.,](\d*))?$/;

  // → {tenths: integer} or {error: message} or {empty: true}
  function parseTenths(text) {
    var raw = (text || "").trim().replace("\u2212", "-");
    if (raw === "") { return { empty: true }; }
    var m = NUMBER.exec(raw);
    if (!m || (m[2] === "" && (m[3] === undefined || m[3] === ""))) {
      return { error: "Not a number: use a whole number or one decimal, e.g. 25 or 12.5." };
    }
    var frac = m[3] === undefined ? "" : m[3];
    var whole = parseInt(m[2] || "0", 10);
    var nonZero = whole !== 0 || /[1-9]/.test(frac);
    if (m[1] === "-" && nonZero) { return { error: "Points cannot be negative." }; }
    if (frac.length > 1) { return { error: "At most one decimal place, e.g. 12.5." }; }
    var tenths = whole * 10 + (frac === "" ? 0 : parseInt(frac, 10));
    if (tenths > 1000) { return { error: "At most 100 points." }; }
    return { tenths: tenths };
  }

  function show(tenths) {
    var sign = tenths < 0 ? "-" : "";
    var abs = Math.abs(tenths);
    var whole = Math.floor(abs / 10);
    var rest = abs % 10;
    return sign + whole + (rest ? "." + rest : "");
  }

  function updateGroup(fieldset) {
    var id = fieldset.getAttribute("data-group");
    var inputs = fieldset.querySelectorAll("input[data-points]");
    var sum = 0;
    var complete = true;
    var invalid = false;
    Array.prototype.forEach.call(inputs, function (input) {
      var hint = document.getElementById("hint-" + input.id);
      var parsed = parseTenths(input.value);
      if (parsed.error) {
        invalid = true;
        complete = false;
        if (hint) { hint.textContent = parsed.error; }
        input.setAttribute("aria-invalid", "true");
        return;
      }
      if (hint) { hint.textContent = ""; }
      if (!input.closest("td").querySelector(".errorlist")) { input.removeAttribute("aria-invalid"); }
      if (parsed.empty) { complete = false; return; }
      sum += parsed.tenths;
    });
    var output = fieldset.querySelector("[data-total-for]");
    var remaining = fieldset.querySelector("[data-remaining-for]");
    var box = fieldset.querySelector("[data-total-box]");
    output.textContent = show(sum);
    var diff = 1000 - sum;
    var note;
    if (invalid) {
      note = "(a value above is not valid)";
    } else if (diff === 0) {
      note = complete ? "✓ exactly 100" : "(fill in every weight; 0 is allowed)";
    } else if (diff > 0) {
      note = show(diff) + " left to allocate";
    } else {
      note = show(-diff) + " too many";
    }
    remaining.textContent = note;
    var ok = !invalid && complete && diff === 0;
    box.classList.toggle("ok", ok);
    box.classList.toggle("off", !ok);
    fieldset.setAttribute("data-total-ok", ok ? "true" : "false");
    return { id: id, ok: ok };
  }

  function updateAll(form) {
    var groups = form.querySelectorAll("fieldset[data-group]");
    var results = Array.prototype.map.call(groups, updateGroup);
    var pending = results.filter(function (r) { return !r.ok; }).length;
    var summary = document.getElementById("js-summary");
    if (summary) {
      summary.textContent = pending ? pending + " of " + results.length + " groups do not total exactly 100 yet."
                                    : "Every group totals exactly 100.";
    }
  }

  function init() {
    var form = document.querySelector("form[data-delphi-form]");
    if (!form) { return; }
    form.addEventListener("input", function (event) {
      if (event.target.matches("input[data-points]")) { updateAll(form); }
    });
    updateAll(form);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
