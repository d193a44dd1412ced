// Weft's web console: a query editor (node programs with their params as a
// form, DQL through the Dgraph face) with history, results as a table, as
// JSON and as a graph (Cytoscape.js), and a status panel with a live
// throughput chart. window.weftConsole exposes the state for the browser test.
import cytoscape from "cytoscape";

import "./style.css";

const $ = (id) => document.getElementById(id);
const HISTORY_KEY = "weft.console.history";
const HISTORY_MAX = 50;

const state = { programs: [], last: null, cy: null, expanded: new Set(), runs: 0 };
window.weftConsole = state;

// ---- API ----

async function api(path, opts = {}) {
  const resp = await fetch(path, opts);
  const text = await resp.text();
  let body;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = text;
  }
  if (!resp.ok) {
    const msg = body && body.error ? `${body.error.code}: ${body.error.message}` : `${resp.status} ${text}`;
    throw new Error(msg);
  }
  return body;
}

const runProgram = (name, params) =>
  api("/v1/run/" + encodeURIComponent(name), { method: "POST", body: JSON.stringify(params) });

// ---- views ----

for (const b of document.querySelectorAll("button.tab")) {
  b.addEventListener("click", () => showView(b.dataset.view));
}

function showView(name) {
  for (const b of document.querySelectorAll("button.tab")) b.classList.toggle("active", b.dataset.view === name);
  for (const v of document.querySelectorAll(".view")) v.hidden = v.id !== "view-" + name;
  if (name === "status") pollStatus();
}

for (const b of document.querySelectorAll("button.rtab")) {
  b.addEventListener("click", () => showResult(b.dataset.result));
}

function showResult(name) {
  for (const b of document.querySelectorAll("button.rtab")) b.classList.toggle("active", b.dataset.result === name);
  for (const k of ["table", "json", "graph"]) $("result-" + k).hidden = k !== name;
  if (name === "graph" && state.cy) {
    state.cy.resize();
    state.cy.fit(undefined, 30);
  }
}

// ---- the program form ----

async function loadPrograms() {
  const { programs } = await api("/v1/programs");
  state.programs = programs;
  const sel = $("program");
  sel.replaceChildren();
  for (const p of programs) {
    const o = document.createElement("option");
    o.value = p.name;
    o.textContent = p.kind === "analysis" ? `${p.name} (analysis)` : p.name;
    sel.append(o);
  }
  renderForm();
}

function currentProgram() {
  return state.programs.find((p) => p.name === $("program").value);
}

function renderForm(values = {}) {
  const p = currentProgram();
  const form = $("params");
  form.replaceChildren();
  $("program-doc").textContent = p ? p.description : "";
  if (!p) return;
  for (const par of p.params || []) {
    const label = document.createElement("label");
    label.textContent = par.name;
    label.htmlFor = "param-" + par.name;
    let input;
    if (par.type === "bool") {
      input = document.createElement("select");
      for (const v of ["", "true", "false"]) {
        const o = document.createElement("option");
        o.value = v;
        o.textContent = v || "(default)";
        input.append(o);
      }
    } else if (["string", "int", "number", "string[]"].includes(par.type)) {
      input = document.createElement("input");
      input.type = par.type === "int" || par.type === "number" ? "number" : "text";
      if (par.type === "number") input.step = "any";
      if (par.type === "string[]") input.placeholder = "a, b, c";
    } else {
      input = document.createElement("textarea");
      input.rows = 2;
      input.placeholder = "JSON";
    }
    input.id = "param-" + par.name;
    input.name = par.name;
    input.dataset.type = par.type;
    const v = values[par.name];
    if (v !== undefined) input.value = formValue(par.type, v);
    const type = document.createElement("span");
    type.className = "type";
    type.textContent = par.type;
    form.append(label, input, type);
  }
}

function formValue(type, v) {
  if (type === "string[]" && Array.isArray(v)) return v.join(", ");
  if (typeof v === "object") return JSON.stringify(v);
  return String(v);
}

// formParams reads the form into a params object; empty fields are left out
// (the program's default).
function formParams() {
  const out = {};
  for (const el of $("params").elements) {
    const raw = el.value.trim();
    if (raw === "") continue;
    switch (el.dataset.type) {
      case "string":
        out[el.name] = raw;
        break;
      case "bool":
        out[el.name] = raw === "true";
        break;
      case "int":
      case "number":
        out[el.name] = Number(raw);
        break;
      case "string[]":
        out[el.name] = raw.split(",").map((s) => s.trim()).filter(Boolean);
        break;
      default:
        try {
          out[el.name] = JSON.parse(raw);
        } catch (e) {
          throw new Error(`${el.name}: not JSON: ${e.message}`);
        }
    }
  }
  return out;
}

$("program").addEventListener("change", () => renderForm());
$("mode").addEventListener("change", () => setMode($("mode").value));

function setMode(mode) {
  $("mode").value = mode;
  const dql = mode === "dql";
  $("program-pick").hidden = dql;
  $("params").hidden = dql;
  $("program-doc").hidden = dql;
  $("dql").hidden = !dql;
  $("dql-note").hidden = !dql;
}

// ---- running ----

$("run").addEventListener("click", () => run());
$("params").addEventListener("submit", (e) => {
  e.preventDefault();
  run();
});

async function run(entry) {
  const status = $("result-status");
  status.className = "";
  status.textContent = "running…";
  try {
    entry = entry || currentEntry();
    const t0 = performance.now();
    let result;
    if (entry.mode === "dql") {
      result = await api("/console/dgraph/query", {
        method: "POST",
        headers: { "Content-Type": "application/dql" },
        body: entry.dql,
      });
    } else {
      result = (await runProgram(entry.program, entry.params)).result;
    }
    const ms = Math.round(performance.now() - t0);
    addHistory(entry);
    state.runs++;
    state.last = { entry, result };
    status.textContent = `${entry.mode === "dql" ? "DQL" : entry.program}: ${ms} ms`;
    renderTable(result, entry);
    $("result-json").textContent = JSON.stringify(result, null, 2);
    renderGraph(result);
  } catch (e) {
    status.className = "error";
    status.textContent = e.message;
  }
}

function currentEntry() {
  if ($("mode").value === "dql") return { mode: "dql", dql: $("dql").value };
  return { mode: "program", program: $("program").value, params: formParams() };
}

// ---- history (localStorage) ----

function history() {
  try {
    return JSON.parse(localStorage.getItem(HISTORY_KEY)) || [];
  } catch {
    return [];
  }
}

function addHistory(entry) {
  const key = JSON.stringify(entry);
  const h = history().filter((e) => JSON.stringify(e) !== key);
  h.unshift(entry);
  localStorage.setItem(HISTORY_KEY, JSON.stringify(h.slice(0, HISTORY_MAX)));
  renderHistory();
}

function renderHistory() {
  const ol = $("history");
  ol.replaceChildren();
  for (const e of history()) {
    const li = document.createElement("li");
    li.textContent = e.mode === "dql" ? "DQL " + e.dql.replace(/\s+/g, " ").slice(0, 80) : `${e.program} ${JSON.stringify(e.params)}`;
    li.title = "load into the editor";
    li.addEventListener("click", () => restore(e));
    ol.append(li);
  }
}

function restore(e) {
  setMode(e.mode);
  if (e.mode === "dql") {
    $("dql").value = e.dql;
  } else {
    $("program").value = e.program;
    renderForm(e.params);
  }
}

// ---- table ----

// rowsOf finds the rows of a result: the result itself when a list, else its
// first list-of-objects field (DQL: the first block), else one row.
function rowsOf(result) {
  if (Array.isArray(result)) return result;
  if (result && typeof result === "object") {
    const scope = result.data && typeof result.data === "object" ? result.data : result;
    for (const v of Object.values(scope)) {
      if (Array.isArray(v) && v.length && typeof v[0] === "object") return v;
    }
    return [scope];
  }
  return [{ result }];
}

function renderTable(result) {
  const rows = rowsOf(result).map((r) => (r && typeof r === "object" ? r : { value: r }));
  const cols = [];
  for (const r of rows) for (const k of Object.keys(r)) if (!cols.includes(k)) cols.push(k);
  const table = document.createElement("table");
  table.id = "rows";
  const head = table.createTHead().insertRow();
  for (const c of cols) {
    const th = document.createElement("th");
    th.textContent = c;
    head.append(th);
  }
  const body = table.createTBody();
  for (const r of rows) {
    const tr = body.insertRow();
    for (const c of cols) {
      const v = r[c];
      tr.insertCell().textContent = v === undefined ? "" : typeof v === "object" ? JSON.stringify(v) : String(v);
    }
  }
  const note = document.createElement("p");
  note.className = "doc";
  note.textContent = `${rows.length} row${rows.length === 1 ? "" : "s"}`;
  $("result-table").replaceChildren(table, note);
}

// ---- graph ----

const PALETTE = ["#2b6cb0", "#dd6b20", "#38a169", "#805ad5", "#d53f8c", "#319795", "#b7791f", "#e53e3e", "#4a5568"];

// labelOf is a handle's label: "person/alice" → "person".
function labelOf(handle) {
  const i = handle.indexOf("/");
  return i > 0 ? handle.slice(0, i) : "vertex";
}

// colourOf gives each label a palette colour, in order of first sight.
const colours = new Map();
function colourOf(label) {
  if (!colours.has(label)) colours.set(label, PALETTE[colours.size % PALETTE.length]);
  return colours.get(label);
}

const HANDLE_KEYS = new Set(["node", "src", "dst", "dest", "handle", "vertex"]);
const HANDLE_LIST_KEYS = new Set(["path", "nodes", "visited", "reached"]);

// graphOf extracts vertices and edges from a result: objects with src and
// dst are edges; handle, node, src, dst fields and path/nodes lists name
// vertices; DQL objects with a uid are vertices, nested ones edges by
// predicate.
function graphOf(result) {
  const nodes = new Map();
  const edges = new Map();
  const addNode = (id, label) => {
    if (typeof id !== "string" || id === "") return;
    if (!nodes.has(id)) nodes.set(id, { id, label: label || labelOf(id) });
  };
  const addEdge = (id, src, dst, label) => {
    addNode(src);
    addNode(dst);
    const eid = id || `${src}->${dst}:${label || ""}`;
    if (!edges.has(eid)) edges.set(eid, { id: eid, source: src, target: dst, label: label || "" });
  };
  const walk = (v, parentUID, pred) => {
    if (Array.isArray(v)) {
      for (const x of v) walk(x, parentUID, pred);
      return;
    }
    if (!v || typeof v !== "object") return;
    if (typeof v.uid === "string") {
      const kind = (Array.isArray(v["dgraph.type"]) && v["dgraph.type"][0]) || "node";
      addNode(v.uid, kind);
      const n = nodes.get(v.uid);
      n.name = v.name || v.uid;
      if (parentUID) addEdge("", parentUID, v.uid, pred);
      for (const [k, x] of Object.entries(v)) if (x && typeof x === "object") walk(x, v.uid, k);
      return;
    }
    if (typeof v.src === "string" && typeof v.dst === "string") {
      addEdge(v.handle, v.src, v.dst, v.props && typeof v.props.type === "string" ? v.props.type : "");
    }
    for (const [k, x] of Object.entries(v)) {
      if (typeof x === "string" && HANDLE_KEYS.has(k) && !(k === "handle" && v.src)) addNode(x);
      else if (HANDLE_LIST_KEYS.has(k) && Array.isArray(x) && x.every((s) => typeof s === "string")) {
        x.forEach((s) => addNode(s));
        if (k === "path") for (let i = 1; i < x.length; i++) addEdge("", x[i - 1], x[i], "path");
      } else if (x && typeof x === "object") walk(x, null, k);
    }
  };
  walk(result, null, "");
  return { nodes: [...nodes.values()], edges: [...edges.values()] };
}

function elementsOf(g) {
  return [
    ...g.nodes.map((n) => ({ group: "nodes", data: { ...n, name: n.name || n.id, colour: colourOf(n.label) } })),
    ...g.edges.map((e) => ({ group: "edges", data: e })),
  ];
}

function renderGraph(result) {
  const g = graphOf(result);
  state.expanded = new Set();
  if (state.cy) state.cy.destroy();
  state.cy = cytoscape({
    container: $("cy"),
    elements: elementsOf(g),
    style: [
      {
        selector: "node",
        style: {
          "background-color": "data(colour)",
          label: "data(name)",
          "font-size": 10,
          color: "#1d2330",
          "text-valign": "bottom",
          "text-margin-y": 3,
          width: 18,
          height: 18,
        },
      },
      { selector: "node.expanded", style: { "border-width": 3, "border-color": "#1d2330" } },
      {
        selector: "edge",
        style: {
          width: 1.5,
          "line-color": "#a0aec0",
          "target-arrow-color": "#a0aec0",
          "target-arrow-shape": "triangle",
          "curve-style": "bezier",
          label: "data(label)",
          "font-size": 8,
          color: "#667",
        },
      },
    ],
    layout: { name: g.nodes.length > 1 ? "cose" : "grid", animate: false },
    wheelSensitivity: 0.3,
  });
  state.cy.on("tap", "node", (ev) => {
    state.taps = (state.taps || 0) + 1;
    expand(ev.target.id());
  });
}

// expand adds a vertex's out-neighbours (get_edges) to the graph view.
async function expand(id) {
  const cy = state.cy;
  if (!cy || state.expanded.has(id) || !id.includes("/")) return;
  state.expanded.add(id);
  const status = $("result-status");
  try {
    const { result } = await runProgram("get_edges", { node: id, limit: 100 });
    const g = graphOf(result);
    const fresh = elementsOf(g).filter((el) => cy.getElementById(el.data.id).empty());
    const origin = cy.getElementById(id);
    const at = origin.position();
    cy.add(fresh.map((el) => (el.group === "nodes" ? { ...el, position: { x: at.x + (Math.random() - 0.5) * 120, y: at.y + (Math.random() - 0.5) * 120 } } : el)));
    origin.addClass("expanded");
    status.className = "";
    status.textContent = `expanded ${id}: ${g.edges.length} edges`;
    cy.layout({ name: "cose", animate: false, fit: true }).run();
  } catch (e) {
    state.expanded.delete(id);
    status.className = "error";
    status.textContent = `expand ${id}: ${e.message}`;
  }
}

state.graphOf = graphOf;
state.expand = expand;

// ---- status and throughput ----

const samples = []; // {t, requests, programs}
const SAMPLES_MAX = 60;
let statusTimer = null;

async function pollStatus() {
  clearTimeout(statusTimer);
  if ($("view-status").hidden) return;
  try {
    const st = await api("/v1/status");
    const table = $("status-table");
    table.replaceChildren();
    for (const [k, v] of Object.entries(st)) {
      const tr = table.insertRow();
      tr.insertCell().textContent = k;
      tr.insertCell().textContent = typeof v === "object" ? JSON.stringify(v) : String(v);
    }
    const text = await (await fetch("/metrics")).text();
    samples.push({ t: Date.now() / 1000, requests: metricSum(text, "weft_requests_total"), programs: metricSum(text, "weft_engine_programs_total") });
    if (samples.length > SAMPLES_MAX) samples.shift();
    drawChart();
  } catch (e) {
    $("status-table").replaceChildren();
    $("status-table").insertRow().insertCell().textContent = "status: " + e.message;
  }
  statusTimer = setTimeout(pollStatus, 2000);
}

// metricSum adds up every sample of a Prometheus text-format metric.
function metricSum(text, name) {
  let sum = 0;
  for (const line of text.split("\n")) {
    if (line.startsWith(name + " ") || line.startsWith(name + "{")) {
      const v = Number(line.slice(line.lastIndexOf(" ") + 1));
      if (!Number.isNaN(v)) sum += v;
    }
  }
  return sum;
}

function rates(key) {
  const out = [];
  for (let i = 1; i < samples.length; i++) {
    const dt = samples[i].t - samples[i - 1].t;
    out.push(dt > 0 ? Math.max(0, (samples[i][key] - samples[i - 1][key]) / dt) : 0);
  }
  return out;
}

function drawChart() {
  const svg = $("chart");
  const W = 600, H = 160, pad = 20;
  const series = [rates("requests"), rates("programs")];
  const max = Math.max(1, ...series.flat());
  const ns = "http://www.w3.org/2000/svg";
  svg.replaceChildren();
  const axis = document.createElementNS(ns, "text");
  axis.setAttribute("x", 4);
  axis.setAttribute("y", 12);
  axis.setAttribute("font-size", 10);
  axis.textContent = `${max.toFixed(1)}/s`;
  svg.append(axis);
  series.forEach((s, j) => {
    if (s.length < 1) return;
    const pts = s.map((v, i) => `${pad + (i * (W - 2 * pad)) / Math.max(1, s.length - 1)},${H - pad - (v / max) * (H - 2 * pad)}`);
    const line = document.createElementNS(ns, "polyline");
    line.setAttribute("points", pts.join(" "));
    line.setAttribute("fill", "none");
    line.setAttribute("stroke", j === 0 ? "#2b6cb0" : "#dd6b20");
    line.setAttribute("stroke-width", 2);
    svg.append(line);
  });
  state.samples = samples.length;
}

// ---- start ----

async function start() {
  renderHistory();
  setMode("program");
  try {
    const cfg = await api("/console/config.json");
    $("dql-note").textContent = cfg.dgraph
      ? `DQL runs on the Dgraph face at ${cfg.dgraph} (proxied through /console/dgraph/query).`
      : "The Dgraph face is off: start weft serve with --dgraph-http ADDR to run DQL here.";
    await loadPrograms();
    const first = state.programs.find((p) => p.name === "get_node");
    if (first) {
      $("program").value = first.name;
      renderForm({ node: "person/alice" });
    }
    state.ready = true;
  } catch (e) {
    $("result-status").className = "error";
    $("result-status").textContent = "loading the programs: " + e.message;
  }
}

start();
