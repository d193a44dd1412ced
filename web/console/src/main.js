// Weft's web console: a query editor (node programs with their params as a
// form, DQL through the Dgraph face) with history, results as a table, as
// JSON and as a graph (Cytoscape.js), a schema view (the native graph's
// size and programs; the Dgraph face's predicates with their indexes, and
// its types), and a cluster view (members, slots, epochs; live
// throughput, latency and Kronos charts). window.weftConsole exposes the state for the browser test.
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
  if (name === "cluster") pollCluster();
  if (name === "schema") loadSchema();
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

// ---- cluster: members, slots, epochs and live charts ----

const SERIES_COLORS = ["#2b6cb0", "#2f855a", "#c53030"];
const samples = []; // cluster.json answers, oldest first
const SAMPLES_MAX = 90; // 3 minutes at one poll per 2 s
let clusterTimer = null;

async function pollCluster() {
  clearTimeout(clusterTimer);
  if ($("view-cluster").hidden) return;
  try {
    const v = await api("/console/cluster.json");
    samples.push(v);
    if (samples.length > SAMPLES_MAX) samples.shift();
    renderCluster(v);
    drawCharts();
  } catch (e) {
    $("cluster-summary").className = "error";
    $("cluster-summary").textContent = "cluster: " + e.message;
  }
  try {
    const st = await api("/v1/status");
    const table = $("status-table");
    table.replaceChildren();
    for (const [k, v] of Object.entries(st)) {
      const tr = table.insertRow();
      tr.insertCell().textContent = k;
      tr.insertCell().textContent = typeof v === "object" ? JSON.stringify(v) : String(v);
    }
  } catch (e) {
    $("status-table").replaceChildren();
    $("status-table").insertRow().insertCell().textContent = "status: " + e.message;
  }
  state.samples = samples.length;
  clusterTimer = setTimeout(pollCluster, 2000);
}

// memberRates is each member's rates between two answers, by member id:
// requests/s, commits/s, aborts/s, Kronos calls/s and mean latency (ms).
// A member missing from either answer, or whose counters went back (it
// restarted), has none.
function memberRates(prev, cur) {
  const out = new Map();
  const dt = cur.at - prev.at;
  if (!(dt > 0)) return out;
  const before = new Map(prev.members.filter((m) => m.metrics).map((m) => [m.id, m.metrics]));
  for (const m of cur.members) {
    const a = before.get(m.id), b = m.metrics;
    if (!a || !b || b.requests < a.requests || b.latency_count < a.latency_count) continue;
    const dn = b.latency_count - a.latency_count;
    out.set(m.id, {
      requests: (b.requests - a.requests) / dt,
      commits: Math.max(0, b.commits - a.commits) / dt,
      aborts: Math.max(0, b.aborts - a.aborts) / dt,
      kronos: Math.max(0, b.kronos_calls - a.kronos_calls) / dt,
      latencyMs: dn > 0 ? ((b.latency_sum - a.latency_sum) / dn) * 1000 : null,
      calls: dn,
      latencySum: b.latency_sum - a.latency_sum,
    });
  }
  return out;
}

// totals sums the members' rates; latency is weighted by requests.
function totals(rates) {
  const t = { requests: 0, commits: 0, aborts: 0, kronos: 0, latencyMs: null };
  let calls = 0, sum = 0;
  for (const r of rates.values()) {
    t.requests += r.requests;
    t.commits += r.commits;
    t.aborts += r.aborts;
    t.kronos += r.kronos;
    calls += r.calls;
    sum += r.latencySum;
  }
  if (calls > 0) t.latencyMs = (sum / calls) * 1000;
  return t;
}

const fmt = (x, digits = 1) => (x == null ? "–" : x.toFixed(digits));

function loadText(load) {
  if (!load) return "";
  return Object.keys(load).sort().map((k) => {
    const x = load[k];
    return `${k}=${Number.isInteger(x) ? x : x.toFixed(1)}`;
  }).join(" ");
}

function fillTable(table, head, rows) {
  table.replaceChildren();
  const h = table.createTHead().insertRow();
  for (const c of head) {
    const th = document.createElement("th");
    th.textContent = c;
    h.append(th);
  }
  const body = table.createTBody();
  for (const r of rows) {
    const tr = body.insertRow();
    if (r.className) tr.className = r.className;
    for (const c of r.cells) {
      const td = tr.insertCell();
      if (c && typeof c === "object") {
        td.textContent = c.text;
        if (c.className) td.className = c.className;
      } else td.textContent = c == null ? "" : String(c);
    }
  }
}

function renderCluster(v) {
  const names = new Map(v.members.map((m) => [m.id, m.name || `member ${m.id}`]));
  const holder = (id) => (id ? names.get(id) || `member ${id}` : { text: "vacant", className: "vacant" });
  const live = v.members.filter((m) => m.live);
  const summary = $("cluster-summary");
  summary.className = "";
  const parts = [v.mode === "cluster" ? "Coordinated cluster" : "One server (weft serve)",
    `epoch ${v.epoch}` + (v.active_epoch !== v.epoch ? ` (active ${v.active_epoch})` : ""),
    `${live.length} live member${live.length === 1 ? "" : "s"}`];
  if (v.coordinator) {
    const c = v.coordinator;
    parts.push(`coordinator leader ${c.leader} at ${c.leader_address || "?"}, term ${c.term}, applied ${c.applied} (answered by replica ${c.replica})`);
  }
  summary.textContent = parts.join(" · ");

  const rates = samples.length >= 2 ? memberRates(samples[samples.length - 2], v) : new Map();
  fillTable($("members"), ["id", "name", "role", "state", "slot", "address", "heartbeat", "load", "req/s", "latency ms", "Kronos/s"],
    v.members.map((m) => {
      const r = rates.get(m.id);
      return {
        className: (m.live ? "" : "failed") + (m.self ? " self" : ""),
        cells: [m.id, m.name + (m.self && m.name !== "this server" ? " (this one)" : ""), m.role, m.state, m.slot >= 0 ? m.slot : "", m.address,
          m.heartbeat_age_ms >= 0 ? `${m.heartbeat_age_ms} ms ago` : "", loadText(m.load),
          r ? fmt(r.requests) : m.metrics_error ? { text: "–", className: "vacant" } : "",
          r ? fmt(r.latencyMs, 2) : "", r ? fmt(r.kronos) : ""],
      };
    }));
  fillTable($("slots"), ["role", "slot", "holder", "since epoch"],
    v.slots.map((s) => ({ cells: [s.role, s.index, holder(s.holder), s.since_epoch] })));
  fillTable($("epochs"), ["epoch", "active", "gatekeepers", "shards"],
    [...v.epochs].reverse().map((e) => ({
      cells: [e.epoch, e.active_epoch, (e.gatekeepers || []).map((id) => (id ? names.get(id) || id : "vacant")).join(", "),
        (e.shards || []).map((id) => (id ? names.get(id) || id : "vacant")).join(", ")],
    })));
}

// series returns, for each pair of successive answers, the totals' field.
function series(field) {
  const out = [];
  for (let i = 1; i < samples.length; i++) out.push(totals(memberRates(samples[i - 1], samples[i]))[field]);
  return out;
}

function drawCharts() {
  drawChart($("chart-throughput"), [series("requests"), series("commits"), series("aborts")], "/s");
  drawChart($("chart-latency"), [series("latencyMs")], " ms");
  drawChart($("chart-kronos"), [series("kronos")], "/s");
  const t = samples.length >= 2 ? totals(memberRates(samples[samples.length - 2], samples[samples.length - 1])) : null;
  state.cluster = t;
}

function drawChart(svg, lines, unit) {
  const W = 400, H = 140, pad = 16;
  const ns = "http://www.w3.org/2000/svg";
  const max = Math.max(1e-9, ...lines.flat().filter((x) => x != null));
  svg.replaceChildren();
  const axis = document.createElementNS(ns, "text");
  axis.setAttribute("x", 4);
  axis.setAttribute("y", 12);
  axis.setAttribute("font-size", 10);
  axis.textContent = `${max < 10 ? max.toFixed(2) : max.toFixed(0)}${unit}`;
  svg.append(axis);
  lines.forEach((s, j) => {
    if (s.length < 1) return;
    const pts = [];
    s.forEach((v, i) => {
      if (v == null) return;
      pts.push(`${pad + (i * (W - 2 * pad)) / Math.max(1, s.length - 1)},${H - pad - (v / max) * (H - 2 * pad)}`);
    });
    const line = document.createElementNS(ns, "polyline");
    line.setAttribute("points", pts.join(" "));
    line.setAttribute("fill", "none");
    line.setAttribute("stroke", SERIES_COLORS[j % SERIES_COLORS.length]);
    line.setAttribute("stroke-width", 2);
    line.setAttribute("vector-effect", "non-scaling-stroke");
    svg.append(line);
  });
}

// ---- schema ----

const PREDICATE_COUNT_MAX = 200; // predicates counted in one query

async function loadSchema() {
  try {
    const st = await api("/v1/status");
    $("native-summary").textContent =
      `${st.vertices} vertices, ${st.edges} edges over ${plural(st.shards, "shard")} ` +
      `and ${plural(st.gatekeepers, "gatekeeper")}, epoch ${st.epoch}.`;
  } catch (e) {
    $("native-summary").textContent = "status: " + e.message;
  }
  fillTable($("schema-programs"), ["program", "kind", "parameters", "what it does"], state.programs.map((p) => ({
    cells: [p.name, p.kind, (p.params || []).map((x) => `${x.name}: ${x.type}`).join(", "), p.description],
    program: p.name,
  })));
  $("programs-summary").textContent = `Programs and analyses (${state.programs.length}): node programs run from vertices at one snapshot, analyses over the whole snapshot`;
  [...$("schema-programs").tBodies[0].rows].forEach((tr, i) => {
    tr.addEventListener("click", () => openProgram(state.programs[i].name));
  });
  if (!state.dgraph) {
    $("dgraph-schema-note").textContent = "The Dgraph face is off: start weft serve with --dgraph-http ADDR to see its schema here.";
    $("dgraph-schema").hidden = true;
    state.schemaLoaded = true;
    return;
  }
  try {
    const { data } = await dql("schema {}");
    state.schema = { predicates: data.schema || [], types: data.types || [], counts: null };
    $("dgraph-schema-note").textContent =
      `${plural(state.schema.predicates.length, "predicate")} and ${plural(state.schema.types.length, "type")} on the Dgraph face at ${state.dgraph} (schema {}).`;
    $("dgraph-schema").hidden = false;
    renderSchema();
  } catch (e) {
    $("dgraph-schema-note").textContent = "schema {}: " + e.message;
  }
  state.schemaLoaded = true;
}

const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;

function dql(query) {
  return api("/console/dgraph/query", { method: "POST", headers: { "Content-Type": "application/dql" }, body: query });
}

function renderSchema() {
  const f = $("schema-filter").value.trim().toLowerCase();
  const { predicates, types, counts } = state.schema;
  const flags = (p) => ["reverse", "count", "upsert", "lang"].filter((k) => p[k]).map((k) => "@" + k).join(" ");
  const shown = predicates.filter((p) => !f || p.predicate.toLowerCase().includes(f));
  const head = ["predicate", "type", "index", "directives"];
  if (counts) head.push("nodes");
  fillTable($("schema-predicates"), head, shown.map((p) => {
    const cells = [p.predicate, p.list ? `[${p.type}]` : p.type, (p.tokenizer || []).join(", "), flags(p)];
    if (counts) cells.push(p.predicate in counts ? counts[p.predicate] : "");
    return { cells };
  }));
  [...$("schema-predicates").tBodies[0].rows].forEach((tr, i) => {
    tr.addEventListener("click", () => openPredicate(shown[i]));
  });
  const shownTypes = types.filter((t) => !f || t.name.toLowerCase().includes(f) ||
    (t.fields || []).some((x) => x.name.toLowerCase().includes(f)));
  fillTable($("schema-types"), ["type", "fields"], shownTypes.map((t) => ({
    cells: [t.name, (t.fields || []).map((x) => x.name).join(", ")],
  })));
}

$("schema-filter").addEventListener("input", () => state.schema && renderSchema());

// countPredicates counts the nodes that have each predicate, in one DQL
// query of one block per predicate (at most PREDICATE_COUNT_MAX).
$("schema-count").addEventListener("click", async () => {
  if (!state.schema) return;
  const preds = state.schema.predicates.slice(0, PREDICATE_COUNT_MAX);
  const blocks = preds.map((p, i) => `p${i}(func: has(<${p.predicate}>)) { count(uid) }`);
  $("schema-status").className = "";
  $("schema-status").textContent = "counting…";
  try {
    const { data } = await dql(`{ ${blocks.join("\n")} }`);
    const counts = {};
    preds.forEach((p, i) => {
      const b = data["p" + i];
      if (b && b[0]) counts[p.predicate] = b[0].count;
    });
    state.schema.counts = counts;
    renderSchema();
    const left = state.schema.predicates.length - preds.length;
    $("schema-status").textContent = left > 0 ? `the first ${preds.length} predicates counted (${left} more)` : "";
  } catch (e) {
    $("schema-status").className = "error";
    $("schema-status").textContent = e.message;
  }
});

function openProgram(name) {
  showView("query");
  setMode("program");
  $("program").value = name;
  renderForm();
}

function openPredicate(p) {
  showView("query");
  setMode("dql");
  const inner = p.type === "uid" ? `<${p.predicate}> { uid }` : `<${p.predicate}>`;
  $("dql").value = `{\n  q(func: has(<${p.predicate}>), first: 20) {\n    uid\n    ${inner}\n  }\n}`;
  run();
}

// ---- start ----

async function start() {
  renderHistory();
  setMode("program");
  try {
    const cfg = await api("/console/config.json");
    state.dgraph = cfg.dgraph || "";
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
