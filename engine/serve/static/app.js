// The lexprobe page: forms -> /api/... -> tables, the offset fan and the projection (SVG drawn by hand; no build
// step, nothing from a CDN). The view lives in the URL's query string (every form field by name, plus the indexes;
// a word or pair list only while short), so a copied address opens the same view. Every table and figure exports:
// CSV is the API's own format=csv of the same request, figures as SVG and PNG, the projection also as JSON.
"use strict";

const $ = (id) => document.getElementById(id);
const PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2",
                 "#7f7f7f", "#bcbd22"];

const apiUrl = (endpoint, params) => `/api/${endpoint}?` + new URLSearchParams(params);

async function api(endpoint, params) {
  const response = await fetch(apiUrl(endpoint, params));
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

const FIELDS = ["index", "tokens", "pview", "pmethod", "pseed", "pxaxis", "pyaxis", "pclickk", "pwords", "pword", "pnk", "pdataset", "prelation",
                "ppairs", "plemma", "pik", "pcolour", "psearch", "word", "nk", "a", "a_star", "b", "method", "ak", "dataset",
                "lower", "relation", "sentence", "target", "sk", "text", "model", "pk"];
const LONG_FIELDS = ["pwords", "ppairs"];  // kept in the address only while short
const URL_LIMIT = 1500;                    // characters of one such field

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
    if (value && !(LONG_FIELDS.includes(name) && value.length > URL_LIMIT)) q.set(name, value);
  }
  history.replaceState(null, "", "?" + q.toString());
  return LONG_FIELDS.filter((name) => $(name).value.trim().length > URL_LIMIT);
}

// -------------------------------------------------------------------------------------------- views

async function run(view, work) {
  // "loading…" below the form until the answer lands; an error shows inline, in the view's own line
  const error = $(`${view}-error`), loading = $(`${view}-loading`);
  error.textContent = "";
  loading.hidden = false;
  try {
    await work();
  } catch (e) {
    error.textContent = e.message;
  } finally {
    loading.hidden = true;
  }
}

function exportCsv(view, endpoint, params) {
  // the API's own CSV of the same request: the download holds exactly the rows the view shows
  $(`${view}-csv`).href = apiUrl(endpoint, { ...params, format: "csv" });
  $(`${view}-exports`).hidden = false;
}

const views = {
  async neighbors() {
    const params = { index: $("index").value, word: $("word").value.trim(), k: $("nk").value };
    const body = await api("neighbors", params);
    exportCsv("neighbors", "neighbors", params);
    $("neighbors-out").replaceChildren(table([["rank", "rank"], ["word", "word"], ["score", "cosine"]], body.rows));
  },

  async analogy() {
    const params = {
      index: $("index").value, a: $("a").value.trim(), a_star: $("a_star").value.trim(), b: $("b").value.trim(),
      method: $("method").value, k: $("ak").value,
    };
    const body = await api("analogy", params);
    exportCsv("analogy", "analogy", params);
    $("analogy-out").replaceChildren(table([["rank", "rank"], ["word", "answer"], ["score", "score"]], body.rows));
  },

  async offsets() {
    const params = { index: $("index").value, dataset: $("dataset").value, relation: $("relation").value,
                     lowercase: $("lower").checked ? 1 : 0 };
    const body = await api("offsets", params);
    exportCsv("offsets", "offsets", params);
    drawOffsets(body);
  },

  async senses() {
    const params = { index: $("tokens").value, sentence: $("sentence").value.trim(), target: $("target").value.trim(),
                     k: $("sk").value, definitions: 1 };
    const body = await api("senses", params);
    exportCsv("senses", "senses", params);
    drawSenses(body);
  },

  async probe() {
    const params = { text: $("text").value.trim(), k: $("pk").value };
    if ($("model").value.trim()) params.model = $("model").value.trim();
    const body = await api("probe", params);
    exportCsv("probe", "probe", params);
    $("probe-out").replaceChildren(table([["rank", "rank"], ["token", "token"], ["probability", "probability"]],
                                         body.rows));
  },

  async projection() {
    const params = projectionParams();
    const body = await api("projection", params);
    exportCsv("projection", "projection", params);
    projection.body = body;
    drawProjection();
  },
};

async function fillRelations(view, dataset, select, lowercase) {
  // a dataset's relations into a select: "loading…" while they come, the error inline if they do not
  const keep = select.value;  // the URL's choice (readUrl added it) or the user's
  select.replaceChildren(el("option", { value: "", text: "loading…" }));
  try {
    const body = await api("offsets", { index: $("index").value, dataset: dataset.value, lowercase: lowercase ? 1 : 0 });
    select.replaceChildren(el("option", { value: "", text: "(pick a relation)" }),
      ...body.relations.map((r) => el("option", { value: r.code, text: `${r.relation} (${r.n_pairs})` })));
    if (body.relations.some((r) => r.code === keep)) select.value = keep;
  } catch (e) {
    select.replaceChildren(el("option", { value: "", text: "(no relations)" }));
    $(`${view}-error`).textContent = e.message;
  }
}

const OFFSETS_STYLE = `#offsets-plot .axis { stroke: #ccc; stroke-width: .005; }
#offsets-plot .circle { fill: none; stroke: #ddd; stroke-width: .005; }
#offsets-plot .true line { stroke: #2c6fbb; stroke-width: .006; opacity: .55; } #offsets-plot .true circle { fill: #2c6fbb; }
#offsets-plot .shuffled circle { fill: #bbb; }`;

function drawOffsets(body) {
  const svg = $("offsets-plot");
  const flip = (p) => ({ x: p.x, y: -p.y }); // SVG's y grows downwards
  const parts = [
    el("svg:style", { text: OFFSETS_STYLE }),
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
              el("td", {}, el("span", { class: "sense", style: `background:${colour}`, text: r.sense }),
                 el("span", { class: "gloss", text: r.definition || "" })),
              el("td", { class: "sentence" }, marked(r.sentence, colour)));
  });
  const head = el("tr", {}, ...["rank", "cosine", "sense and its WordNet gloss", "sentence"].map((h) => el("th", { text: h })));
  $("senses-out").replaceChildren(
    el("p", { class: "query" }, "query: ", marked(body.query, "#333")),
    el("p", { class: "muted", text: body.note }),
    el("table", {}, el("thead", {}, head), el("tbody", {}, ...rows)));
}

// ------------------------------------------------------------------------------------- the projection

const SVGNS = "http://www.w3.org/2000/svg";
const PLOT = { width: 900, height: 540, margin: 30, charWidth: 6.2 };  // label width: characters x 11px font
const METHOD_NAMES = { pca: "PCA", tsne: "t-SNE", umap: "UMAP", axes: "word axes" };
const GROUP_NAMES = { words: "group", neighbors: "query or neighbour", relation: "side of the relation",
                      senses: "sense", inserted: "inserted or original" };
const COLOUR_NAMES = { origin: "origin", frequency_bucket: "frequency bucket" };
const NONE = "(none)";
const LEGEND_ROWS = 14;
const projection = { body: null, leftOut: [] };
// the figure's own style, so that its SVG and PNG look as on the page
// (scoped by the figure's id: a <style> in an inline SVG holds for the whole page)
const PROJECTION_STYLE = `#projection-plot text { font: 11px system-ui, sans-serif; fill: #333; }
#projection-plot .point circle { stroke: #fff; stroke-width: 1; }
#projection-plot .point.hit circle { stroke: #000; stroke-width: 2; }
#projection-plot .point.hit text { font-weight: bold; fill: #000; } #projection-plot .dim { opacity: .15; }
#projection-plot .point.crowded text { display: none; } #projection-plot .point.crowded:hover text { display: inline; }
#projection-plot .point.selected circle { stroke: #000; stroke-width: 2.5; r: 6.5; }
#projection-plot .point.near circle { stroke: #d62728; stroke-width: 2.5; }
#projection-plot .point.selected text, #projection-plot .point.near text { font-weight: bold; fill: #000; }
#projection-plot .edge { stroke: #666; stroke-width: 1.2; opacity: .65; }
#projection-plot .legend text { font-size: 12px; } #projection-plot .legend .title { font-weight: bold; }`;

function need(id, what) {
  const value = $(id).value.trim();
  if (!value) throw new Error(`give ${what}`);
  return value;
}

function projectionParams() {
  // the request of the chosen view: the words index of the header, or its token index for the senses view
  const view = $("pview").value;
  const params = { view, method: $("pmethod").value, seed: $("pseed").value.trim() || "0" };
  if (params.method === "axes") {
    Object.assign(params, { x_axis: need("pxaxis", "the x axis (man->woman or bats:I01)"),
                            y_axis: need("pyaxis", "the y axis (man->woman or bats:I01)") });
  }
  if ($("pmeta").value.trim()) params.metadata = $("pmeta").value.trim();
  if (view === "senses") {
    return { ...params, index: $("tokens").value, lemma: need("plemma", "a lemma"), definitions: 1 };
  }
  params.index = $("index").value;
  if (view === "words") params.words = need("pwords", "a word list (type one or upload a file)");
  else if (view === "neighbors") Object.assign(params, { word: need("pword", "a word"), k: $("pnk").value });
  else if (view === "relation") {
    if ($("ppairs").value.trim()) params.pairs = $("ppairs").value.trim();
    else Object.assign(params, { dataset: $("pdataset").value, relation: need("prelation", "a relation or your own pairs") });
  } else params.k = $("pik").value;
  return params;
}

function projectionReady() {
  const view = $("pview").value;
  if (view === "relation") return Boolean($("prelation").value.trim() || $("ppairs").value.trim());
  const id = { words: "pwords", neighbors: "pword", senses: "plemma" }[view];
  return !id || Boolean($(id).value.trim());
}

function showViewFields() {
  const view = $("pview").value;
  for (const part of document.querySelectorAll("#projection-form .for")) {
    part.hidden = !part.dataset.views.split(" ").includes(view);
  }
  $("projection-axes").hidden = $("pmethod").value !== "axes";
}

const category = (value) => (value === null || value === undefined || value === "" ? NONE : String(value));

function drawProjection() {
  const body = projection.body, svg = $("projection-plot");
  const { width, height, margin, charWidth } = PLOT;
  // room on the right for the labels (drawn right of their point), up to a third of the width
  const right = Math.min(width / 3, 12 + charWidth * Math.max(...body.points.map((p) => String(p.label).length)));
  const xs = body.points.map((p) => p.x), ys = body.points.map((p) => p.y);
  const [x0, x1] = [Math.min(...xs), Math.max(...xs)], [y0, y1] = [Math.min(...ys), Math.max(...ys)];
  // one scale for both axes (a PCA plane keeps its shape), the cloud centred in the plot
  const scale = Math.min((width - 2 * margin - right) / ((x1 - x0) || 1), (height - 2 * margin) / ((y1 - y0) || 1));
  const cx = margin + (width - 2 * margin - right) / 2, cy = height / 2;
  const at = (p) => [cx + (p.x - (x0 + x1) / 2) * scale, cy - (p.y - (y0 + y1) / 2) * scale];  // SVG's y grows down
  projection.xy = body.points.map(at);
  projection.zoom = { k: 1, tx: 0, ty: 0 };
  projection.selected = null;
  projection.near = new Set();
  const edges = el("svg:g", { class: "edges" }, ...body.edges.map(([i, j]) => el("svg:line", {
    class: "edge", "marker-end": "url(#arrow)" },
    el("svg:title", { text: `${body.points[i].label} → ${body.points[j].label}` }))));
  const points = el("svg:g", { class: "points" }, ...body.points.map((p, i) => el("svg:g",
    { class: "point", "data-i": i, "data-label": p.label },
    el("svg:circle", { r: 4.5 }), el("svg:text", { x: 7, y: 4, text: p.label }))));
  svg.replaceChildren(
    el("svg:style", { text: PROJECTION_STYLE }),
    el("svg:defs", {}, el("svg:marker", { id: "arrow", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7,
                                          markerHeight: 7, orient: "auto" },
                          el("svg:path", { d: "M0,0 L10,5 L0,10 z", fill: "#666" })),
       el("svg:clipPath", { id: "plot-clip" }, el("svg:rect", { x: 0, y: 0, width, height }))),
    el("svg:rect", { class: "paper", x: 0, y: 0, width, height, fill: "#fff" }),
    el("svg:g", { class: "view", "clip-path": "url(#plot-clip)" }, edges, points),
    el("svg:g", { class: "legend", id: "projection-legend", transform: `translate(${margin},${height})` }));

  const info = [`${body.n} points of ${body.index}`,
    `${METHOD_NAMES[body.method] || body.method} computed by ${body.library}, seed ${body.seed}`];
  if (body.method === "pca" && body.explained && body.explained.length >= 2) {
    info.push(`the axes hold ${(100 * body.explained[0]).toFixed(1)}% and ${(100 * body.explained[1]).toFixed(1)}% `
              + "of the variance");
  }
  if (body.method === "axes" && body.axes.length === 2) {
    const [ax, ay] = body.axes;
    info.push(`x: cosine with ${ax.spec} (${ax.pairs} pairs), y: with ${ay.spec} (${ay.pairs} pairs; `
              + `cosine between the axes ${ay.cosine_to_x.toFixed(2)})`);
  }
  if (body.edges.length) info.push(`arrows: ${body.edges.length} offsets`);
  if (projection.leftOut.length) info.push("the list is too long to keep in the address; export it to share");
  $("projection-info").textContent = info.join(" · ");
  $("projection-csv").download = `projection-${body.view}-${body.method}.csv`;
  $("projection-near").replaceChildren();

  const unknown = body.unknown || [], suggestions = body.suggestions || {};
  $("projection-unknown").replaceChildren(...(unknown.length ? [
    el("p", { text: `Not in ${body.index}, left out (${unknown.length}):` }),
    el("ul", { class: "unknown" }, ...unknown.map((w) => el("li", {
      text: suggestions[w] ? `${w} (try '${suggestions[w]}')` : w })))] : []));

  const colour = $("pcolour"), wanted = colour.value;
  colour.querySelectorAll("option.meta").forEach((o) => o.remove());
  for (const column of body.metadata_columns || []) {
    colour.append(el("option", { class: "meta", value: `meta:${column}`, text: `metadata: ${column}` }));
  }
  if ([...colour.options].some((o) => o.value === wanted)) colour.value = wanted;
  const option = colour.querySelector('option[value="group"]');
  option.textContent = GROUP_NAMES[body.view] || "group";
  for (const o of colour.options) o.disabled = body.points.every((p) => category(field(p, o.value)) === NONE);
  if (colour.selectedOptions[0]?.disabled || !colour.value) colour.value = "group";
  $("projection-out").hidden = false;
  // each label's width as drawn (the estimate where the figure is not rendered)
  projection.widths = [...svg.querySelectorAll("g.point text")].map((t, i) => t.getComputedTextLength()
    || charWidth * String(body.points[i].label).length);
  layout();
  colourPoints();
  applySearch();
  $("projection-out").dataset.drawn = Number($("projection-out").dataset.drawn || 0) + 1;  // for scripts and tests
}

// a point's value for a colour: one of its fields, or a column of the user's metadata file ("meta:column")
const field = (p, key) => (key.startsWith("meta:") ? (p.metadata || {})[key.slice(5)] : p[key]);

function layout() {
  // the points and arrows where the zoom puts them (their size stays), then the labels that fit
  const body = projection.body, { k, tx, ty } = projection.zoom, svg = $("projection-plot");
  const xy = projection.xy.map(([x, y]) => [x * k + tx, y * k + ty]);
  svg.querySelectorAll("g.point").forEach((g, i) => g.setAttribute(
    "transform", `translate(${xy[i][0].toFixed(2)},${xy[i][1].toFixed(2)})`));
  svg.querySelectorAll("line.edge").forEach((line, n) => {
    const [i, j] = body.edges[n], [[ax, ay], [bx, by]] = [xy[i], xy[j]];
    const d = Math.hypot(bx - ax, by - ay) || 1, cut = Math.min(6, d / 2);
    for (const [name, v] of [["x1", ax], ["y1", ay], ["x2", bx - (bx - ax) * cut / d], ["y2", by - (by - ay) * cut / d]]) {
      line.setAttribute(name, v.toFixed(2));
    }
  });
  svg.dataset.zoom = k.toFixed(3);
  placeLabels(xy);
}

function placeLabels(xy) {
  // a label is shown where it overlaps no label shown before it; the selected point, its neighbours and the
  // search's matches go first, then the points in the API's order (the query first). Hover shows any label.
  const { width, height } = PLOT, svg = $("projection-plot");
  const groups = [...svg.querySelectorAll("g.point")];
  const rank = (i) => (i === projection.selected ? 0 : projection.near.has(i) ? 1
    : groups[i].classList.contains("hit") ? 2 : 3);
  const order = groups.map((_, i) => i).sort((a, b) => rank(a) - rank(b) || a - b);
  const placed = [];
  for (const i of order) {
    const [x, y] = xy[i], w = projection.widths[i];
    const box = [x + 6, y - 8, x + 8 + w, y + 7];
    const inside = x >= 0 && y >= 0 && x <= width && y <= height;
    const free = inside && !placed.some((b) => box[0] < b[2] && b[0] < box[2] && box[1] < b[3] && b[1] < box[3]);
    groups[i].classList.toggle("crowded", !free);
    if (free) placed.push(box);
  }
  svg.dataset.labels = placed.length;
}

function zoomBy(factor, [x, y] = [PLOT.width / 2, PLOT.height / 2]) {
  // zoom around (x, y) in the figure's units, which stays where it is
  const z = projection.zoom, k = Math.min(64, Math.max(0.25, z.k * factor));
  projection.zoom = { k, tx: x - (x - z.tx) * k / z.k, ty: y - (y - z.ty) * k / z.k };
  layout();
}

function resetZoom() {
  projection.zoom = { k: 1, tx: 0, ty: 0 };
  layout();
}

function figurePoint(event) {
  // the mouse in the figure's units
  const svg = $("projection-plot"), point = svg.createSVGPoint();
  [point.x, point.y] = [event.clientX, event.clientY];
  const at = point.matrixTransform(svg.getScreenCTM().inverse());
  return [at.x, at.y];
}

function wirePlot() {
  // wheel: zoom at the mouse; drag: pan; a click on a point (no drag): its nearest neighbours in the index
  const svg = $("projection-plot");
  let drag = null;
  svg.addEventListener("wheel", (event) => {
    if (!projection.body) return;
    event.preventDefault();
    zoomBy(Math.exp(-event.deltaY / 300), figurePoint(event));
  }, { passive: false });
  svg.addEventListener("mousedown", (event) => {
    if (projection.body && event.button === 0) drag = { at: figurePoint(event), moved: false };
  });
  window.addEventListener("mousemove", (event) => {
    if (!drag) return;
    const [x, y] = figurePoint(event), [dx, dy] = [x - drag.at[0], y - drag.at[1]];
    if (!drag.moved && Math.hypot(dx, dy) < 3) return;
    drag.moved = true;
    drag.at = [x, y];
    projection.zoom.tx += dx;
    projection.zoom.ty += dy;
    layout();
  });
  window.addEventListener("mouseup", (event) => {
    const clicked = drag && !drag.moved && event.target.closest && event.target.closest("#projection-plot g.point");
    drag = null;
    if (clicked) run("projection", () => showNeighbours(Number(clicked.dataset.i)));
  });
}

async function showNeighbours(i) {
  // the point's k nearest words in the index (the original space, not the plane), highlighted where plotted
  const body = projection.body, word = body.points[i].label, k = $("pclickk").value;
  const svg = $("projection-plot"), groups = [...svg.querySelectorAll("g.point")];
  if (body.view === "senses") throw new Error("neighbours of a token are not words of a words index: click a word's point");
  const rows = (await api("neighbors", { index: body.index, word, k })).rows;
  const where = new Map(body.points.map((p, j) => [p.label, j]));
  projection.selected = i;
  projection.near = new Set(rows.map((r) => where.get(r.word)).filter((j) => j !== undefined));
  groups.forEach((g, j) => {
    g.classList.toggle("selected", j === i);
    g.classList.toggle("near", projection.near.has(j));
  });
  layout();
  $("projection-near").replaceChildren(
    el("b", { text: `${word}: its ${rows.length} nearest words in ${body.index} (cosine in the original space; `
                    + `${projection.near.size} of them in the plot, ringed): ` }),
    ...rows.map((r) => el("span", { class: where.has(r.word) ? "in" : "out", text: `${r.word} ${r.score.toFixed(3)}` })));
  svg.dataset.near = rows.length;
}

function colourPoints() {
  // fills by the chosen field, and the legend under the plot (a sense with its gloss)
  const body = projection.body;
  if (!body) return;
  const key = $("pcolour").value, values = body.points.map((p) => category(field(p, key)));
  const colours = new Map();
  for (const v of values) {
    if (!colours.has(v)) colours.set(v, v === NONE ? "#aaa" : PALETTE[[...colours.keys()].filter((k) => k !== NONE).length
                                                                       % PALETTE.length]);
  }
  const circles = $("projection-plot").querySelectorAll("g.point circle");
  circles.forEach((c, i) => c.setAttribute("fill", colours.get(values[i])));
  const gloss = new Map();
  if (key === "group") body.points.forEach((p) => p.gloss && !gloss.has(p.group) && gloss.set(category(p.group), p.gloss));
  const entries = [...colours].slice(0, LEGEND_ROWS);
  const rows = entries.map(([value, colour], i) => {
    const text = gloss.has(value) ? `${value} — ${gloss.get(value)}` : value;
    return el("svg:g", { class: "entry", transform: `translate(0,${36 + 18 * i})` },
              el("svg:circle", { cx: 5, cy: -4, r: 5, fill: colour }),
              el("svg:text", { x: 16, y: 0, text: text.length > 140 ? text.slice(0, 139) + "…" : text }));
  });
  if (colours.size > LEGEND_ROWS) {
    rows.push(el("svg:text", { x: 16, y: 36 + 18 * LEGEND_ROWS, text: `… and ${colours.size - LEGEND_ROWS} more` }));
  }
  const title = key === "group" ? GROUP_NAMES[body.view] || "group"
    : key.startsWith("meta:") ? `metadata: ${key.slice(5)}` : COLOUR_NAMES[key];
  $("projection-legend").replaceChildren(el("svg:text", { class: "title", x: 0, y: 14, text: `colour: ${title}` }),
                                         ...rows);
  const full = PLOT.height + 36 + 18 * rows.length;
  const svg = $("projection-plot");
  svg.setAttribute("viewBox", `0 0 ${PLOT.width} ${full}`);
  svg.querySelector("rect.paper").setAttribute("height", full);
}

function applySearch() {
  const q = $("psearch").value.trim().toLowerCase(), points = $("projection-plot").querySelectorAll("g.point");
  let hits = 0;
  for (const g of points) {
    const hit = Boolean(q) && g.dataset.label.toLowerCase().includes(q);
    g.classList.toggle("hit", hit);
    g.classList.toggle("dim", Boolean(q) && !hit);
    hits += hit;
  }
  $("psearch-count").textContent = q ? `${hits} of ${points.length} labels match` : "";
  if (projection.xy) layout();  // the matches' labels go first
}

function showTip(event) {
  const g = event.target.closest && event.target.closest("g.point"), tip = $("projection-tip");
  if (!g || !projection.body) { tip.hidden = true; return; }
  const p = projection.body.points[Number(g.dataset.i)], view = projection.body.view;
  const lines = [el("b", { text: p.label })];
  const add = (name, value) => value !== null && value !== undefined && value !== "" && lines.push(el("br"),
    `${name}: ${typeof value === "number" ? value.toFixed(4) : value}`);
  add(GROUP_NAMES[view] || "group", p.group);
  add("score", p.score);
  add("gloss", p.gloss);
  add("origin", p.origin);
  add("frequency bucket", p.frequency_bucket);
  tip.replaceChildren(...lines);
  const box = tip.parentElement.getBoundingClientRect();
  tip.style.left = `${event.clientX - box.left + 12}px`;
  tip.style.top = `${event.clientY - box.top + 12}px`;
  tip.hidden = false;
}

// -------------------------------------------------------------------------------------------- export

function save(name, blob) {
  const a = el("a", { href: URL.createObjectURL(blob), download: name });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 60_000);
}

function svgText(svg, width, height) {
  const copy = svg.cloneNode(true);
  copy.setAttribute("xmlns", SVGNS);
  copy.setAttribute("width", width);
  copy.setAttribute("height", height);
  return new XMLSerializer().serializeToString(copy);
}

function exportSvg(svg, name, width) {
  const box = svg.viewBox.baseVal;
  save(`${name}.svg`, new Blob([svgText(svg, width, width * box.height / box.width)], { type: "image/svg+xml" }));
}

async function exportPng(svg, name, width) {
  const box = svg.viewBox.baseVal, height = Math.round(width * box.height / box.width);
  const image = new Image();
  image.src = "data:image/svg+xml;charset=utf-8," + encodeURIComponent(svgText(svg, width, height));
  await image.decode();
  const canvas = el("canvas", { width, height }), context = canvas.getContext("2d");
  context.fillStyle = "#fff";
  context.fillRect(0, 0, width, height);
  context.drawImage(image, 0, 0, width, height);
  canvas.toBlob((blob) => save(`${name}.png`, blob), "image/png");
}

const figureName = () => `projection-${projection.body.view}-${projection.body.method}`;

async function readInto(file, target, lines) {
  // an uploaded list into its text box (shown and editable before it is sent)
  const text = await file.text();
  target.value = lines ? lines(text) : text.trim();
}

const pairLines = (text) => text.split(/\r?\n/).map((line) => line.trim().split(/[\s,;]+/).slice(0, 2))
  .filter((pair) => pair.length === 2 && pair[0]).map((pair) => pair.join(" ")).join("\n");

// ------------------------------------------------------------------------------------------ wiring

function bind(view, filled) {
  $(`${view}-form`).addEventListener("submit", (event) => {
    event.preventDefault();
    projection.leftOut = writeUrl();
    run(view, views[view]);
  });
  // run the view at start-up when the URL filled its fields
  return () => filled() && run(view, views[view]);
}

const all = (...ids) => () => ids.every((id) => $(id).value.trim());

async function start() {
  let indexes = [];
  try {
    indexes = (await api("indexes", {})).indexes;
  } catch (e) {
    $("indexes-error").textContent = `the indexes: ${e.message}`;
  }
  $("status").textContent = "";
  const fill = (select, kind) => {
    const mine = indexes.filter((i) => i.kind === kind);
    select.replaceChildren(...(mine.length ? mine.map((i) => el("option", { value: i.name, text: `${i.name} (${i.count} x ${i.dim})` }))
                                            : [el("option", { value: "", text: `(no ${kind} index)` })]));
  };
  fill($("index"), "words");
  fill($("tokens"), "tokens");
  const q = readUrl();
  showViewFields();
  const runners = {
    projection: bind("projection", () => q.has("pview") && projectionReady()),
    neighbors: bind("neighbors", all("word")),
    analogy: bind("analogy", all("a", "a_star", "b")),
    offsets: bind("offsets", all("relation")),
    senses: bind("senses", all("sentence", "target")),
    probe: bind("probe", all("text")),
  };
  const offsetRelations = () => fillRelations("offsets", $("dataset"), $("relation"), $("lower").checked);
  const projectionRelations = () => fillRelations("projection", $("pdataset"), $("prelation"), false);
  $("dataset").addEventListener("change", offsetRelations);
  $("lower").addEventListener("change", offsetRelations);
  $("pdataset").addEventListener("change", projectionRelations);
  $("index").addEventListener("change", () => Promise.all([offsetRelations(), projectionRelations()]));
  for (const id of ["index", "tokens"]) $(id).addEventListener("change", writeUrl);
  $("pview").addEventListener("change", showViewFields);
  $("pmethod").addEventListener("change", showViewFields);
  $("pmeta-file").addEventListener("change", async (e) => {
    // the user's metadata file goes with the next projection (not into the address); one drawn is drawn again
    if (!e.target.files[0]) return;
    $("pmeta").value = await e.target.files[0].text();
    if (projection.body) run("projection", views.projection);
  });
  wirePlot();
  $("projection-zoom-in").addEventListener("click", () => zoomBy(1.5));
  $("projection-zoom-out").addEventListener("click", () => zoomBy(1 / 1.5));
  $("projection-zoom-reset").addEventListener("click", resetZoom);
  $("pwords-file").addEventListener("change", (e) => e.target.files[0] && readInto(e.target.files[0], $("pwords")));
  $("ppairs-file").addEventListener("change", (e) => e.target.files[0] && readInto(e.target.files[0], $("ppairs"), pairLines));
  $("pcolour").addEventListener("change", () => { colourPoints(); writeUrl(); });
  $("psearch").addEventListener("input", () => { applySearch(); writeUrl(); });
  $("projection-plot").addEventListener("mousemove", showTip);
  $("projection-plot").addEventListener("mouseleave", () => { $("projection-tip").hidden = true; });
  $("projection-png").addEventListener("click", () => exportPng($("projection-plot"), figureName(), 1800));
  $("projection-svg").addEventListener("click", () => exportSvg($("projection-plot"), figureName(), PLOT.width));
  $("projection-json").addEventListener("click", () => save(`${figureName()}.json`, new Blob(
    [JSON.stringify(projection.body, null, 1)], { type: "application/json" })));
  $("offsets-png").addEventListener("click", () => exportPng($("offsets-plot"), `offsets-${$("relation").value}`, 1200));
  $("offsets-svg").addEventListener("click", () => exportSvg($("offsets-plot"), `offsets-${$("relation").value}`, 560));
  if ($("index").value) await Promise.all([offsetRelations(), projectionRelations()]);
  else for (const select of [$("relation"), $("prelation")]) select.replaceChildren(el("option", { value: "", text: "(no words index)" }));
  await Promise.all(Object.values(runners).map((runIfFilled) => runIfFilled()));
  document.body.dataset.ready = "1";
}

start();
