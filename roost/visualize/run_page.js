// roost run page: steps through a run's events over its graph.
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

  const { fields, route } = roostWords; // event_words.js, before this script

  // [head, body, extra class] of one event, all plain text.
  function describe(e) {
    switch (e.type) {
      case "message":
        return [e.from + " → " + e.to, e.data !== undefined ? fields(e.data) : e.content, ""];
      case "select":
        return ["director " + e.channel, "chose " + e.chosen + " (" + e.by + ") from " +
          e.candidates.join(", ") + route(e.routes, e.chosen), ""];
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
        return ["terminated", "at " + e.node + (e.reason ? " (" + e.reason + ")" : "") +
          route(e.routes, "TERMINATE"), ""];
      case "run_start": return ["run " + e.run + " started", "flow " + e.flow.name, "minor"];
      case "compact":
        return ["⇲ " + e.node + "'s view of its talk with " + e.to + " compressed",
          e.stage + " through #" + e.through + ": ~" + e.tokens_before + " → ~" + e.tokens_after +
          " tokens" + (e.summary ? " · summary: " + e.summary : ""), "compaction"];
      case "budget": return ["budget", data.budgetWords[e.seq] || short(e, 300), "budget"];
      case "flow": return ["flow changed", "from here the run follows " + e.flow.path +
        " (" + e.flow.name + ")", ""];
      default: return [e.type, short(e, 300), "minor"];
    }
  }

  // Each compaction is a tick on the timeline (the slider's list), so long runs show where
  // a view was compressed; the ticks are also listed for assistive technology.
  function markCompactions() {
    const marks = $("marks");
    const ticks = document.createElement("datalist");
    ticks.id = "compactions";
    events.forEach((e, i) => {
      if (e.type !== "compact") return;
      const option = document.createElement("option");
      option.value = String(i);
      option.label = "#" + e.seq + " " + e.stage + " of " + e.node;
      ticks.append(option);
      const mark = document.createElement("button");
      mark.type = "button";
      mark.className = "mark";
      mark.title = "#" + e.seq + ": " + e.node + "'s view compressed (" + e.stage + ")";
      mark.style.left = (total > 1 ? (100 * i) / (total - 1) : 0) + "%";
      mark.addEventListener("click", () => go(i));
      marks.append(mark);
    });
    if (ticks.children.length) {
      document.body.append(ticks);
      slider.setAttribute("list", ticks.id);
    }
  }

  // A message's images, from the page's own data (data: URLs by hash; the page loads nothing).
  function imageStrip(images) {
    const strip = document.createElement("div");
    strip.className = "images";
    for (const image of images) {
      const img = document.createElement("img");
      const source = (data.images || {})[image.hash];
      img.alt = (image.name || image.media_type) + (source ? "" : " (not in the store)");
      img.title = (image.name ? image.name + " · " : "") + image.hash;
      img.dataset.hash = image.hash;
      if (source) img.src = source;
      strip.append(img);
    }
    return strip;
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
      if (e.images && e.images.length) row.append(imageStrip(e.images));
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
  const counters = [];

  let finalNode = null;

  // The rows a run changes (tokens, model calls, tool calls, choices) are drawn with the
  // run's final values; each is found by that text, then shows its value at every step.
  function prepareCounters() {
    for (const [id, node] of Object.entries(data.counters)) {
      const group = document.getElementById(id);
      if (!group) continue;
      const texts = [...group.querySelectorAll("text")];
      const final = node.rows[node.rows.length - 1];
      const slots = [];
      let from = 0;
      final.forEach((row, slot) => {
        if (!row) return;
        const found = texts.findIndex((t, k) => k >= from && t.textContent.trim() === row.trim());
        if (found < 0) return;
        from = found + 1;
        const text = texts[found];
        // Centred on the cell the final value was laid out in, whatever the value's length.
        const box = text.getBBox();
        text.setAttribute("text-anchor", "middle");
        text.setAttribute("x", String(box.x + box.width / 2));
        slots.push([slot, text]);
      });
      if (slots.length) counters.push({ node: node, slots: slots });
    }
  }

  function paintCounters(i) {
    for (const { node, slots } of counters) {
      const n = upperBound(node.at, i);
      const rows = n === 0 ? node.start : node.rows[n - 1];
      for (const [slot, text] of slots) {
        if (text.textContent !== rows[slot]) text.textContent = rows[slot];  // no needless layout
      }
    }
  }

  function prepareGraph() {
    if (!svg) return;
    prepareCounters();
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
    paintCounters(i);
    const done = i === total - 1;
    $("run-state").classList.toggle("hidden", !done);
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
    // A graph bigger than its pane scrolls: bring what the event touched into sight.
    const drawing = $("drawing");
    const overflows = drawing.scrollWidth > drawing.clientWidth ||
      drawing.scrollHeight > drawing.clientHeight;
    if (overflows && lit.length) lit[lit.length - 1].scrollIntoView({ block: "nearest", inline: "nearest" });
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

  // ------------------------------------------------------------------ fitting the graph
  // "fit" draws the graph as large as the page allows, but its smallest text never under
  // LEGIBLE_PX (the pane scrolls instead) and its largest never over LARGEST_PX.
  const LEGIBLE_PX = 11;
  const LARGEST_PX = 24;
  // Side by side, the transcript keeps at least this much of the page, and this many pixels.
  const TRANSCRIPT_SHARE = 0.38;
  const TRANSCRIPT_MIN_PX = 300;
  const SIDE_MIN_PX = 260;
  let fonts = null;

  function fontRange() {
    if (fonts === null) {
      const sizes = [...svg.querySelectorAll("text")]
        .map((t) => parseFloat(t.getAttribute("font-size")))
        .filter((size) => size > 0);
      fonts = sizes.length ? [Math.min(...sizes), Math.max(...sizes)] : [14, 14];
    }
    return fonts;
  }

  function legible(scale) {
    const [smallest, largest] = fontRange();
    return Math.max(LEGIBLE_PX / smallest, Math.min(scale, LARGEST_PX / largest));
  }

  const clamp = (value, low, high) => Math.max(low, Math.min(value, Math.max(low, high)));

  // How large the drawing is in a graph pane of width x height, and how much of it it fills.
  function candidate(box, width, height, stacked) {
    const drawing = $("drawing");
    const padX = drawing.offsetWidth - drawing.clientWidth + 16;
    const room = { w: width - padX, h: height - $("now").offsetHeight - 16 };
    const scale = legible(Math.min(room.w / box.width, room.h / box.height));
    const filled = Math.min(1, box.width * scale / room.w) * Math.min(1, box.height * scale / room.h);
    return { width: width, room: room.w, height: height, scale: scale, filled: filled, stacked: stacked };
  }

  // Side by side, the graph pane is as wide as the drawing wants at the page's height;
  // stacked (for a drawing much wider than tall), it sits above the transcript. The
  // arrangement that draws the graph larger wins; at about the same size, the one that
  // leaves less of its pane empty.
  function arrange(box) {
    const area = document.querySelector("main").getBoundingClientRect();
    const most = area.width - Math.max(TRANSCRIPT_MIN_PX, area.width * TRANSCRIPT_SHARE);
    const widest = candidate(box, most, area.height, false);
    const wanted = box.width * widest.scale + (widest.width - widest.room);
    const sideWidth = clamp(wanted, SIDE_MIN_PX, most);
    const side = candidate(box, sideWidth, area.height, false);
    const tall = box.height * (area.width - 40) / box.width + 60;
    const stacked = candidate(box, area.width, clamp(tall, area.height * 0.3, area.height * 0.6), true);
    const larger = stacked.scale > side.scale * 1.05;
    const fuller = stacked.scale >= side.scale * 0.95 && stacked.filled > side.filled + 0.2;
    return larger || fuller ? stacked : side;
  }

  function place(layout) {
    const graph = $("graph");
    document.querySelector("main").classList.toggle("stacked", layout.stacked);
    graph.style.flex = "none";
    graph.style.width = layout.stacked ? "" : layout.width + "px";
    graph.style.height = layout.stacked ? layout.height + "px" : "";
  }

  // Fitted: the graph is drawn as large as legible text and the page allow; otherwise it
  // keeps its natural size. Either way the pane scrolls when the drawing is bigger.
  function fit(fitted) {
    $("drawing").classList.toggle("fit", fitted);
    $("fit").textContent = fitted ? "1:1" : "fit";
    if (!svg) return;
    const box = svg.viewBox.baseVal;
    if (!box || !box.width || !box.height) return;
    let scale = 1;
    if (fitted) {
      const layout = arrange(box);
      place(layout);
      scale = layout.scale;
    }
    svg.style.width = box.width * scale + "px";
    svg.style.height = box.height * scale + "px";
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
    window.addEventListener("resize", () => fit($("drawing").classList.contains("fit")));
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
  $("run-state").textContent = data.finalText;
  $("run-state").classList.add("state-" + data.final.status);
  prepareGraph();
  wire();
  if (svg) svg.setAttribute("preserveAspectRatio", "xMidYMin meet");
  fit(true);
  slider.max = String(Math.max(total - 1, 0));
  markCompactions();
  if (total === 0) {
    for (const id of ["first", "prev", "next", "last", "slider"]) $(id).disabled = true;
    $("now").textContent = "No run: the flow as written.";
  } else {
    go(0);
  }
})();
