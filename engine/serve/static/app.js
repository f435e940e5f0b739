// The lexprobe page: forms -> /api/... -> tables and a scatter. The view lives in the URL's query string
// (every form field by name, plus the indexes), so a copied address opens the same view.
"use strict";

const $ = (id) => document.getElementById(id);
const PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2",
                 "#7f7f7f", "#bcbd22"];

async function api(endpoint, params) {
  const response = await fetch(`/api/${endpoint}?` + new URLSearchParams(params));
  let body;
  try { body = await response.json(); } catch (e) { throw new Error(`${response.status} ${response.statusText}`); }
  if (!response.ok) throw new Error(body.error || `${response.status} ${response.statusText}`);
  return body;
}

function el(tag, attrs = {}, ...children) {
  const node = tag.startsWith("svg:")
    ? document.createElementNS("http://www.w3.org/2000/svg", tag.slice(4)) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "text") node.textContent = v; else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c);
  return node;
}

function table(columns, rows) {
  const head = el("tr", {}, ...columns.map(([, label]) => el("th", { text: label })));
  const body = rows.map((r) => el("tr", {}, ...columns.map(([key]) => {
    const v = r[key];
    return typeof v === "number" && !Number.isInteger(v)
      ? el("td", { class: "num", text: v.toFixed(4) }) : el("td", { class: key, text: v ?? "" });
  })));
  return el("table", {}, el("thead", {}, head), el("tbody", {}, ...body));
}

// ----------------------------------------------------------------------------------------- the URL

const FIELDS = ["index", "tokens", "word", "nk", "a", "a_star", "b", "method", "ak", "dataset", "lower", "relation",
                "sentence", "target", "sk", "text", "model", "pk"];

function readUrl() {
  const q = new URLSearchParams(location.search);
  for (const name of FIELDS) {
    if (!q.has(name)) continue;
    const input = $(name);
    if (input.type === "checkbox") input.checked = q.get(name) === "1";
    else if (input.tagName === "SELECT" && ![...input.options].some((o) => o.value === q.get(name))) {
      input.append(el("option", { value: q.get(name), text: q.get(name) }));
      input.value = q.get(name);
    } else input.value = q.get(name);
  }
  return q;
}

function writeUrl() {
  const q = new URLSearchParams();
  for (const name of FIELDS) {
    const input = $(name);
    const value = input.type === "checkbox" ? (input.checked ? "1" : "") : input.value.trim();
    if (value) q.set(name, value);
  }
  history.replaceState(null, "", "?" + q.toString());
}

// -------------------------------------------------------------------------------------------- views

async function run(view, work) {
  const error = $(`${view}-error`);
  error.textContent = "";
  $("status").textContent = "working...";
  try {
    await work();
  } catch (e) {
    error.textContent = e.message;
  } finally {
    $("status").textContent = "";
  }
}

const views = {
  async neighbors() {
    const body = await api("neighbors", { index: $("index").value, word: $("word").value.trim(), k: $("nk").value });
    $("neighbors-out").replaceChildren(table([["rank", "rank"], ["word", "word"], ["score", "cosine"]], body.rows));
  },

  async analogy() {
    const body = await api("analogy", {
      index: $("index").value, a: $("a").value.trim(), a_star: $("a_star").value.trim(), b: $("b").value.trim(),
      method: $("method").value, k: $("ak").value,
    });
    $("analogy-out").replaceChildren(table([["rank", "rank"], ["word", "answer"], ["score", "score"]], body.rows));
  },

  async relations() {
    const body = await api("offsets", { index: $("index").value, dataset: $("dataset").value,
                                        lowercase: $("lower").checked ? 1 : 0 });
    const select = $("relation"), keep = select.value;
    select.replaceChildren(el("option", { value: "", text: "(pick a relation)" }),
      ...body.relations.map((r) => el("option", { value: r.code, text: `${r.relation} (${r.n_pairs})` })));
    if (body.relations.some((r) => r.code === keep)) select.value = keep;
  },

  async offsets() {
    const body = await api("offsets", { index: $("index").value, dataset: $("dataset").value,
                                        relation: $("relation").value, lowercase: $("lower").checked ? 1 : 0 });
    drawOffsets(body);
  },

  async senses() {
    const body = await api("senses", { index: $("tokens").value, sentence: $("sentence").value.trim(),
                                       target: $("target").value.trim(), k: $("sk").value });
    drawSenses(body);
  },

  async probe() {
    const params = { text: $("text").value.trim(), k: $("pk").value };
    if ($("model").value.trim()) params.model = $("model").value.trim();
    const body = await api("probe", params);
    $("probe-out").replaceChildren(table([["rank", "rank"], ["token", "token"], ["probability", "probability"]],
                                         body.rows));
  },
};

function drawOffsets(body) {
  const svg = $("offsets-plot");
  const flip = (p) => ({ x: p.x, y: -p.y }); // SVG's y grows downwards
  const parts = [
    el("svg:circle", { class: "circle", cx: 0, cy: 0, r: 1 }),
    el("svg:line", { class: "axis", x1: -1.1, y1: 0, x2: 1.1, y2: 0 }),
    el("svg:line", { class: "axis", x1: 0, y1: -1.1, x2: 0, y2: 1.1 }),
  ];
  const shuffled = el("svg:g", { class: "shuffled" }, ...body.shuffled.map((p) => {
    const q = flip(p);
    return el("svg:circle", { cx: q.x, cy: q.y, r: 0.018 }, el("svg:title", { text: `shuffled: ${p.start} -> ${p.end}` }));
  }));
  const truth = el("svg:g", { class: "true" }, ...body.points.map((p) => {
    const q = flip(p);
    return el("svg:g", {}, el("svg:line", { x1: 0, y1: 0, x2: q.x, y2: q.y }),
              el("svg:circle", { cx: q.x, cy: q.y, r: 0.022 }), el("svg:title", { text: `${p.start} -> ${p.end}` }));
  }));
  svg.replaceChildren(...parts, shuffled, truth);
  const pct = (v) => (100 * v).toFixed(0) + "%";
  $("offsets-scores").replaceChildren(
    el("h3", { text: body.relation }),
    table([["measure", "measure"], ["value", "value"]], [
      { measure: "pairs", value: body.n_pairs },
      { measure: "OCS (mean cosine of the offsets)", value: body.ocs },
      { measure: `PCS (AUC vs ${body.shuffles} shuffles)`, value: body.pcs },
    ]),
    el("p", { class: "legend" }, el("span", { style: "background:#2c6fbb" }), "true offsets",
       el("span", { style: "background:#bbb" }), "one shuffled set"),
    el("p", { class: "muted", text: `Unit offsets projected on the plane through the origin that fits them best `
      + `(axes hold ${pct(body.explained[0])} and ${pct(body.explained[1])} of their squared length).` }));
}

function marked(sentence, colour) {
  // "words [[target words]] words" (the API marks each target as the CLI does) -> text with a coloured <mark>
  const span = el("span"), open = sentence.indexOf("[["), close = sentence.lastIndexOf("]]");
  if (open < 0 || close < open) { span.append(sentence); return span; }
  span.append(sentence.slice(0, open));
  span.append(el("mark", { style: `background:${colour}`, text: sentence.slice(open + 2, close) }));
  span.append(sentence.slice(close + 2));
  return span;
}

function drawSenses(body) {
  const colours = new Map();
  for (const r of body.rows) if (!colours.has(r.sense)) colours.set(r.sense, PALETTE[colours.size % PALETTE.length]);
  const rows = body.rows.map((r) => {
    const colour = colours.get(r.sense);
    return el("tr", {}, el("td", { class: "num", text: r.rank }), el("td", { class: "num", text: r.score.toFixed(4) }),
              el("td", {}, el("span", { class: "sense", style: `background:${colour}`, text: r.sense })),
              el("td", { class: "sentence" }, marked(r.sentence, colour)));
  });
  const head = el("tr", {}, ...["rank", "cosine", "sense", "sentence"].map((h) => el("th", { text: h })));
  $("senses-out").replaceChildren(
    el("p", { class: "query" }, "query: ", marked(body.query, "#333")),
    el("p", { class: "muted", text: body.note }),
    el("table", {}, el("thead", {}, head), el("tbody", {}, ...rows)));
}

// ------------------------------------------------------------------------------------------ wiring

function bind(view, required) {
  $(`${view}-form`).addEventListener("submit", (event) => {
    event.preventDefault();
    writeUrl();
    run(view, views[view]);
  });
  // run the view at start-up when the URL filled its fields
  return () => required.every((id) => $(id).value.trim()) && run(view, views[view]);
}

async function start() {
  let indexes = [];
  try {
    indexes = (await api("indexes", {})).indexes;
  } catch (e) {
    $("status").textContent = e.message;
  }
  const fill = (select, kind) => select.replaceChildren(...indexes.filter((i) => i.kind === kind)
    .map((i) => el("option", { value: i.name, text: `${i.name} (${i.count} x ${i.dim})` })));
  fill($("index"), "words");
  fill($("tokens"), "tokens");
  const q = readUrl();
  const runners = {
    neighbors: bind("neighbors", ["word"]),
    analogy: bind("analogy", ["a", "a_star", "b"]),
    offsets: bind("offsets", ["relation"]),
    senses: bind("senses", ["sentence", "target"]),
    probe: bind("probe", ["text"]),
  };
  const refreshRelations = () => $("index").value && run("offsets", views.relations);
  $("dataset").addEventListener("change", refreshRelations);
  $("lower").addEventListener("change", refreshRelations);
  $("index").addEventListener("change", refreshRelations);
  for (const id of ["index", "tokens"]) $(id).addEventListener("change", writeUrl);
  await refreshRelations();
  if (q.get("relation")) $("relation").value = q.get("relation");
  await Promise.all(Object.values(runners).map((runIfFilled) => runIfFilled()));
  document.body.dataset.ready = "1";
}

start();
