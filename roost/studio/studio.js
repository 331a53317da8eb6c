// roost studio: a flow file drawn, its nodes edited in forms and its YAML in a pane.
// Every change is one request to the edit API (JSON Patch ops, a rename or removal built
// by the server, or the pane's whole text), made on the hash the page last read: the
// server writes it into the author's file and answers with the file as written and its
// problems, which show at their field and their line. A 409 (the file changed on disk)
// is offered as a reload; nothing is written over it. Undo and redo write back the texts
// the page saw before and after each change.
"use strict";
(function () {
  const page = window.roostPage;
  const $ = (id) => document.getElementById(id);
  let path = null; // the open flow file, by its path in the folder
  let shown = null; // {hash, text, flow, problems} as last read or written
  let selected = null; // {kind: "agents" | "channels", name}
  const undone = []; // [{before, after}] of the changes made, the latest last
  const redone = [];
  let checking = null; // the timer of the pane's check as one types

  // ------------------------------------------------------------------ JSON helpers

  const step = (key) => String(key).replace(/~/g, "~0").replace(/\//g, "~1");
  const at = (...keys) => "/" + keys.map(step).join("/");

  function get(pointer) {
    let value = shown.flow;
    for (const key of pointer.split("/").slice(1)) {
      const name = key.replace(/~1/g, "/").replace(/~0/g, "~");
      if (value === null || typeof value !== "object" || !(name in value)) return undefined;
      value = value[name];
    }
    return value;
  }

  // The op setting ``pointer`` to ``value`` (removing it when value is undefined), with
  // the mappings above it added when they are missing.
  function setOps(pointer, value) {
    const had = get(pointer) !== undefined;
    if (value === undefined) return had ? [{ op: "remove", path: pointer }] : [];
    if (had) return [{ op: "replace", path: pointer, value }];
    const keys = pointer.split("/").slice(1);
    for (let i = 1; i < keys.length; i++) {
      const parent = "/" + keys.slice(0, i).join("/");
      if (get(parent) === undefined) {
        let built = value;
        for (let j = keys.length - 1; j >= i; j--) built = { [unstep(keys[j])]: built };
        return [{ op: "add", path: parent, value: built }];
      }
    }
    return [{ op: "add", path: pointer, value }];
  }
  // A flow's URL: each folder of its path encoded (a name may hold "#" or "?").
  const flowUrl = (name) => "/flows/" + name.split("/").map(encodeURIComponent).join("/");
  const unstep = (key) => key.replace(/~1/g, "/").replace(/~0/g, "~");

  // ------------------------------------------------------------------ reading and writing

  async function listFlows() {
    const flows = await page.api("GET", "/flows");
    const select = $("studio-flow");
    select.replaceChildren();
    for (const flow of flows) select.append(new Option(flow.path, flow.path));
    if (!flows.length) { $("form-hint").textContent = "No flow files in this folder."; return; }
    const wanted = flows.some((flow) => flow.path === path) ? path : flows[0].path;
    select.value = wanted;
    await openFlow(wanted);
  }

  // Reads can cross: the list opens the first file while the person picks another.
  // Only the file asked for last is shown; an earlier answer that arrives late is dropped.
  let wantedFlow = null;
  async function openFlow(name) {
    wantedFlow = name;
    const read = await page.act(() => page.api("GET", flowUrl(name)));
    if (!read || wantedFlow !== name) return;
    if (name !== path) { selected = null; undone.length = 0; redone.length = 0; }
    path = name;
    $("conflict").hidden = true;
    show(read, true);
  }

  // Sends one change; true once written. A 409 offers the reload instead.
  async function change(route, body) {
    const before = shown.text;
    page.problem("");
    try {
      const written = await page.api("POST", flowUrl(path) + route,
        { base: shown.hash, ...body });
      if (written.text !== before) { undone.push({ before, after: written.text }); redone.length = 0; }
      show(written, true);
      return true;
    } catch (error) {
      if (error.status === 409) conflict(error.message);
      else page.problem(error.message);
      return false;
    }
  }

  const edit = (ops) => (ops.length ? change("/edits", { ops }) : Promise.resolve(false));

  function conflict(message) {
    $("conflict-text").textContent = "The file changed on disk while it was open here; " +
      "nothing was written. Reload it to go on from what is on disk. (" + message + ")";
    $("conflict").hidden = false;
    $("reload").focus();
  }

  // Writes a text kept by undo or redo; the change moves to the other stack once written.
  async function rewind(from, to) {
    const item = from.pop();
    if (!item) return;
    const text = from === undone ? item.before : item.after;
    try {
      const written = await page.api("POST", flowUrl(path) + "/edits",
        { base: shown.hash, text });
      to.push(item);
      show(written, true);
    } catch (error) {
      from.push(item);
      if (error.status === 409) conflict(error.message);
      else page.problem(error.message);
    }
  }

  // ------------------------------------------------------------------ showing the flow

  function show(read, fresh) {
    shown = read;
    if (fresh) { $("yaml").value = read.text; $("write-yaml").disabled = true; $("yaml-state").textContent = ""; }
    $("undo").disabled = !undone.length;
    $("redo").disabled = !redone.length;
    if (selected && selected.kind !== "flow" && !nodeNames(selected.kind).includes(selected.name)) {
      selected = null;
    }
    showProblems(read.problems);
    showNodes();
    showForm();
    draw();
  }

  const errors = (problems) => problems.filter((p) => p.severity === "error");

  function showProblems(problems) {
    const list = $("studio-problems");
    list.replaceChildren();
    for (const problem of problems) {
      const item = document.createElement("li");
      item.className = problem.severity;
      const where = document.createElement("button");
      where.type = "button";
      where.textContent = "line " + problem.line + ":" + problem.column;
      where.addEventListener("click", () => selectLine(problem.line));
      item.append(where, " " + problem.severity + ": " + problem.message);
      list.append(item);
    }
    $("run-flow").disabled = errors(problems).length > 0 || !shown || shown.text !== $("yaml").value;
  }

  // Puts the pane's cursor on line ``line`` with the line selected.
  function selectLine(line) {
    const pane = $("yaml");
    const lines = pane.value.split("\n");
    const start = lines.slice(0, line - 1).reduce((n, l) => n + l.length + 1, 0);
    pane.focus();
    pane.setSelectionRange(start, start + (lines[line - 1] || "").length);
    const height = pane.scrollHeight / Math.max(lines.length, 1);
    pane.scrollTop = Math.max(0, (line - 5) * height);
  }

  function nodeNames(kind) {
    const section = shown.flow && shown.flow[kind];
    return section && typeof section === "object" && !Array.isArray(section) ? Object.keys(section) : [];
  }

  function problemsUnder(pointer) {
    return shown.problems.filter((p) => p.path && (p.path === pointer || p.path.startsWith(pointer + "/")));
  }

  function showNodes() {
    const list = $("studio-nodes");
    list.replaceChildren();
    const settings = document.createElement("button");
    settings.type = "button";
    settings.setAttribute("role", "listitem");
    settings.textContent = "Flow settings";
    settings.setAttribute("aria-pressed", String(Boolean(selected && selected.kind === "flow")));
    const elsewhere = shown.problems.some((p) => p.path && !/^\/(agents|channels)\//.test(p.path));
    if (elsewhere) settings.classList.add("has-problem");
    settings.addEventListener("click", () => select("flow", ""));
    list.append(settings);
    for (const kind of ["agents", "channels"]) {
      for (const name of nodeNames(kind)) {
        const button = document.createElement("button");
        button.type = "button";
        button.setAttribute("role", "listitem");
        button.dataset.node = name;
        button.textContent = name + (kind === "channels" ? " (channel)" : "");
        button.setAttribute("aria-pressed", String(Boolean(selected && selected.name === name)));
        if (problemsUnder(at(kind, name)).length) button.classList.add("has-problem");
        button.addEventListener("click", () => select(kind, name));
        list.append(button);
      }
    }
  }

  function select(kind, name) {
    selected = { kind, name };
    showNodes();
    showForm();
    markSelected();
    const first = $("node-form").querySelector("input, textarea, select");
    if (first) first.focus();
  }

  // ------------------------------------------------------------------ the drawing

  // The id the server's drawing gives a node's name (roost.visualize.ids.node_id).
  function nodeId(name) {
    let id = "node-";
    for (const char of name) {
      id += /^[A-Za-z0-9]$/.test(char) ? char : "_" + char.codePointAt(0).toString(16) + "_";
    }
    return id;
  }

  let drawn = ""; // the text the drawing is of
  async function draw() {
    const text = shown.text;
    if (drawn === text) { markSelected(); return; }
    if (errors(shown.problems).length) {
      $("drawing-note").textContent = "The drawing waits until the flow has no errors.";
      return;
    }
    const graph = await page.api("GET", "/flows/graph?flow=" + encodeURIComponent(path))
      .catch((error) => { $("drawing-note").textContent = error.message; return null; });
    if (!graph || shown.text !== text) return;
    drawn = text;
    $("drawing-note").textContent = "Click a node to edit it; with an agent picked, " +
      "Shift+click a channel to make it a member, or another member to add a route to it.";
    $("studio-drawing").innerHTML = graph.svg;
    for (const svg of $("studio-drawing").querySelectorAll("[id]")) {
      svg.dataset.id = svg.id; // the run view owns the ids (it lights them)
      svg.removeAttribute("id");
    }
    for (const kind of ["agents", "channels"]) {
      for (const name of nodeNames(kind)) {
        const node = $("studio-drawing").querySelector('[data-id="' + nodeId(name) + '"]');
        if (!node) continue;
        node.classList.add("node");
        node.dataset.node = name;
        node.addEventListener("click", (event) => {
          if (event.shiftKey) connect(kind, name);
          else select(kind, name);
        });
      }
    }
    markSelected();
  }

  // Shift+click on the drawing joins the selected agent to a node: to a channel as its
  // member, to an agent of a channel they share as a route (the forms do the same).
  async function connect(kind, name) {
    if (!selected || selected.kind !== "agents" || selected.name === name) return select(kind, name);
    const agent = selected.name;
    if (kind === "channels") {
      const members = get(at("channels", name, "members"));
      const list = Array.isArray(members) ? members : [];
      if (!list.includes(agent)) await edit(setOps(at("channels", name, "members"), [...list, agent]));
      return;
    }
    const shared = nodeNames("channels").find((channel) => {
      const members = get(at("channels", channel, "members"));
      return Array.isArray(members) && members.includes(agent) && members.includes(name);
    });
    if (!shared) {
      page.problem(agent + " and " + name + " share no channel: a route joins two members of one");
      return;
    }
    const pointer = at("channels", shared, "transitions", agent);
    const routes = Array.isArray(get(pointer)) ? get(pointer) : [];
    const there = routes.some((r) => r === name || (r && typeof r === "object" && r.to === name));
    if (!there) await edit(setOps(pointer, [...routes, name]));
  }

  function markSelected() {
    for (const node of $("studio-drawing").querySelectorAll("[data-node]")) {
      node.classList.toggle("selected", Boolean(selected && node.dataset.node === selected.name));
    }
  }

  // ------------------------------------------------------------------ the forms

  function make(tag, props) {
    const made = document.createElement(tag);
    Object.assign(made, props || {});
    return made;
  }

  // A labelled field bound to ``pointer``: its value goes through ``read`` on change.
  function field(form, label, control, pointer, read) {
    const wrap = make("label", { textContent: label + " " });
    wrap.append(control);
    control.dataset.path = pointer;
    control.addEventListener("change", async () => {
      let value;
      try { value = read(control); } catch (error) { fieldProblem(control, error.message); return; }
      await edit(setOps(pointer, value));
    });
    form.append(wrap);
    return control;
  }

  function textField(form, label, pointer, multiline) {
    const control = multiline ? make("textarea", { rows: 4 }) : make("input", { type: "text" });
    const value = get(pointer);
    control.value = value === undefined || value === null ? "" : String(value);
    return field(form, label, control, pointer, (c) => (c.value === "" && !multiline ? undefined : c.value));
  }

  function choiceField(form, label, pointer, choices) {
    const control = make("select");
    control.append(new Option("(default)", ""));
    for (const choice of choices) control.append(new Option(choice, choice));
    const value = get(pointer);
    if (value !== undefined && value !== null && !choices.includes(String(value))) {
      control.append(new Option(String(value) + " (not in the flow)", String(value)));
    }
    control.value = value === undefined || value === null ? "" : String(value);
    return field(form, label, control, pointer, (c) => (c.value === "" ? undefined : c.value));
  }

  function numberField(form, label, pointer) {
    const control = make("input", { type: "number", min: "0" });
    const value = get(pointer);
    control.value = value === undefined || value === null ? "" : String(value);
    return field(form, label, control, pointer, (c) => {
      if (c.value === "") return undefined;
      const number = Number(c.value);
      if (!Number.isInteger(number)) throw new Error("a whole number");
      return number;
    });
  }

  function jsonField(form, label, pointer) {
    const control = make("textarea", { rows: 4 });
    const value = get(pointer);
    control.value = value === undefined || value === null ? "" : JSON.stringify(value, null, 1);
    return field(form, label, control, pointer, (c) => {
      if (!c.value.trim()) return undefined;
      try { return JSON.parse(c.value); } catch (error) { throw new Error("not JSON: " + error.message); }
    });
  }

  // A set of checkboxes for the list at ``pointer`` (kept in the order it had).
  function listField(form, legend, pointer, choices, emptyRemoves) {
    const set = make("fieldset");
    set.append(make("legend", { textContent: legend }));
    set.dataset.path = pointer;
    const now = Array.isArray(get(pointer)) ? get(pointer) : [];
    for (const choice of [...new Set([...choices, ...now])]) {
      const box = make("input", { type: "checkbox", checked: now.includes(choice), value: choice });
      box.addEventListener("change", () => {
        const kept = Array.isArray(get(pointer)) ? get(pointer).filter((c) => c !== choice) : [];
        const value = box.checked ? [...kept, choice] : kept;
        edit(setOps(pointer, value.length || !emptyRemoves ? value : undefined));
      });
      const label = make("label", { className: "row" });
      label.append(box, " " + choice);
      set.append(label);
    }
    form.append(set);
  }

  // The tool references an agent may list: each tool, each child of a group.
  function toolChoices() {
    const tools = (shown.flow && shown.flow.tools) || {};
    const names = [];
    for (const [name, tool] of Object.entries(tools)) {
      if (tool && typeof tool === "object" && tool.tools && typeof tool.tools === "object") {
        for (const child of Object.keys(tool.tools)) names.push(name + "#" + child);
      } else names.push(name);
    }
    return names;
  }

  const providers = () => Object.keys((shown.flow && shown.flow.providers) || {});

  function showForm() {
    const form = $("node-form");
    const focused = document.activeElement && form.contains(document.activeElement)
      ? document.activeElement.dataset.path || null : null;
    form.replaceChildren();
    form.hidden = !selected;
    $("form-hint").hidden = Boolean(selected);
    if (!selected) return;
    const { kind, name } = selected;
    if (kind === "flow") {
      form.append(make("h2", { textContent: "Flow settings" }));
      flowForm(form);
      for (const problem of shown.problems) if (problem.path) showAtField(form, problem);
      refocus(form, focused);
      return;
    }
    form.append(make("h2", { textContent: (kind === "agents" ? "Agent " : "Channel ") + name }));
    nodeActions(form, kind, name);
    if (kind === "agents") agentForm(form, name);
    else channelForm(form, name);
    for (const problem of problemsUnder(at(kind, name))) showAtField(form, problem);
    refocus(form, focused);
  }

  // The field that had the focus has it again once its form is drawn anew.
  function refocus(form, focused) {
    if (!focused) return;
    const again = form.querySelector('[data-path="' + CSS.escape(focused) + '"]');
    if (again) again.focus();
  }

  // The flow's own keys: its name, start, defaults, and its sections as JSON.
  function flowForm(form) {
    const nodes = [...nodeNames("agents"), ...nodeNames("channels")];
    textField(form, "Name", "/name", false);
    textField(form, "Description", "/description", false);
    choiceField(form, "Start from", "/start/from", nodeNames("agents"));
    choiceField(form, "Start to", "/start/to", nodes);
    textField(form, "Start message", "/start/content", false);
    choiceField(form, "Default provider", "/defaults/provider", providers());
    numberField(form, "Default max rounds", "/defaults/max_rounds");
    choiceField(form, "Default interrupt", "/defaults/interrupt", ["NEVER", "ALWAYS"]);
    choiceField(form, "Default markers", "/defaults/markers", ["end", "whole", "anywhere"]);
    jsonField(form, "Vars (JSON)", "/vars");
    jsonField(form, "Providers (JSON)", "/providers");
    jsonField(form, "Tools (JSON)", "/tools");
    jsonField(form, "MCP servers (JSON)", "/mcp_servers");
  }

  function nodeActions(form, kind, name) {
    const row = make("div", { className: "row" });
    const rename = make("input", { type: "text", value: name });
    rename.setAttribute("aria-label", "New name of " + name);
    const apply = make("button", { type: "button", textContent: "Rename" });
    const doRename = async () => {
      const to = rename.value.trim();
      if (!to || to === name) return;
      if (await change("/rename", { node: name, to })) select(kind, to);
    };
    apply.addEventListener("click", doRename);
    rename.addEventListener("keydown", (event) => {
      if (event.key === "Enter") { event.preventDefault(); doRename(); }
    });
    const remove = make("button", { type: "button", textContent: "Delete " + name });
    remove.addEventListener("click", async () => {
      if (await change("/delete", { node: name })) { selected = null; showForm(); showNodes(); }
    });
    row.append(rename, apply, remove);
    form.append(row);
  }

  function agentForm(form, name) {
    const base = at("agents", name);
    textField(form, "Role", base + "/role", true);
    textField(form, "Description", base + "/description", false);
    choiceField(form, "Provider", base + "/provider", providers());
    listField(form, "Tools", base + "/functions", toolChoices(), true);
    choiceField(form, "Interrupt", base + "/interrupt", ["NEVER", "ALWAYS"]);
    choiceField(form, "Markers", base + "/markers", ["end", "whole", "anywhere"]);
    numberField(form, "Max tool calls", base + "/max_tool_calls");
    numberField(form, "Tool limit", base + "/tool_limit");
    jsonField(form, "Reply format (JSON Schema)", base + "/reply_format");
    for (const channel of nodeNames("channels")) {
      const members = get(at("channels", channel, "members"));
      if (Array.isArray(members) && members.includes(name)) routesField(form, channel, name);
    }
  }

  // The routes after ``name`` speaks in ``channel``: each a target and a condition.
  function routesField(form, channel, name) {
    const pointer = at("channels", channel, "transitions", name);
    const set = make("fieldset");
    set.dataset.path = pointer;
    set.append(make("legend", { textContent: "Routes after " + name + " in " + channel }));
    const routes = Array.isArray(get(pointer)) ? get(pointer) : [];
    const targets = [...(get(at("channels", channel, "members")) || []), "TERMINATE"];
    const write = (list) => edit(setOps(pointer, list.length ? list : undefined));
    routes.forEach((route, index) => {
      const row = make("div", { className: "row" });
      const to = make("select");
      to.setAttribute("aria-label", "Route " + (index + 1) + " to");
      const target = typeof route === "string" ? route : route && route.to;
      for (const t of new Set([...targets, target])) to.append(new Option(t, t));
      to.value = target;
      const when = make("input", { type: "text", placeholder: "always" });
      when.setAttribute("aria-label", "Route " + (index + 1) + " when (JSON)");
      when.value = route && typeof route === "object" && route.when ? JSON.stringify(route.when) : "";
      const update = () => {
        let condition;
        try { condition = when.value.trim() ? JSON.parse(when.value) : null; } catch (error) {
          fieldProblem(when, "not JSON: " + error.message); return;
        }
        const list = routes.slice();
        list[index] = condition ? { to: to.value, when: condition } : to.value;
        write(list);
      };
      to.addEventListener("change", update);
      when.addEventListener("change", update);
      const drop = make("button", { type: "button", textContent: "Remove" });
      drop.setAttribute("aria-label", "Remove route " + (index + 1));
      drop.addEventListener("click", () => write(routes.filter((_, i) => i !== index)));
      row.append("to ", to, " when ", when, drop);
      set.append(row);
    });
    const add = make("button", { type: "button", textContent: "Add route" });
    add.addEventListener("click", () => {
      const other = targets.find((t) => t !== name) || "TERMINATE";
      write([...routes, other]);
    });
    set.append(add);
    form.append(set);
  }

  function channelForm(form, name) {
    const base = at("channels", name);
    listField(form, "Members", base + "/members", nodeNames("agents"), false);
    textField(form, "Director's role", base + "/role", true);
    textField(form, "Description", base + "/description", false);
    numberField(form, "Max rounds", base + "/max_rounds");
    choiceField(form, "Director strategy", base + "/director/strategy",
      ["llm", "round_robin", "random", "manual"]);
    choiceField(form, "Director provider", base + "/director/provider", providers());
  }

  function fieldProblem(control, message) {
    const note = make("div", { className: "field-problem", textContent: message });
    note.setAttribute("role", "alert");
    control.closest("label, fieldset").after(note);
  }

  // A problem under the field whose path is the nearest above the problem's own.
  function showAtField(form, problem) {
    let best = null;
    for (const control of form.querySelectorAll("[data-path]")) {
      const p = control.dataset.path;
      if ((problem.path === p || problem.path.startsWith(p + "/")) &&
        (!best || p.length > best.dataset.path.length)) best = control;
    }
    if (!best) return;
    best.setAttribute("aria-invalid", "true");
    const wrap = best.tagName === "FIELDSET" ? best : best.closest("label");
    const note = make("div", { className: "field-problem",
      textContent: "line " + problem.line + ": " + problem.message });
    wrap.after(note);
  }

  // ------------------------------------------------------------------ the YAML pane

  $("yaml").addEventListener("input", () => {
    const dirty = $("yaml").value !== shown.text;
    $("write-yaml").disabled = !dirty;
    $("yaml-state").textContent = dirty ? "(not written yet: Ctrl+S writes it)" : "";
    $("run-flow").disabled = true;
    clearTimeout(checking);
    checking = setTimeout(checkPane, 300);
  });

  // The pane's text checked as one types (a dry run: nothing is written).
  async function checkPane() {
    const text = $("yaml").value;
    const checked = await page.api("POST", flowUrl(path) + "/edits?dry_run=true",
      { base: shown.hash, text }).catch(() => null);
    if (checked && $("yaml").value === text) showProblems(checked.problems);
  }

  async function writePane() {
    clearTimeout(checking);
    if ($("yaml").value !== shown.text) await change("/edits", { text: $("yaml").value });
  }

  $("write-yaml").addEventListener("click", writePane);
  $("yaml").addEventListener("keydown", (event) => {
    if ((event.ctrlKey || event.metaKey) && event.key === "s") { event.preventDefault(); writePane(); }
  });

  // ------------------------------------------------------------------ the bar

  $("studio-flow").addEventListener("change", () => openFlow($("studio-flow").value));
  $("reload").addEventListener("click", () => { undone.length = 0; redone.length = 0; openFlow(path); });
  $("undo").addEventListener("click", () => rewind(undone, redone));
  $("redo").addEventListener("click", () => rewind(redone, undone));
  document.addEventListener("keydown", (event) => {
    if ($("studio").hidden || !(event.ctrlKey || event.metaKey)) return;
    const typing = event.target.closest && event.target.closest("input, textarea");
    if (typing) return; // a field's own undo is the browser's
    const key = event.key.toLowerCase();
    if (key === "z" && !event.shiftKey) { event.preventDefault(); rewind(undone, redone); }
    else if (key === "y" || (key === "z" && event.shiftKey)) {
      event.preventDefault();
      rewind(redone, undone);
    }
  });

  $("add-node").addEventListener("submit", async (event) => {
    event.preventDefault();
    const name = $("new-node").value.trim();
    const kind = $("new-kind").value;
    if (!name || !shown) return;
    if ([...nodeNames("agents"), ...nodeNames("channels")].includes(name)) {
      page.problem("a node " + JSON.stringify(name) + " is in the flow already");
      return;
    }
    const agents = nodeNames("agents");
    const value = kind === "agents" ? { role: "" } : { members: agents.slice(0, 2) };
    if (await edit(setOps(at(kind, name), value))) { $("new-node").value = ""; select(kind, name); }
  });

  $("studio-run").addEventListener("submit", async (event) => {
    event.preventDefault();
    await page.startRun(path, $("studio-message").value);
  });

  document.title = "roost studio";
  $("home-link").querySelector("b").textContent = "roost studio";
  page.act(listFlows);
})();
