// roost replay page: steps through a run's events over its graph.
// The transcript is built once; each step only changes the classes of the
// elements that differ between the old and the new step.
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("roost-data").textContent);
  const events = data.events;
  const total = events.length;
  const $ = (id) => document.getElementById(id);
  const slider = $("slider");
  const transcript = $("transcript");
  const svg = document.querySelector("#drawing svg");
  const rows = [];
  let step = -1;
  let lit = [];
  let texts = null;
  let framePending = false;

  // ------------------------------------------------------------------ describing events
  function short(value, limit) {
    const text = typeof value === "string" ? value : JSON.stringify(value);
    return text.length > limit ? text.slice(0, limit - 1) + "…" : text;
  }

  function tokens(usage) {
    if (!usage) return 0;
    return (usage.prompt_tokens || usage.input_tokens || 0) +
      (usage.completion_tokens || usage.output_tokens || 0);
  }

  // [head, body, extra class] of one event, all plain text.
  function describe(e) {
    switch (e.type) {
      case "message": return [e.from + " → " + e.to, e.content, ""];
      case "select":
        return ["director " + e.channel, "chose " + e.chosen + " (" + e.by + ") from " +
          e.candidates.join(", "), ""];
      case "tool_call":
        return [e.agent + " calls a tool", e.name + "(" + JSON.stringify(e.arguments) + ")", ""];
      case "tool_result":
        return [e.agent + " ← " + e.name + (e.is_error ? " (error)" : "") +
          (e.child_run ? " · child run " + e.child_run : ""), e.content, e.is_error ? "failed" : ""];
      case "llm_call": {
        const used = tokens(e.usage);
        let what = e.error ? "failed: " + e.error : used ? used + " tokens" : "no usage reported";
        const sum = data.nodeTokens[e.seq];
        if (used && sum !== undefined && sum !== used) what += " (" + sum + " by " + e.node + " so far)";
        return ["model call by " + e.node, e.provider + " · " + e.model + " · " + what, "minor"];
      }
      case "interrupt":
        return ["paused", "waiting for " + e.from + " (answering " + e.to + ")" +
          (e.reason && e.reason !== "human" ? " · " + e.reason.replace("_", " ") : "") +
          (e.tool_call ? ": " + e.tool_call.name + "(" + JSON.stringify(e.tool_call.arguments) + ")"
            : ""), ""];
      case "resume":
        return ["resumed", e.from + " → " + e.to + (e.feedback ? ": " + e.feedback : " (no feedback)"), ""];
      case "retry": return ["retry", e.from + " → " + e.to, ""];
      case "error": return ["error at " + e.from + " → " + e.to, e.content, ""];
      case "terminate":
        return ["terminated", "at " + e.node + (e.reason ? " (" + e.reason + ")" : ""), ""];
      case "run_start": return ["run " + e.run + " started", "flow " + e.flow.name, "minor"];
      case "flow": return ["flow changed", "from here the run follows " + e.flow.path +
        " (" + e.flow.name + ")", ""];
      default: return [e.type, short(e, 300), "minor"];
    }
  }

  function buildTranscript() {
    const fragment = document.createDocumentFragment();
    events.forEach((e, i) => {
      const [head, body, extra] = describe(e);
      const row = document.createElement("div");
      row.className = "ev future " + e.type + (extra ? " " + extra : "");
      row.id = "ev-" + i;
      row.dataset.index = String(i);
      const h = document.createElement("div");
      h.className = "head";
      const seq = document.createElement("b");
      seq.textContent = "#" + e.seq + " ";
      h.append(seq, document.createTextNode(head));
      const b = document.createElement("div");
      b.className = "body";
      b.textContent = body;
      row.append(h, b);
      rows.push(row);
      fragment.append(row);
    });
    transcript.append(fragment);
    transcript.addEventListener("click", (event) => {
      const row = event.target.closest(".ev");
      if (row) go(Number(row.dataset.index));
    });
  }

  // ------------------------------------------------------------------ the graph
  const edgeLabels = {};
  const nodeVisits = [];

  let finalNode = null;

  function prepareGraph() {
    if (!svg) return;
    if (data.final.node) finalNode = document.getElementById(data.finalNodeId);
    for (const id of Object.keys(data.edgeMessages)) {
      const group = document.getElementById(id);
      const label = group && group.querySelector("text");
      if (label) edgeLabels[id] = { label: label, steps: data.edgeMessages[id] };
    }
    for (const [id, first] of Object.entries(data.firstVisit)) {
      const group = document.getElementById(id);
      if (group) nodeVisits.push([group, first]);
    }
  }

  function upperBound(list, value) {
    let lo = 0, hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (list[mid] <= value) lo = mid + 1; else hi = mid;
    }
    return lo;
  }

  function paintGraph(i) {
    for (const element of lit) element.classList.remove("hl");
    lit = [];
    const [nodes, edge] = data.targets[i];
    for (const id of edge ? [...nodes, edge] : nodes) {
      const element = document.getElementById(id);
      if (element) { element.classList.add("hl"); lit.push(element); }
    }
    for (const [group, first] of nodeVisits) group.classList.toggle("pending", first > i);
    for (const { label, steps } of Object.values(edgeLabels)) {
      const n = upperBound(steps, i);
      label.textContent = n === 0 ? "" : " " + n + (n === 1 ? " msg " : " msgs ");
    }
    const done = i === total - 1;
    for (const id of ["run-state", "run-state-edge"]) {
      const element = document.getElementById(id);
      if (element) element.classList.toggle("hidden", !done);
    }
    if (finalNode) finalNode.classList.toggle("final-" + data.final.status, done);
  }

  // A note beside the node where a tool call or a director's choice happened.
  function callout(i) {
    const old = document.getElementById("callout");
    if (old) old.remove();
    const e = events[i];
    const nodes = data.targets[i][0];
    if (!svg || !["tool_call", "tool_result", "select"].includes(e.type)) return;
    const anchor = document.getElementById(nodes[nodes.length > 1 && e.type === "select" ? 1 : 0]);
    if (!anchor) return;
    const box = anchor.getBBox();
    const ns = "http://www.w3.org/2000/svg";
    const group = document.createElementNS(ns, "g");
    group.id = "callout";
    const text = document.createElementNS(ns, "text");
    text.textContent = e.type === "select" ? "chosen by " + e.channel + " (" + e.by + ")"
      : short(describe(e)[1], 60);
    text.setAttribute("x", String(box.x + 6));
    text.setAttribute("y", String(box.y + box.height + 18));
    const rect = document.createElementNS(ns, "rect");
    group.append(rect, text);
    anchor.parentNode.append(group);
    const size = text.getBBox();
    rect.setAttribute("x", String(size.x - 4));
    rect.setAttribute("y", String(size.y - 3));
    rect.setAttribute("width", String(size.width + 8));
    rect.setAttribute("height", String(size.height + 6));
    rect.setAttribute("rx", "3");
  }

  // ------------------------------------------------------------------ stepping
  function go(target) {
    if (total === 0) return;
    const i = Math.max(0, Math.min(total - 1, target));
    if (i === step) return;
    if (step >= 0) rows[step].classList.remove("current");
    if (i > step) {
      for (let k = Math.max(step + 1, 0); k <= i; k++) rows[k].classList.remove("future");
    } else {
      for (let k = i + 1; k <= step; k++) rows[k].classList.add("future");
    }
    step = i;
    rows[i].classList.add("current");
    slider.value = String(i);
    $("counter").textContent = (i + 1) + " / " + total;
    const [head, body] = describe(events[i]);
    $("now").textContent = "#" + events[i].seq + " " + head + ": " + short(body, 200);
    paintGraph(i);
    if (!framePending) {
      framePending = true;
      requestAnimationFrame(frame);
    }
  }

  // Work that needs layout (scrolling, measuring) runs once per frame, however many steps
  // were taken since the last one: holding an arrow key never queues up layouts.
  function frame() {
    framePending = false;
    rows[step].scrollIntoView({ block: "nearest" });
    callout(step);
    // At full size the graph scrolls: bring what the event touched into sight.
    const fitted = $("drawing").classList.contains("fit");
    if (!fitted && lit.length) lit[lit.length - 1].scrollIntoView({ block: "nearest", inline: "nearest" });
  }

  function find(query) {
    const needle = query.trim().toLowerCase();
    const found = $("found");
    if (!needle || total === 0) { found.textContent = ""; return; }
    if (texts === null) {
      // Messages and what tools and errors said; a resume's feedback is found as its message.
      const searched = new Set(["message", "tool_call", "tool_result", "error"]);
      texts = events.map((e) =>
        searched.has(e.type) ? describe(e).slice(0, 2).join("\n").toLowerCase() : "");
    }
    for (let k = 1; k <= total; k++) {
      const i = (step + k) % total;
      if (texts[i].includes(needle)) {
        for (const row of transcript.querySelectorAll(".match")) row.classList.remove("match");
        rows[i].classList.add("match");
        found.textContent = "event #" + events[i].seq;
        go(i);
        return;
      }
    }
    found.textContent = "no match";
  }

  // Fitted: the graph scales to its pane; otherwise it keeps its natural size and scrolls.
  function fit(fitted) {
    $("drawing").classList.toggle("fit", fitted);
    $("fit").textContent = fitted ? "1:1" : "fit";
    if (!svg) return;
    const box = svg.viewBox.baseVal;
    svg.style.width = fitted || !box ? "" : box.width + "px";
    svg.style.height = fitted || !box ? "" : box.height + "px";
  }

  function wire() {
    $("first").addEventListener("click", () => go(0));
    $("prev").addEventListener("click", () => go(step - 1));
    $("next").addEventListener("click", () => go(step + 1));
    $("last").addEventListener("click", () => go(total - 1));
    slider.addEventListener("input", () => go(Number(slider.value)));
    $("search").addEventListener("submit", (event) => {
      event.preventDefault();
      find($("query").value);
    });
    $("fit").addEventListener("click", () => fit(!$("drawing").classList.contains("fit")));
    document.addEventListener("keydown", (event) => {
      if (event.target instanceof HTMLInputElement && event.target.type !== "range") return;
      const moves = { ArrowRight: step + 1, ArrowLeft: step - 1, Home: 0, End: total - 1 };
      if (event.key in moves) {
        event.preventDefault();
        go(moves[event.key]);
      }
    });
  }

  buildTranscript();
  prepareGraph();
  wire();
  if (svg) svg.setAttribute("preserveAspectRatio", "xMidYMin meet");
  fit(true);
  slider.max = String(Math.max(total - 1, 0));
  if (total === 0) {
    for (const id of ["first", "prev", "next", "last", "slider"]) $(id).disabled = true;
    $("now").textContent = "No run: the flow as written.";
  } else {
    go(0);
  }
})();
