/* Wide tables scroll inside their own box on narrow screens instead of making the whole page scroll
 * sideways. Each table in <main> is wrapped once in a keyboard-reachable, named region (tabindex=0, so
 * keyboard users can scroll it too); tables swapped in by htmx are wrapped as they arrive.
 */
(function () {
  "use strict";

  function nameFor(table) {
    var caption = table.querySelector("caption");
    if (caption && caption.textContent.trim()) { return caption.textContent.trim(); }
    if (table.getAttribute("aria-label")) { return table.getAttribute("aria-label"); }
    var node = table;
    while (node && node !== document.body) {  // the nearest heading before the table
      var prev = node.previousElementSibling;
      while (prev) {
        var heading = /^H[1-6]$/.test(prev.tagName) ? prev : prev.querySelector && prev.querySelector("h1, h2, h3, h4");
        if (heading && heading.textContent.trim()) { return heading.textContent.trim(); }
        prev = prev.previousElementSibling;
      }
      node = node.parentElement;
    }
    return "Table";
  }

  function wrap(root) {
    var scope = root && root.querySelectorAll ? root : document;
    scope.querySelectorAll("main table").forEach(function (table) {
      var parent = table.parentElement;
      if (!parent || parent.classList.contains("table-scroll")) { return; }
      var box = document.createElement("div");
      box.className = "table-scroll";
      box.setAttribute("tabindex", "0");
      box.setAttribute("role", "region");
      box.setAttribute("aria-label", nameFor(table));
      parent.insertBefore(box, table);
      box.appendChild(table);
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", function () { wrap(document); });
  } else {
    wrap(document);
  }
  document.addEventListener("htmx:afterSettle", function (event) { wrap(event.detail.elt || document); });
})();
