// A <select data-autosubmit> submits its form when changed (filters of the progress and leaderboard pages).
// An event listener in a file, not an onchange attribute: the Content-Security-Policy allows no inline handlers.
document.addEventListener("change", (event) => {
  const select = event.target;
  if (select instanceof HTMLSelectElement && select.hasAttribute("data-autosubmit") && select.form) {
    select.form.submit();
  }
});
