// Small conveniences for the memory inspector; every page reads and works without them.
"use strict";

// Forms marked data-confirm (forget) ask first.
document.addEventListener("submit", (event) => {
  const message = event.target.dataset.confirm;
  if (message && !window.confirm(message)) {
    event.preventDefault();
  }
});

// Changing a filter re-runs the listing at once.
document.addEventListener("change", (event) => {
  const select = event.target;
  if (select.tagName === "SELECT" && select.form && select.form.classList.contains("filters")) {
    select.form.requestSubmit();
  }
});

// "/" jumps to the search box.
document.addEventListener("keydown", (event) => {
  const typing = /^(INPUT|TEXTAREA|SELECT)$/.test(document.activeElement.tagName);
  const box = document.querySelector("input[type=search]");
  if (event.key === "/" && !typing && box) {
    event.preventDefault();
    box.focus();
  }
});
