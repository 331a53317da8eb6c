// roost event words: how the run page and the serve page both word parts of an event.
// Each page's script is this file followed by the page's own (run_page.py and
// serve/page.py join them), so a structured reply or a route reads the same in both.
"use strict";
const roostWords = Object.freeze({
  // A structured reply's fields on one line (verdict: revise · notes: …), as roost show has them.
  fields(value) {
    if (value === null || typeof value !== "object" || Array.isArray(value)) {
      return JSON.stringify(value);
    }
    return Object.keys(value).map((key) => key + ": " +
      (typeof value[key] === "string" ? value[key] : JSON.stringify(value[key]))).join(" · ");
  },

  // " · route: verdict = revise": the conditions of the routes to `to` that held, if any.
  route(routes, to) {
    const held = (routes || []).filter((r) => r.held && r.to === to).map((r) => r.when);
    return held.length ? " · route: " + held.join(", ") : "";
  },
});
