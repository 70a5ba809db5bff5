/* The 0–3 buttons of a gold-score form (form[data-scale-form]): the same keys as the experts' scoring page.
 *
 * 0–3      score the focused sub-dimension and move to the next one (after the last: the next empty field)
 * ↓ → / ↑ ← next / previous sub-dimension
 * Enter    on a sub-dimension: submit when every one is scored, else go to the first that is not
 *
 * The page works without this file: each button is a label around a radio input.
 */
(function () {
  "use strict";

  var ROW = "fieldset.subdim";

  function rowsOf(form) { return Array.prototype.slice.call(form.querySelectorAll(ROW)); }
  function scoreOf(row) { var c = row.querySelector("input[type=radio]:checked"); return c ? c.value : null; }
  function refresh(form) { rowsOf(form).forEach(function (r) { r.classList.toggle("scored", scoreOf(r) !== null); }); }
  function firstEmptyField(form) {  // a select or text box still to fill after the scores (the reason, say)
    return Array.prototype.slice.call(form.querySelectorAll("select"))
      .filter(function (el) { return !el.value; })[0] || null;
  }

  function move(form, row, step) {
    var all = rowsOf(form);
    var index = all.indexOf(row) + step;
    if (index < 0) { index = 0; }
    if (index >= all.length) {
      var missing = all.filter(function (r) { return scoreOf(r) === null; })[0];
      var next = missing || firstEmptyField(form) || form.querySelector("button[type=submit]");
      if (next) { next.focus(); }
      return;
    }
    all[index].focus();
  }

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) { return; }
    var row = event.target.closest ? event.target.closest(ROW) : null;
    var form = row ? row.closest("form[data-scale-form]") : null;
    if (!form || event.target !== row) { return; }
    if (/^[0-3]$/.test(event.key)) {
      var input = row.querySelector('input[type=radio][value="' + event.key + '"]');
      if (!input || input.disabled) { return; }
      event.preventDefault();
      input.checked = true;
      input.dispatchEvent(new Event("change", { bubbles: true }));
      move(form, row, 1);
    } else if (event.key === "ArrowDown" || event.key === "ArrowRight") {
      event.preventDefault(); move(form, row, 1);
    } else if (event.key === "ArrowUp" || event.key === "ArrowLeft") {
      event.preventDefault(); move(form, row, -1);
    } else if (event.key === "Enter") {
      event.preventDefault();
      var missing = rowsOf(form).filter(function (r) { return scoreOf(r) === null; })[0];
      if (missing) { missing.focus(); return; }
      var empty = firstEmptyField(form);
      if (empty) { empty.focus(); return; }
      form.requestSubmit();
    }
  });
  document.addEventListener("change", function (event) {
    var form = event.target.closest ? event.target.closest("form[data-scale-form]") : null;
    if (form) { refresh(form); }
  });
  document.querySelectorAll("form[data-scale-form]").forEach(refresh);
})();
