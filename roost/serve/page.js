// roost serve page: start a run of a flow, watch it live, answer it, cancel, retry, fork.
// Everything goes through the server's API: commands over HTTP, the run's events and
// the text of answers as they stream over its WebSocket (which carries the token as a
// subprotocol, since a browser cannot set headers there). Without a run open, the page
// shows the flows (drawn) and the recent runs; the graph lights the node the run waits
// for, or the one taking the step, and none once the run has ended.
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const transcript = $("transcript");
  let token = sessionStorage.getItem("roost-token") || "";
  let run = null; // the open run's id
  let socket = null;
  let events = []; // the open run's events, by seq
  let state = null; // the open run's last state (the body of GET /runs/{id})
  const streaming = new Map(); // node -> the row its answer streams into
  let lit = null; // the lit graph node
  let speaking = null; // the name lit, lit again once the drawing is there
  let nowText = ""; // what the line above the graph says

  // ------------------------------------------------------------------ the API

  async function api(method, path, body) {
    const headers = {};
    if (token) headers.Authorization = "Bearer " + token;
    if (body !== undefined) headers["Content-Type"] = "application/json";
    const response = await fetch(path, {
      method, headers, body: body === undefined ? undefined : JSON.stringify(body),
    });
    const data = await response.json().catch(() => ({}));
    if (response.status === 401) {
      askToken();
      const wrong = "That token is not one this server knows: check it and paste it again.";
      throw new Error(token ? wrong : "");
    }
    if (!response.ok) {
      const error = new Error(data.error || response.status + " " + response.statusText);
      error.status = response.status; // the studio offers a reload on a 409
      throw error;
    }
    return data;
  }

  // Which of the page's three views shows: "token", "home" (flows and runs) or "run".
  // Under roost studio, the studio's view stands in for the home view.
  function view(name) {
    const studio = $("studio");
    $("token-page").hidden = name !== "token";
    $("home").hidden = name !== "home" || Boolean(studio);
    if (studio) studio.hidden = name !== "home";
    $("run-view").hidden = name !== "run";
  }

  function askToken() {
    view("token");
    $("token").value = "";
    $("token").focus();
  }

  function problem(text) {
    $("problem").textContent = text || "";
    $("problem").hidden = !text;
  }

  // Runs an action, showing its error (the server's one line) instead of throwing.
  async function act(action) {
    problem("");
    try {
      return await action();
    } catch (error) {
      problem(error.message);
      return null;
    }
  }

  // ------------------------------------------------------------------ flows and runs

  async function loadFlows() {
    const flows = await api("GET", "/flows");
    showFlowCards(flows);
    const select = $("flow");
    select.replaceChildren();
    for (const flow of flows) {
      const option = new Option(flow.path + (flow.valid ? "" : " (invalid)"), flow.path);
      option.disabled = !flow.valid;
      option.title = flow.valid ? flow.description || flow.name : flow.problems.join("\n");
      select.append(option);
    }
    const first = flows.find((flow) => flow.valid);
    if (first) select.value = first.path;
  }

  const runLabel = (row) => row.id + " · " + row.flow + " · " + row.status;

  async function loadRuns() {
    showRuns(await api("GET", "/runs?limit=100"));
  }

  function showRuns(runs) {
    const select = $("runs");
    select.replaceChildren(new Option("(open a stored run)", ""));
    for (const row of runs) select.append(new Option(runLabel(row), row.id));
    select.value = run || "";
    showRecent(runs.slice(0, 20));
    listed = runs.map((row) => row.id).join(" ");
  }

  // Every listed run's status follows the server: the open run's through its stream, the
  // others through the listing, asked again every RUNS_EVERY ms while the page is seen
  // (the server has no stream of every run, and a run's own stream is one socket each).
  const RUNS_EVERY = 3000;
  let listed = ""; // the ids of the runs listed, as the page last drew them

  async function pollRuns() {
    if (document.visibilityState !== "visible" || !$("token-page").hidden) return;
    const runs = await api("GET", "/runs?limit=100").catch(() => null);
    if (!runs) return;
    if (runs.map((row) => row.id).join(" ") === listed) {
      for (const row of runs) if (row.id !== run) followRow(row); // the same runs: in place
    } else showRuns(runs); // a run came or went: the lists are drawn again
  }

  setInterval(pollRuns, RUNS_EVERY);
  document.addEventListener("visibilitychange", pollRuns); // seen again: at once

  // The list follows a run as its stream tells where it stands.
  function followRow(row) {
    for (const option of $("runs").options) {
      if (option.value === row.id) option.text = runLabel(row);
    }
    for (const item of $("recent").querySelectorAll("[data-run]")) {
      if (item.dataset.run === row.id) item.querySelector(".status").textContent = row.status;
    }
  }

  // ------------------------------------------------------------------ the home view

  function make(tag, className, text) {
    const made = document.createElement(tag);
    if (className) made.className = className;
    if (text !== undefined) made.textContent = text;
    return made;
  }

  function showFlowCards(flows) {
    const cards = $("flow-cards");
    cards.replaceChildren();
    if (!flows.length) cards.textContent = "No flow files in the server's flows folder.";
    for (const flow of flows) {
      const card = make("article", "flow-card" + (flow.valid ? "" : " invalid"));
      card.dataset.flow = flow.path;
      const title = make("h3", "", flow.path);
      const about = flow.valid ? flow.description || flow.name : flow.problems.join("\n");
      card.append(title, make("p", "", about), make("div", "flow-drawing"));
      if (flow.valid) {
        const start = make("button", "", "Start");
        start.type = "button";
        start.addEventListener("click", () => startRun(flow.path, ""));
        title.append(" ", start);
      }
      cards.append(card);
    }
    drawFlows(flows.filter((flow) => flow.valid));
  }

  // One drawing at a time: each is a dot process on the server.
  async function drawFlows(flows) {
    for (const flow of flows) {
      const drawn = await api("GET", "/flows/graph?flow=" + encodeURIComponent(flow.path))
        .catch(() => null);
      const card = [...$("flow-cards").children].find((c) => c.dataset.flow === flow.path);
      if (!drawn || !card) continue;
      const drawing = card.querySelector(".flow-drawing");
      drawing.innerHTML = drawn.svg;
      // The run view's drawing owns the nodes' ids (it lights them): these keep theirs aside.
      for (const element of drawing.querySelectorAll("[id]")) {
        element.dataset.id = element.id;
        element.removeAttribute("id");
      }
    }
  }

  function showRecent(runs) {
    const list = $("recent");
    list.replaceChildren();
    if (!runs.length) list.textContent = "No runs yet: start one of the flows above.";
    for (const row of runs) {
      const item = make("li");
      item.dataset.run = row.id;
      const link = make("a", "", row.id);
      link.href = "#" + encodeURIComponent(row.id);
      const about = " · " + row.flow + (row.title ? " · " + row.title : "") + " · " +
        row.messages + " messages · ";
      item.append(link, make("span", "", about), make("span", "status", row.status));
      list.append(item);
    }
  }

  function goHome() {
    if (socket) socket.close();
    socket = null;
    run = null;
    $("run-title").textContent = "";
    $("status").textContent = "";
    $("cancel").disabled = true;
    $("retry").disabled = true;
    history.replaceState(null, "", location.pathname);
    view("home");
  }

  async function open(id) {
    if (socket) socket.close();
    socket = null;
    run = id;
    events = [];
    state = null;
    streaming.clear();
    lit = null;
    speaking = null;
    transcript.replaceChildren();
    $("drawing").replaceChildren();
    $("answer").hidden = true;
    $("budget").replaceChildren();
    $("budget").hidden = true;
    $("now").textContent = "";
    nowText = "";
    view("run");
    $("run-title").textContent = "· run " + id;
    history.replaceState(null, "", "#" + encodeURIComponent(id));
    connect();
    const graph = await api("GET", "/runs/" + encodeURIComponent(id) + "/graph");
    if (run === id) $("drawing").innerHTML = graph.svg; // drawn by the server from the flow
    highlight(speaking, nowText);
  }

  // ------------------------------------------------------------------ the live stream

  function connect() {
    const protocols = ["roost"];
    if (token) protocols.push("bearer." + token);
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    const after = events.length ? events[events.length - 1].seq : -1;
    const url = scheme + "//" + location.host + "/runs/" + encodeURIComponent(run) +
      "/ws?after=" + after;
    const ws = new WebSocket(url, protocols);
    socket = ws;
    ws.onmessage = (message) => { if (socket === ws) handle(JSON.parse(message.data)); };
    ws.onclose = () => {
      // A dropped connection comes back from the last event seen; a finished run stays closed.
      const finished = state && state.status === "terminated" && !state.busy;
      if (socket === ws && !finished) setTimeout(() => { if (socket === ws) connect(); }, 1000);
    };
  }

  function handle(item) {
    switch (item.type) {
      case "event": addEvent(item.event); break;
      case "delta": addDelta(item.node, item.text); break;
      case "state": showState(item); break;
      case "notice": problem(item.message); break;
      case "error": problem(item.error); break;
      default: break; // "accepted", "cancelled": the page sends its commands over HTTP
    }
  }

  const { fields, route } = roostWords; // event_words.js, before this script

  // [head, body] of one event, as plain text (the run page's wording).
  function describe(e) {
    switch (e.type) {
      case "message":
        return [e.from + " → " + e.to, e.data !== undefined ? fields(e.data) : e.content];
      case "select":
        return ["director " + e.channel, "chose " + e.chosen + " (" + e.by + ") from " +
          e.candidates.join(", ") + route(e.routes, e.chosen)];
      case "tool_call":
        return [e.agent + " calls a tool", e.name + "(" + JSON.stringify(e.arguments) + ")"];
      case "tool_result":
        return [e.agent + " ← " + e.name + (e.is_error ? " (error)" : ""), e.content];
      case "llm_call":
        return ["model call by " + e.node, e.provider + " · " + e.model +
          (e.error ? " · failed: " + e.error : "")];
      case "interrupt":
        return ["paused", "waiting for " + e.from + " (answering " + e.to + ")" +
          (e.reason && e.reason !== "human" ? " · " + e.reason.replace("_", " ") : "")];
      case "resume":
        return ["resumed", e.from + " → " + e.to + (e.feedback ? ": " + e.feedback : "")];
      case "retry": return ["retry", e.from + " → " + e.to];
      case "error": return ["error at " + e.from + " → " + e.to, e.content];
      case "terminate":
        return ["terminated", "at " + e.node + (e.reason ? " (" + e.reason + ")" : "") +
          route(e.routes, "TERMINATE")];
      case "run_start":
        return ["run " + e.run + " started", "flow " + e.flow.name +
          (e.parent ? " · forked from " + e.parent + " at " + e.fork_at : "")];
      default: return [e.type, JSON.stringify(e).slice(0, 300)];
    }
  }

  function row(kind, head, body) {
    const element = document.createElement("div");
    element.className = "ev " + kind;
    const h = document.createElement("div");
    h.className = "head";
    h.textContent = head;
    const b = document.createElement("div");
    b.className = "body";
    b.textContent = body;
    element.append(h, b);
    return element;
  }

  function addEvent(e) {
    if (events.length && e.seq <= events[events.length - 1].seq) return; // seen already
    events.push(e);
    // A model call is recorded once its answer is whole: the text it streamed ends there
    // (its message follows, or the answer was tool calls); an end or an error ends them all.
    if (e.type === "llm_call") endStreaming(e.node);
    if (e.type === "terminate" || e.type === "error") endStreaming(null);
    const [head, body] = describe(e);
    const element = row(e.type + (e.type === "llm_call" ? " minor" : ""), "#" + e.seq + " " + head,
      body);
    element.dataset.seq = String(e.seq);
    if (e.type === "message") {
      addImages(element, e.images);
      endStreaming(e.from);
      const fork = document.createElement("button");
      fork.type = "button";
      fork.className = "fork";
      fork.textContent = "Fork";
      fork.title = "Start a new run from this message";
      fork.addEventListener("click", () => showFork(element, e));
      element.firstChild.append(fork);
      highlight(e.from, e.from + " speaks");
    }
    transcript.append(element);
    element.scrollIntoView({ block: "end" });
  }

  // A message's images, each fetched by its hash with the token (an <img> cannot send one).
  function addImages(element, images) {
    if (!images || !images.length) return;
    const strip = document.createElement("div");
    strip.className = "images";
    for (const image of images) {
      const img = document.createElement("img");
      img.alt = image.name || image.media_type;
      img.title = (image.name ? image.name + " · " : "") + image.hash;
      img.dataset.hash = image.hash;
      strip.append(img);
      loadImage(img, image.hash);
    }
    element.append(strip);
  }

  async function loadImage(img, hash) {
    const headers = token ? { Authorization: "Bearer " + token } : {};
    const response = await fetch("/images/" + encodeURIComponent(hash), { headers });
    if (!response.ok) { img.alt += " (not in the store)"; return; }
    img.src = URL.createObjectURL(await response.blob());
  }

  function addDelta(node, text) {
    let element = streaming.get(node);
    if (!element) {
      element = row("message streaming", node + " is writing…", "");
      streaming.set(node, element);
      transcript.append(element);
    }
    element.lastChild.textContent += text;
    element.scrollIntoView({ block: "end" });
    highlight(node, node + " is writing");
  }

  // Removes the "is writing…" row of ``node`` (of every node when null).
  function endStreaming(node) {
    for (const [name, element] of [...streaming]) {
      if (node === null || name === node) { element.remove(); streaming.delete(name); }
    }
  }

  // The node whose id the server's drawing gives a name (see roost.visualize.ids).
  function nodeId(name) {
    let id = "node-";
    for (const char of name) {
      id += /^[A-Za-z0-9]$/.test(char) ? char : "_" + char.codePointAt(0).toString(16) + "_";
    }
    return id;
  }

  // The name is kept apart from its drawn node: events may stream in before the drawing
  // arrives, and the drawing then lights the node named last.
  function highlight(name, text) {
    if (lit) lit.classList.remove("hl");
    lit = null;
    speaking = name;
    nowText = text;
    $("now").textContent = text;
    if (!name) return;
    const found = document.getElementById(nodeId(name));
    if (found) { found.classList.add("hl"); lit = found; }
  }

  // Where a run stands once a step ended: who it waits for, or that it stopped or ended.
  function showWhere(item) {
    if (item.busy) return; // the step's events and text say who is at work
    endStreaming(null);
    const waiting = item.waiting_for;
    if (item.status === "terminated") highlight(null, "The run has ended.");
    else if (item.status === "error") {
      highlight(null, "Stopped at an error: Retry redoes the step.");
    }
    else if (waiting && waiting.reason === "budget") {
      highlight(waiting.budget && waiting.budget.agent,
        "The budget waits for you: a new limit, or stop");
    }
    else if (waiting && waiting.reason === "tool_approval") {
      highlight(waiting.node, waiting.node + " waits for the approval of a tool call");
    } else if (waiting && waiting.reason === "tool_plan") {
      highlight(waiting.node, waiting.node + " waits for the approval of its tool calls");
    } else if (waiting && waiting.reason === "manual_select") {
      highlight(waiting.node, waiting.node + " waits for the choice of who speaks");
    } else if (waiting) highlight(waiting.node, "waiting for " + waiting.node);
  }

  // ------------------------------------------------------------------ where the run stands

  // An amount of a budget's limit as people read it: $0.43, 1200 tokens, 4 model calls.
  function amount(limit, value) {
    const rounded = Number(Number(value).toFixed(limit === "cost" ? 4 : 1));
    return limit === "cost" ? "$" + rounded : rounded + " " + limit.replace("_", " ");
  }

  const DID = { stop: "stopped the run", ask: "asks for a new limit", raised: "raised" };

  // Each limit of the run's budgets: allowed, spent, left, and what it did last.
  function showBudget(limits, ended) {
    const list = $("budget");
    list.replaceChildren();
    list.hidden = !limits || !limits.length;
    for (const b of limits || []) {
      const whose = b.agent ? b.agent + "'s budget" : "budget";
      // A question answered with no ends the run, and records no decision of its own.
      const no = ended && b.last === "ask" ? "answered no: the run ended" : null;
      const did = no || (b.last === "switch_to" ? "switched to " + b.provider : DID[b.last]);
      const line = make("li", b.last || "", whose + ": " + amount(b.limit, b.spent) + " of " +
        amount(b.limit, b.allowed) + " spent, " + amount(b.limit, b.left) + " left" +
        (did ? " · " + did : ""));
      line.dataset.limit = b.limit;
      list.append(line);
    }
  }

  function showState(item) {
    state = item;
    followRow(item);
    showWhere(item);
    showBudget(item.budget, item.status === "terminated");
    const status = $("status");
    status.className = "state-" + item.status;
    status.textContent = item.status + (item.busy ? " · taking a step" : "") +
      (item.queued ? " · " + item.queued + " waiting" : "");
    $("cancel").disabled = !item.busy;
    $("retry").disabled = item.busy || item.status !== "error";
    const waiting = item.waiting_for;
    const form = $("answer");
    form.hidden = !waiting || item.busy;
    if (form.hidden) return;
    const choices = $("choices");
    choices.replaceChildren();
    const text = $("answer-text");
    text.hidden = false;
    if (waiting.reason === "tool_approval") {
      const call = waiting.tool_call || {};
      $("asked").textContent = waiting.node + " asks to run " + call.name + "(" +
        JSON.stringify(call.arguments) + "): approve it, or say why not";
      choices.append(choiceButton("Approve", "yes", waiting.node));
      text.placeholder = "Why not (sent to the model as the refusal)";
    } else if (waiting.reason === "tool_plan") {
      const calls = (waiting.tool_calls || []).map(
        (call, i) => (i + 1) + ". " + call.name + "(" + JSON.stringify(call.arguments) + ")");
      $("asked").textContent = waiting.node + " asks to run " + calls.join(" ") +
        ": approve them all, or say why not";
      choices.append(choiceButton("Approve all", "yes", waiting.node));
      text.placeholder = "Why not (sent to the model as the refusal)";
    } else if (waiting.reason === "budget") {
      const asked = waiting.budget || {};
      const whose = asked.agent ? asked.agent + "'s budget" : "The budget";
      $("asked").textContent = whose + " has spent " + amount(asked.limit, asked.spent) +
        " of " + amount(asked.limit, asked.allowed) + " (" + asked.limit.replace("_", " ") +
        "): give a new limit to go on, or stop the run";
      choices.append(choiceButton("Stop the run", "no", waiting.node));
      text.placeholder = "New " + asked.limit.replace("_", " ") + " limit, above " +
        amount(asked.limit, asked.spent);
    } else if (waiting.reason === "manual_select") {
      $("asked").textContent = "Who speaks next in " + waiting.node + "?";
      for (const name of waiting.choices) choices.append(choiceButton(name, name, waiting.node));
      text.hidden = true;
    } else {
      $("asked").textContent = waiting.node + " is asked (answering " + waiting.answering + ")";
      text.placeholder = "Your answer as " + waiting.node + " (empty: " + waiting.node +
        " answers by itself)";
    }
    $("send").hidden = text.hidden;
    if (!text.hidden) text.focus();
  }

  function choiceButton(label, content, node) {
    const button = document.createElement("button");
    button.type = "button";
    button.textContent = label;
    button.addEventListener("click", () => send(content, node));
    return button;
  }

  async function send(content, node) {
    const id = run;
    const done = await act(() => api("POST", "/runs/" + encodeURIComponent(id) + "/messages",
      { content, as: node }));
    if (done) { $("answer-text").value = ""; $("answer").hidden = true; }
  }

  // ------------------------------------------------------------------ forks

  // Where a fork from message ``e`` starts, and the text it offers to change: a person's
  // message is said again differently; after anyone else's, the next person's turn.
  function forkPoint(e) {
    const before = events[e.seq - 1];
    if (e.seq === 1) return { at: 1, text: e.content };
    if (before && before.type === "resume") return { at: before.seq, text: e.content };
    const next = events.find((later) => later.seq > e.seq && later.type === "interrupt");
    if (next) return { at: next.seq + 1, text: "" };
    return { at: e.seq + 1, text: null };
  }

  function showFork(element, e) {
    for (const open of transcript.querySelectorAll(".fork-form")) open.remove();
    const point = forkPoint(e);
    const form = $("fork-template").content.firstElementChild.cloneNode(true);
    const text = form.querySelector("textarea");
    text.value = point.text || "";
    text.hidden = point.text === null;
    text.placeholder = "The message the new run goes on with";
    form.querySelector(".fork-cancel").addEventListener("click", () => form.remove());
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const body = { at: point.at };
      if (point.text !== null && text.value.trim()) body.message = text.value;
      const forked = await act(() => api("POST", "/runs/" + encodeURIComponent(run) + "/fork",
        body));
      if (forked) { await open(forked.id); await act(loadRuns); }
    });
    element.after(form);
    text.focus();
  }

  // ------------------------------------------------------------------ the controls

  $("start-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    await startRun($("flow").value, $("start-message").value, $("start-budget").value);
  });

  async function startRun(flow, message, budget) {
    const body = { flow };
    if (message.trim()) body.message = message;
    // A cost limit as a number; text that is not one goes as written, for the server's error.
    const cost = (budget || "").trim().replace(/^\$/, "");
    if (cost) body.budget = Number.isFinite(Number(cost)) ? Number(cost) : cost;
    const started = await act(() => api("POST", "/runs", body));
    if (started) { await act(() => open(started.id)); await act(loadRuns); }
  }
  $("runs").addEventListener("change", () => {
    if ($("runs").value) act(() => open($("runs").value));
  });
  $("answer").addEventListener("submit", (event) => {
    event.preventDefault();
    if (state && state.waiting_for) send($("answer-text").value, state.waiting_for.node);
  });
  $("cancel").addEventListener("click", () =>
    act(() => api("POST", "/runs/" + encodeURIComponent(run) + "/cancel")));
  $("retry").addEventListener("click", () =>
    act(() => api("POST", "/runs/" + encodeURIComponent(run) + "/retry")));
  $("token-form").addEventListener("submit", (event) => {
    event.preventDefault();
    token = $("token").value.trim();
    sessionStorage.setItem("roost-token", token);
    start();
  });
  $("home-link").addEventListener("click", (event) => {
    event.preventDefault();
    goHome();
    act(async () => { await loadFlows(); await loadRuns(); });
  });
  window.addEventListener("hashchange", () => {
    const wanted = decodeURIComponent(location.hash.slice(1));
    if (wanted && wanted !== run) act(() => open(wanted));
  });

  async function start() {
    const ready = await act(async () => { await loadFlows(); await loadRuns(); return true; });
    if (!ready) return;
    const wanted = decodeURIComponent(location.hash.slice(1));
    if (wanted && wanted !== run) await act(() => open(wanted));
    else if (!run) view("home");
  }
  // What the studio's script (inlined after this one under roost studio) uses.
  window.roostPage = { api, act, startRun, open: (id) => act(() => open(id)), problem };
  start();
})();
