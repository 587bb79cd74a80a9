// attn-cli HTML report. Reads the report documents (the --json documents, embedded once in #attn-data)
// and draws each with the view registered for its "command". No network, no libraries.
// A new command's view: registerView("compare", (doc, section) => { ... }) built from the shared
// components below: heatmap() and tokenLines() take any n_rows x n_cols matrix with separate row and
// column labels (cross-attention: rows = target queries, columns = source keys), dataTable(),
// vectorTable(), choice(), engineSummary(), droppedNotes() and settingsList(). The page header shows
// the command line once, above every document.
(function () {
  "use strict";

  const SVG = "http://www.w3.org/2000/svg";  // a namespace name, never fetched
  const VIEWS = {};

  /** Register the function that draws documents whose "command" is `command`: view(doc, section). */
  function registerView(command, view) { VIEWS[command] = view; }

  // ---- small DOM helpers -------------------------------------------------------------------------------

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    setAttrs(node, attrs);
    return add(node, ...children);
  }

  /** Append children to node: nested arrays are flattened, null/undefined/false skipped, the rest as text. */
  function add(node, ...children) {
    for (const child of children.flat(Infinity)) {
      if (child !== null && child !== undefined && child !== false) {
        node.append(child instanceof Node ? child : String(child));
      }
    }
    return node;
  }

  function svgEl(tag, attrs, text) {
    const node = document.createElementNS(SVG, tag);
    setAttrs(node, attrs);
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function setAttrs(node, attrs) {
    for (const [name, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (name === "class") node.setAttribute("class", value);
      else if (name === "style") node.style.cssText = value;  // CSSOM: allowed by a CSP without 'unsafe-inline'
      else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
      else node.setAttribute(name, value === true ? "" : String(value));
    }
  }

  /** Numbers as the terminal prints them: 3 decimals, 3 significant digits when large, a dash when masked. */
  function fmt(value, digits = 3) {
    if (value === null || value === undefined) return "—";
    return Math.abs(value) < 100 ? value.toFixed(digits) : value.toPrecision(3);
  }

  /** A share as the terminal writes it: "+0.26", "-0.12", and "0.00" when it rounds to zero (never "-0.00"). */
  function signed(value) {
    const text = value.toFixed(2);
    return +text === 0 ? "0.00" : (value > 0 ? "+" : "") + text;
  }

  /** Settings as the reader types them (flags.py's settings_text): {scale: "sqrt"} -> "--scale sqrt" on the
   * command line, "scale='sqrt'" in a report made from Python (the page's spelling is "keywords"). */
  let spelling = "options";
  function settingName(key) {
    return spelling === "keywords" ? key : `--${key.replace(/_/g, "-")}`;
  }
  function flagText(settings) {
    if (spelling === "keywords") {
      return Object.entries(settings).map(([key, value]) => `${key}=${pythonValue(value)}`).join(", ");
    }
    return Object.entries(settings).map(([key, value]) => settingName(key)
      + (value === true ? "" : ` ${typeof value === "number" ? +value.toPrecision(6) : value}`)).join(" ");
  }
  function pythonValue(value) {
    if (value === true || value === false) return value ? "True" : "False";
    if (typeof value === "number") return String(+value.toPrecision(6));
    return `'${value}'`;
  }

  /** A warning's remedies as one hint (flags.py's remedies_text): "try --scale sqrt (largest weights 0.35-0.35) or ...". */
  function remediesText(warning, pretrained) {
    const options = warning.remedies.map((r) => `${flagText(r.settings)} (largest weights ${r.largest_weights.map((w) => w.toFixed(2)).join("-")})`);
    if (warning.larger_scale) options.push(`a larger ${settingName("scale")}`);
    if (!options.length) return pretrained ? "a pretrained layer's weights fix the settings: this is what it learnt, not a setting to change"
      : "the weights file fixes the settings: train longer, or on more text, to change what it learnt";
    return "try " + [options.slice(0, -1).join(", "), options[options.length - 1]].filter(Boolean).join(" or ");
  }

  /** What uniform weights would score, over the keys each row may see (terminal.py's uniform_text). */
  function uniformText(rows, keys) {
    const seen = [...new Set(rows.map((row) => row.visible_keys))].sort((a, b) => a - b);
    if (seen.length === 1 && seen[0] === keys) return `${Math.log2(keys).toFixed(2)} = uniform over ${keys}`;
    const ends = [...new Set([seen[0], seen[seen.length - 1]])].map((k) => `${Math.log2(k).toFixed(2)} for ${k}`);
    return `log2 k = uniform over the k words a row may see (${ends.join(" to ")})`;
  }

  /** " (see it with --shuffle-check)" when a note names the settings that show it (flags.py's see_with_text). */
  function seeWithText(note) {
    return note.see_with ? ` (see it with ${flagText(note.see_with)})` : "";
  }

  /** Row and column labels; a repeated word gets its position (#n) so rows stay distinct, as in the terminal. */
  function tokenLabels(texts) {
    const counts = {};
    texts.forEach((t) => { counts[t] = (counts[t] || 0) + 1; });
    return texts.map((t, i) => (counts[t] > 1 ? `${t}#${i + 1}` : t));
  }

  function shorten(text, limit) { return text.length <= limit ? text : text.slice(0, limit - 1) + "…"; }

  /** The terminal's heat colour: dark (row minimum) to bright yellow (row maximum). */
  function heat(share) {
    const r = Math.round(40 + share * 215), g = Math.round(40 + share * 175), b = Math.round(60 - share * 30);
    return { background: `rgb(${r},${g},${b})`, color: share > 0.55 ? "#000" : "#fff" };
  }

  // ---- tooltip -----------------------------------------------------------------------------------------

  const tooltip = document.getElementById("attn-tooltip");

  /** Show `rows` ([label, value] pairs under a bold title) next to the pointer. */
  function showTooltip(event, title, rows) {
    tooltip.replaceChildren(el("div", {}, el("b", {}, title)),
      ...rows.map(([label, value]) => el("div", { class: "row" }, el("span", {}, label), el("span", {}, value))));
    tooltip.hidden = false;
    const pad = 14, box = tooltip.getBoundingClientRect();
    const x = Math.min(event.clientX + pad, window.innerWidth - box.width - 4);
    const y = event.clientY + pad + box.height > window.innerHeight ? event.clientY - box.height - pad : event.clientY + pad;
    tooltip.style.left = `${Math.max(4, x)}px`;
    tooltip.style.top = `${Math.max(4, y)}px`;
  }

  function hideTooltip() { tooltip.hidden = true; }

  // ---- components shared by every view -------------------------------------------------------------------

  /**
   * A heatmap of any n_rows x n_cols matrix (self-attention is square; cross-attention is rectangular).
   * spec: {rowLabels, colLabels, values, masked(i, j) -> bool, tooltip(i, j) -> [title, rows], onRow(i), corner,
   * scale: "matrix" | "row"}
   * Cells are coloured over the cells not masked, from the smallest to the largest value of the whole matrix
   * (a flat row stays dim) or of each row (every row's peak is bright); masked cells are hatched. Beyond 16 columns the
   * numbers move to the tooltip so the matrix stays compact; the labels are sticky so a long sentence
   * scrolls inside its box.
   */
  function heatmap(spec) {
    const compact = spec.colLabels.length > 16;
    const masked = spec.masked || ((i, j) => spec.values[i][j] === null);
    const head = el("tr", {}, el("th", { class: "corner" }, spec.corner || ""),
      spec.colLabels.map((label, j) => el("th", { scope: "col", "data-col": j, title: label },
        el("span", { class: "col-label" }, shorten(label, 16)))));
    const open = spec.values.map((row, i) => row.filter((v, j) => !masked(i, j)));
    const range = (values) => [Math.min(...values), Math.max(...values)];
    const whole = range(open.flat());
    const body = spec.values.map((row, i) => {
      const [low, high] = spec.scale === "row" ? range(open[i]) : whole;
      return el("tr", { "data-row": i },
        el("th", { scope: "row", title: spec.rowLabels[i] }, shorten(spec.rowLabels[i], 16)),
        row.map((value, j) => {
          if (masked(i, j)) return el("td", { class: "masked", "data-row": i, "data-col": j }, fmt(value));
          const colour = heat(high === low ? 0 : (value - low) / (high - low));
          return el("td", { "data-row": i, "data-col": j, "data-value": value,
            style: `background:${colour.background};color:${colour.color}` }, fmt(value));
        }));
    });
    const table = el("table", { class: compact ? "heatmap compact" : "heatmap" }, el("thead", {}, head), el("tbody", {}, body));
    table.addEventListener("mouseover", (event) => {
      const cell = event.target.closest("td");
      if (!cell) return;
      const [title, rows] = spec.tooltip(+cell.dataset.row, +cell.dataset.col);
      showTooltip(event, title, rows);
      table.querySelectorAll("thead th.selected").forEach((th) => th.classList.remove("selected"));
      table.querySelector(`thead th[data-col="${cell.dataset.col}"]`).classList.add("selected");
    });
    table.addEventListener("mouseleave", () => {
      hideTooltip();
      table.querySelectorAll("thead th.selected").forEach((th) => th.classList.remove("selected"));
    });
    table.addEventListener("click", (event) => {
      const row = event.target.closest("tbody tr");
      if (row && spec.onRow) spec.onRow(+row.dataset.row);
    });
    return {
      node: el("div", { class: "scroll" }, table),
      /** The legend of the colours: which scale, and the values at its two ends. */
      legend: spec.scale === "row" ? "colour per row: dark = the row's smallest value, yellow = its largest"
        : `colour over the whole matrix: dark = its smallest value (${fmt(whole[0])}), yellow = its largest (${fmt(whole[1])})`,
      /** Mark row i (or none) as the selected query. */
      select(i) {
        table.querySelectorAll("tbody tr").forEach((tr) => tr.classList.toggle("selected", +tr.dataset.row === i));
      },
    };
  }

  /**
   * Token lines: queries on the left, keys on the right, one line per pair, thickness = weight.
   * spec: {queryLabels, keyLabels, weights (n_q x n_k), top (k, or null for every line), onFocus(focus | null)}
   * where focus = {side, index}. With `top`, only each query's k heaviest lines are drawn until a token is
   * focused, when all of its lines show: 22 words give 66 lines instead of a hairball of 484.
   * Hovering a token shows its row (a query) or column (a key) alone, with the weights written next to the
   * other side's tokens; a click pins it, a second click releases it. One token per 22-pixel row: no overlap.
   */
  function tokenLines(spec) {
    const nq = spec.queryLabels.length, nk = spec.keyLabels.length;
    const rowHeight = 22, top = 30, labelWidth = 130, valueWidth = 46, span = 240, thickest = 10;
    const x1 = labelWidth + valueWidth, x2 = x1 + span, width = x2 + valueWidth + labelWidth;
    const rows = Math.max(nq, nk);
    const ys = (n, i) => top + (rows - n) * rowHeight / 2 + i * rowHeight + rowHeight / 2;
    const svg = svgEl("svg", { class: spec.top ? "lines top" : "lines", width, height: top + rows * rowHeight + 8,
      viewBox: `0 0 ${width} ${top + rows * rowHeight + 8}`, role: "img",
      "aria-label": "attention lines: queries on the left, keys on the right, thickness = weight" });
    svg.append(svgEl("text", { class: "heading", x: labelWidth, y: 14, "text-anchor": "end" }, "queries"),
      svgEl("text", { class: "heading", x: x2 + valueWidth, y: 14 }, "keys"));
    const lines = [];
    spec.weights.forEach((row, i) => {
      const strongest = new Set(row.map((w, j) => [w, j]).sort((a, b) => b[0] - a[0]).slice(0, spec.top || row.length)
        .map(([, j]) => j));
      row.forEach((w, j) => {
        if (w <= 0) return;
        const line = svgEl("line", { x1, y1: ys(nq, i), x2, y2: ys(nk, j), "stroke-width": Math.max(w * thickest, 0.3),
          "data-q": i, "data-k": j, "data-weight": w, class: strongest.has(j) ? null : "minor" });
        lines.push(line);
        svg.append(line);
      });
    });
    const token = (side, i, label, x, y, anchor) => {
      const node = svgEl("text", { class: "token", x, y: y + 4, "text-anchor": anchor, tabindex: 0,
        "data-side": side, "data-index": i }, shorten(label, 18));
      node.append(svgEl("title", {}, label));
      svg.append(node);
      return node;
    };
    const queries = spec.queryLabels.map((label, i) => token("query", i, label, labelWidth, ys(nq, i), "end"));
    const keys = spec.keyLabels.map((label, j) => token("key", j, label, x2 + valueWidth, ys(nk, j), "start"));
    const values = svgEl("g", { class: "values" });
    svg.append(values);

    let pinned = null;
    function show(focus) {
      values.replaceChildren();
      svg.classList.toggle("focused", focus !== null);
      queries.forEach((n, i) => n.classList.toggle("selected", focus !== null && focus.side === "query" && focus.index === i));
      keys.forEach((n, j) => n.classList.toggle("selected", focus !== null && focus.side === "key" && focus.index === j));
      if (focus !== null) {
        const mine = focus.side === "query" ? "q" : "k";
        lines.forEach((line) => line.classList.toggle("on", +line.dataset[mine] === focus.index));
        if (focus.side === "query") {
          spec.weights[focus.index].forEach((w, j) => values.append(svgEl("text", { class: "value", x: x2 + 4,
            y: ys(nk, j) + 4, "data-side": "key", "data-index": j, "data-weight": w }, fmt(w))));
        } else {
          spec.weights.forEach((row, i) => values.append(svgEl("text", { class: "value", x: x1 - 4, y: ys(nq, i) + 4,
            "text-anchor": "end", "data-side": "query", "data-index": i, "data-weight": row[focus.index] }, fmt(row[focus.index]))));
        }
      }
      if (spec.onFocus) spec.onFocus(focus);
    }
    const focusOf = (node) => ({ side: node.dataset.side, index: +node.dataset.index });
    const same = (a, b) => a !== null && b !== null && a.side === b.side && a.index === b.index;
    for (const node of [...queries, ...keys]) {
      node.addEventListener("mouseenter", () => show(focusOf(node)));
      node.addEventListener("focus", () => show(focusOf(node)));
      node.addEventListener("mouseleave", () => show(pinned));
      node.addEventListener("blur", () => show(pinned));
      node.addEventListener("click", () => { pinned = same(pinned, focusOf(node)) ? null : focusOf(node); show(pinned); });
      node.addEventListener("keydown", (event) => { if (event.key === "Enter" || event.key === " ") node.dispatchEvent(new Event("click")); });
    }
    return {
      node: el("div", { class: "scroll" }, svg),
      /** Show this focus for now (null: back to the pinned one). */
      preview(focus) { show(focus === null ? pinned : focus); },
      /** Keep this focus (null: none) until the next click. */
      pin(focus) { pinned = focus; show(focus); },
    };
  }

  /** Radio buttons; onChange(value) runs when the choice changes. */
  function choice(legend, name, options, selected, onChange) {
    return el("fieldset", { class: name }, el("legend", {}, legend),
      options.map(([value, label]) => el("label", {},
        el("input", { type: "radio", name, value, checked: value === selected, onchange: () => onChange(value) }), " ", label)));
  }

  /** A plain table: columns = [[heading, className]], rows = arrays of cell contents. */
  function dataTable(columns, rows) {
    return el("table", { class: "data" },
      el("thead", {}, el("tr", {}, columns.map(([name, cls]) => el("th", { class: cls || null, scope: "col" }, name)))),
      el("tbody", {}, rows.map((cells) => el("tr", {}, cells.map((cell, k) => el("td", { class: columns[k][1] || null }, cell))))));
  }

  /** The page header: the exact command line of the run, quoted for a shell, shown once for every document. */
  function pageHeader(page) {
    return el("header", { class: "page-header" },
      el("pre", { class: "command", title: "the command line (or Python call) that wrote this page" },
         `${page.command_line.startsWith("attn_cli.") ? ">>>" : "$"} ${page.command_line}`));
  }

  /** One line: the vector set and the engine settings in words. */
  function engineSummary(doc) {
    const settings = doc.settings;
    return el("p", { class: "note" }, `${doc.vectors.name}: ${doc.vectors.count.toLocaleString("en")} words × ${doc.vectors.dims} dims · `,
      `${modeText(settings, doc.model)}, ${settings.similarity} similarity, scale ×${+settings.scale_factor.toPrecision(4)}, `,
      `temperature ${settings.temperature}, ${settings.heads} head${settings.heads > 1 ? "s" : ""} of ${settings.d_head} dims, `,
      `mask ${settings.mask}, positions ${settings.positions}`,
      settings.position_norms ? ` (scale ${settings.position_scale}: codes' mean norm ${fmt(settings.position_norms.codes)}, words' ${fmt(settings.position_norms.words)})` : "",
      doc.weights ? el("br") : null, doc.weights ? weightsText(doc.weights) : null);
  }

  /** How Q, K and V were made (terminal.py's mode_text). */
  function modeText(settings, model) {
    if (model) return `${model.name} layer ${model.layer} of ${model.layers} (pretrained)`;
    return { trained: `trained projections (from seed ${settings.seed})`,
      projected: `random, untrained projections (seed ${settings.seed})` }[settings.mode] || "raw mode";
  }

  /** A trained layer's file and what it learnt from (terminal.py's weights_lines). */
  function weightsText(weights) {
    return `weights ${weights.file === null ? "in memory" : weights.file}: ${weights.layer.objective} on ${weights.corpus.name} `
      + `(${weights.corpus.train_sentences.toLocaleString("en")} sentences), ${weights.training.epochs} epoch${weights.training.epochs === 1 ? "" : "s"}, `
      + `held-out loss ${weights.training.held_out_loss.toFixed(3)}`;
  }

  /** The words left out of the sentence, with spelling suggestions. */
  /** One note per unknown word (with suggestions), one per other reason listing its tokens (terminal.py's dropped_lines). */
  function droppedNotes(dropped) {
    const unknown = dropped.filter((d) => d.reason === "out of vocabulary");
    const reasons = [...new Set(dropped.filter((d) => d.reason !== "out of vocabulary").map((d) => d.reason))];
    return [
      ...unknown.map((d) => el("p", { class: "note dropped" }, `dropped “${d.text}”: ${d.reason}`,
        d.suggestions.length ? ` (did you mean ${d.suggestions.join(", ")}?)` : "")),
      ...reasons.map((reason) => el("p", { class: "note dropped" },
        `dropped ${dropped.filter((d) => d.reason === reason).map((d) => `“${d.text}”`).join(" ")}: ${reason}`)),
    ];
  }

  /**
   * Vectors as rows of their first coordinates and their length: rows = [[role, word, summary]] where a
   * summary is {first, norm, dims}. With `total`, the last row is a sum, set off by a rule.
   */
  function vectorTable(rows, total) {
    const { dims, first } = rows[0][2];
    const elided = first.length < dims;
    const columns = [[""], [""], ...first.map((_, m) => [`[${m + 1}]`, "num"]),
      ...(elided ? [[`… ${dims}`]] : []), ["length", "num"]];
    const table = dataTable(columns, rows.map(([role, word, vector]) => [role, word, vector.first.map((x) => fmt(x)),
      elided ? "…" : [], fmt(vector.norm)].flat()));
    table.classList.add("vectors");
    if (total) table.querySelector("tbody tr:last-child").classList.add("total");
    return el("div", { class: "scroll" }, table);
  }

  /** The vector set and every setting of the document: with the command line, enough to reproduce the page. */
  function settingsList(doc) {
    const text = (value) => (value === null ? "—" : typeof value === "object" ? JSON.stringify(value) : String(value));
    const entries = [["attn-cli", doc.attn_cli_version],
      ...Object.entries(doc.vectors).map(([key, value]) => [`vectors.${key}`, text(value)]),
      ...Object.entries(doc.settings).map(([key, value]) => [key, text(value)])];
    return [el("h2", {}, "Settings and vectors"),
      el("dl", { class: "settings" }, entries.map(([key, value]) => el("div", {}, el("dt", {}, key), el("dd", {}, value))))];
  }

  // ---- explain, and compare --cross (the same keys, with a target over a source) --------------------------

  const LAYERS = [["weights", "weights w"], ["scores", "scores s"], ["logits", "scaled scores l"]];
  const SCALES = [["matrix", "whole matrix"], ["row", "each row"]];
  const TOP_LINES = 3, TOP_LINES_FROM = 8;  // beyond 8 keys, each query's 3 strongest lines are drawn by default

  /**
   * Any document with heads, shifts and diagnostics: self-attention (explain) or cross-attention.
   * With options.nested (a title such as "Sentence 1"), it is one part of a larger view: a smaller title,
   * no settings (the larger view shows them once). Returns focusQuery(i | null, pin) to highlight query
   * i's row in the matrix, the lines and the shift table from outside.
   */
  function attentionView(doc, section, options = {}) {
    const cross = Boolean(doc.cross);
    const queries = cross ? doc.target : doc, keys = cross ? doc.source : doc;
    const labels = tokenLabels(queries.tokens.map((t) => t.text));
    const keyLabels = tokenLabels(keys.tokens.map((t) => t.text));
    const dropped = cross ? [...doc.source.dropped_tokens, ...doc.target.dropped_tokens] : doc.dropped_tokens;
    const settings = doc.settings;
    const state = { head: 0, layer: "weights", focus: null, scale: "matrix", lines: keyLabels.length > TOP_LINES_FROM ? "top" : "all", trained: true };
    let heads = doc.heads, diagnostics = doc.diagnostics;  // a trained layer's, or (switched) its random start's
    const id = section.dataset.document;
    add(section,
      cross ? el("h1", {}, "Cross-attention: ", el("q", {}, doc.target.sentence), " (queries) over ",
        el("q", {}, doc.source.sentence), " (keys, values)")
        : options.nested ? el("h2", { class: "sentence-title" }, `${options.nested}: `, el("q", {}, doc.sentence))
          : el("h1", {}, "Self-attention over ", el("q", {}, doc.sentence)),
      options.nested ? null : engineSummary(doc), droppedNotes(dropped));

    const controls = el("div", { class: "controls" });
    if (doc.initial) {
      controls.append(choice("weights", `weights-${id}`, [["trained", "trained"], ["initial", `random start (seed ${settings.seed})`]],
        "trained", (value) => {
          state.trained = value === "trained";
          ({ heads, diagnostics } = state.trained ? doc : doc.initial);
          draw();
        }));
    }
    if (heads.length > 1) {
      controls.append(choice("head", `head-${id}`, heads.map((h) => [String(h.index), `head ${h.index + 1}`]), "0",
        (value) => { state.head = +value; draw(); }));
    }
    controls.append(choice("matrix shows", `layer-${id}`, LAYERS, state.layer, (value) => { state.layer = value; draw(); }),
      choice("colour scale", `scale-${id}`, SCALES, state.scale, (value) => { state.scale = value; draw(); }),
      choice("lines", `lines-${id}`, [["top", `${TOP_LINES} strongest per query`], ["all", "all"]], state.lines,
        (value) => { state.lines = value; draw(); }));
    const panels = el("div", { class: "panels" });
    const after = el("div", {});
    add(section, controls, panels, after, options.nested ? null : settingsList(doc));
    let lines = null;  // the current head's token lines (drawn again on every switch)

    function caption() {
      const which = heads.length > 1 ? `, head ${state.head + 1} of ${heads.length}` : "";
      const factor = `${+settings.scale_factor.toPrecision(4)}`;
      return {
        weights: `Weights${which}: w = softmax(s × ${factor} / ${settings.temperature})`,
        scores: `Scores${which}: s = q·k (rows are queries, columns are keys)`,
        logits: `Scaled scores${which}: l = s × ${factor} / ${settings.temperature}`,
      }[state.layer];
    }

    function draw() {
      const head = heads[state.head];
      const diag = diagnostics.heads[state.head].rows;
      const matrix = heatmap({
        rowLabels: labels, colLabels: keyLabels, values: head[state.layer], corner: "query \\ key", scale: state.scale,
        masked: (i, j) => head.logits[i][j] === null,
        tooltip: (i, j) => [`${labels[i]} → ${keyLabels[j]}`, [["query", labels[i]], ["key", keyLabels[j]],
          ["raw score s", fmt(head.scores[i][j])], ["scaled score l", fmt(head.logits[i][j])],
          ["weight w", fmt(head.weights[i][j])]]],
        onRow: (i) => lines.pin(state.focus && state.focus.side === "query" && state.focus.index === i ? null : { side: "query", index: i }),
      });
      lines = tokenLines({
        queryLabels: labels, keyLabels, weights: head.weights, top: state.lines === "top" ? TOP_LINES : null,
        onFocus: (focus) => {
          state.focus = focus;
          matrix.select(focus && focus.side === "query" ? focus.index : null);
          shiftRows.forEach((tr, i) => tr.classList.toggle("selected", focus !== null && focus.index === i));
        },
      });
      panels.replaceChildren(
        el("div", { class: "panel matrix" }, el("h2", {}, caption()), matrix.node,
          el("p", { class: "note" }, matrix.legend, "; hover a cell for its numbers",
            heads[0].logits.some((row) => row.includes(null)) ? "; hatched = masked" : "")),
        el("div", { class: "panel lines" }, el("h2", {}, `Who attends to whom${heads.length > 1 ? `, head ${state.head + 1}` : ""}`),
          lines.node, el("p", { class: "note" }, "line thickness = weight",
            state.lines === "top" ? `; each query's ${TOP_LINES} strongest keys` : "",
            "; hover or click a word to see all of its row (query) or column (key)")));

      const shiftTable = shifts(doc, labels, keyLabels);
      const shiftRows = [...shiftTable.querySelectorAll("tbody tr")];
      after.replaceChildren();
      add(after,
        el("h2", {}, `Shift: own value s → contextual output y${state.trained ? "" : " (of the trained layer)"}`), el("div", { class: "scroll" }, shiftTable),
        el("p", { class: "note" }, `pulled by: ${cross ? "source" : "context"} words, weight w (share of the shift y−s they supply)`,
          settings.neighbors > 0 ? `; nearest words by cosine among ${settings.neighbor_vocab === null ? "all" : `the ${Math.min(settings.neighbor_vocab, doc.vectors.count).toLocaleString("en")} most frequent`} words; new after attention in bold green` : ""),
        el("h2", {}, `Diagnostics per query row${heads.length > 1 ? `, head ${state.head + 1}` : ""}`),
        el("div", { class: "scroll" }, dataTable([["token"], ["entropy (bits)", "num"], ["largest w", "num"], ["on"]],
          diag.map((row, i) => [labels[i], fmt(row.entropy_bits, 2), fmt(row.max_weight), keyLabels[row.argmax]]))),
        el("p", { class: "note" }, `0 bits = all weight on one word, ${uniformText(diag, keyLabels.length)}`),
        diagnostics.warnings.map((w) => el("div", { class: "warning" }, el("b", {}, "warning: "), w.message, el("br"),
          el("b", {}, "hint: "), remediesText(w, Boolean(doc.model)))));
      lines.pin(state.focus);
    }
    draw();
    return {
      focusQuery(index, pin) {
        const focus = index === null ? null : { side: "query", index };
        if (pin) lines.pin(focus);
        else lines.preview(focus);
      },
    };
  }

  /** The shift table; in cross-attention the pulling words are source tokens and there is no self weight. */
  function shifts(doc, labels, keyLabels) {
    const withNeighbors = doc.settings.neighbors > 0;
    const columns = [["token"], ["cos(s,y)", "num"], ["|y−s|", "num"], ["self w", "num"], ["pulled by"]];
    if (withNeighbors) columns.push(["nearest before: s"], ["nearest after: y"]);
    return dataTable(columns, doc.shifts.map((shift) => {
      const pulled = shift.pulled_by.map((c, k) => [k ? el("br") : null,  // a pair per line, never broken
        `${keyLabels[c.index]}\u00a0${fmt(c.weight)}\u00a0(${signed(c.shift_share)})`]).flat();
      const cells = [labels[shift.index], fmt(shift.cosine), fmt(shift.delta_norm),
        shift.self_weight == null ? "—" : fmt(shift.self_weight),
        pulled.length ? pulled : "—"];
      if (withNeighbors) {
        const before = new Set(shift.neighbors_before.map((n) => n.word));
        cells.push(shift.neighbors_before.map((n) => n.word).join(", "),
          shift.neighbors_after.map((n, k) => [k ? ", " : "", before.has(n.word) ? n.word : el("span", { class: "new" }, n.word)]).flat());
      }
      return cells;
    }));
  }

  registerView("explain", (doc, section) => { attentionView(doc, section); });
  registerView("compare", (doc, section) => { (doc.cross ? attentionView : compareView)(doc, section); });

  /**
   * compare: the verdict per shared word, then the sentences side by side (stacked when the screen is
   * narrow, and in print), each drawn as explain draws it. Hovering a verdict's word highlights its row
   * in every sentence; a click keeps it.
   */
  function compareView(doc, section) {
    const verdicts = dataTable([["word"], ["static cos", "num"], ["contextual cos", "num"], ["verdict"]],
      doc.words.map((w) => [w.word, fmt(w.static_cosine), fmt(w.contextual_cosine), w.verdict]));
    const columns = el("div", { class: "columns" });
    add(section, el("h1", {}, "Compare: ", doc.sentences.map((d, k) => [k ? " · " : "", el("q", {}, d.sentence)])),
      engineSummary(doc.sentences[0]), el("h2", {}, "Verdicts"), el("div", { class: "scroll" }, verdicts),
      el("p", { class: "note" }, "hover or click a word to highlight its row in each sentence"),
      columns, settingsList(doc.sentences[0]));
    const views = doc.sentences.map((sentence, k) => {
      const part = el("section", { class: "sentence", "data-document": `${section.dataset.document}-${k}`, "data-sentence": k });
      columns.append(part);
      return attentionView(sentence, part, { nested: `Sentence ${k + 1}` });
    });
    const rows = [...verdicts.querySelectorAll("tbody tr")];
    let pinned = null;
    function highlight(word, pin) {
      rows.forEach((tr, w) => tr.classList.toggle("selected", w === word));
      views.forEach((view, k) => {
        const occurrence = word === null ? undefined : doc.words[word].occurrences.find((o) => o.sentence === k);
        view.focusQuery(occurrence ? occurrence.index : null, pin);
      });
    }
    rows.forEach((tr, w) => {
      setAttrs(tr, { class: "pick", tabindex: 0, "data-word": doc.words[w].word,
        onmouseenter: () => highlight(w, false), onmouseleave: () => highlight(pinned, false),
        onclick: () => { pinned = pinned === w ? null : w; highlight(pinned, true); },
        onkeydown: (event) => { if (event.key === "Enter" || event.key === " ") tr.click(); } });
    });
  }

  // ---- trace: one word at a time, step by step (the terminal's seven steps, as data) ------------------------

  registerView("trace", traceView);

  /** The sentence's vectors and projections once, then the chosen traced word's steps (a selector when several). */
  function traceView(doc, section) {
    const labels = tokenLabels(doc.tokens.map((t) => t.text));
    const state = { trace: 0 };
    add(section, el("h1", {}, "Attention, step by step, over ", el("q", {}, doc.sentence)), engineSummary(doc),
      droppedNotes(doc.dropped_tokens),
      step(`Step 1 · Static vectors x: one embedding per word (${shown(doc, doc.static_vectors[0].dims)})`,
        vectorTable(doc.static_vectors.map((v, i) => ["x", labels[i], v])),
        "the same vector for a word whatever the sentence; |x| is its length"),
      doc.inputs && step("Step 1b · Positions added: x = embedding + sinusoidal position code",
        vectorTable(doc.inputs.map((v, i) => ["x", labels[i], v]))),
      step("Step 2 · Query, key and value", null, ...projectionWords(doc)),
      doc.projections && Object.entries(doc.projections.rows).map(([name, rows]) => step(
        `${name.toUpperCase()} (${doc.projections[name].join(" × ")}): first ${rows.length} rows`,
        vectorTable(rows.map((row, i) => [name.toUpperCase(), `row ${i + 1}`, row])))));
    const controls = el("div", { class: "controls" });
    if (doc.traces.length > 1) {
      controls.append(choice("traced word (the query)", `trace-${section.dataset.document}`,
        doc.traces.map((t, k) => [String(k), labels[t.index]]), "0", (value) => { state.trace = +value; draw(); }));
    }
    const body = el("div", { class: "traced" });
    add(section, controls, body, settingsList(doc));
    function draw() { body.replaceChildren(...tracedWord(doc, doc.traces[state.trace], labels)); }
    draw();
  }

  /** A numbered step: a bold caption, its picture or table, and notes in plain words. */
  function step(caption, content, ...notes) {
    return el("div", { class: "step" }, el("h3", {}, caption), content,
      notes.filter(Boolean).map((note) => el("p", { class: "note" }, note)));
  }

  /** 'first 3 of 128 dims', or 'all 3 dims' when every coordinate is shown. */
  function shown(doc, dims) {
    const count = Math.min(doc.dims_shown, dims);
    return count >= dims ? `all ${dims} dims` : `first ${count} of ${dims} dims`;
  }

  /** A setting or a constant derived from one (scale factor, temperature, std of W): 4 significant digits. */
  function setting(value) { return String(+value.toPrecision(4)); }

  function projectionWords(doc) {
    const projections = doc.projections;
    if (projections === null) {
      return ["Raw mode learns nothing: the same vector x plays all three roles, the query q (what a word looks for), "
        + "the key k (what it offers) and the value v (what it passes on)."];
    }
    const [dModel, width] = projections.w_q;
    const origin = `from numpy.random.default_rng(${projections.seed}), entries normal with standard deviation `
      + `1/√${dModel} = ${setting(projections.std[0])}`;
    const words = [projections.trained === null
      ? `q = x W_Q, k = x W_K, v = x W_V, each W of shape ${dModel} × ${width}: untrained random weights ${origin}.`
      : `q = x W_Q, k = x W_K, v = x W_V, each W of shape ${dModel} × ${width}: weights learnt by attn-cli train `
        + `(${projections.trained}), starting from random draws ${origin}.`];
    if (projections.w_o !== null) {
      const [rows, cols] = projections.w_o;
      words.push(`W_O (${rows} × ${cols}, std 1/√${rows} = ${setting(projections.std[1])}) maps the joined heads back to the embedding width.`);
    }
    return words;
  }

  /** Every step of one traced word: per head (scores, softmax, weighted sum), then the result and the notes. */
  function tracedWord(doc, trace, labels) {
    const word = labels[trace.index], many = trace.heads.length > 1;
    const parts = [el("h2", {}, `“${trace.token}”: word ${trace.index + 1} of ${labels.length} as the query`)];
    trace.heads.forEach((head) => parts.push(el("div", { class: many ? "head-block many" : "head-block", "data-head": head.index },
      many ? el("h3", { class: "head-title" }, `Head ${head.index + 1} of ${trace.heads.length}: dims `
        + `${head.columns[0] + 1}-${head.columns[1]} of q, k and v, attended on their own`) : null,
      headSteps(doc, head, word, labels, many || doc.projections !== null))));
    if (many) {
      parts.push(step(`Heads joined: y = [${trace.heads.map((h) => `y${h.index + 1}`).join(" | ")}]`,
        vectorTable([["y", word, trace.concatenation]])));
    }
    if (trace.output_projection !== null) {
      const [rows, cols] = trace.output_projection.shape;
      parts.push(step(`Output projection: y W_O, [${rows}] × [${rows} × ${cols}] → [${cols}]`,
        vectorTable([["y W_O", word, trace.output_projection.output]])));
    }
    parts.push(changeStep(doc, trace, labels), matrixStep(trace, word), notesStep(trace, labels));
    return parts;
  }

  /** Steps 2 (when q, k, v differ from x) to 5 of one head. */
  function headSteps(doc, head, word, labels, withVectors) {
    const settings = doc.settings, keys = head.keys, dims = head.query.dims;
    const elided = Math.min(doc.dims_shown, dims) < dims;
    const cosine = settings.similarity === "cosine";
    const written = keys.map((key) => {
      const sum = head.query.first.map((q, m) => `${fmt(q)}×${fmt(key.key.first[m])}`).join(" + ") + (elided ? " + …" : "");
      return cosine ? `(${sum} = ${fmt(key.dot)}) / (|q| ${fmt(head.query.norm)} × |k| ${fmt(key.key.norm)})` : sum;
    });
    const exps = head.exp_shift === 0 ? "exp(l_j)" : `exp(l_j − ${fmt(head.exp_shift)})`;
    const layers = [["s_j score", "score"], ["l_j scaled", "logit"], [exps, "exp"], ["w_j weight", "weight"]];
    const values = layers.map(([, name]) => keys.map((key) => key[name]));
    const row = heatmap({
      rowLabels: layers.map(([label]) => label), colLabels: keys.map((key) => labels[key.index]), values,
      corner: `${word} · key →`, masked: (i, j) => keys[j].masked || values[i][j] === null,
      tooltip: (i, j) => [`${word} → ${labels[j]}`, [["q · k", fmt(keys[j].dot)], ["score s", fmt(keys[j].score)],
        ["scaled l", keys[j].masked ? "masked" : fmt(keys[j].logit)], [exps, fmt(keys[j].exp)], ["weight w", fmt(keys[j].weight)]]],
    });
    return [
      withVectors && step(`Step 2 · q of “${word}”, k and v of every word (${shown(doc, dims)})`,
        vectorTable([["q", word, head.query], ...keys.map((k) => ["k", labels[k.index], k.key]),
          ...keys.map((k) => ["v", labels[k.index], k.value])])),
      step(`Step 3 · Scores ${cosine ? "cos(q, k_j) = q · k_j / (|q| |k_j|)" : "s_j = q · k_j"}: how well “${word}” matches each word`,
        el("div", { class: "scroll" }, dataTable([["key"], [`q · k_j = q₁k₁ + q₂k₂ + … (${dims} products)`], ["s_j", "num"]],
          keys.map((key, j) => [labels[key.index], el("code", {}, written[j]), fmt(key.score)]))),
        "multiply matching coordinates and add them up; a larger score means more alike"),
      step(`Step 4 · Scale, then softmax: w_j = exp(l_j) / Σ exp(l_m)`, row.node,
        `l_j = s_j × ${setting(settings.scale_factor)} / ${setting(settings.temperature)}: scale ${scaleWords(settings)}, `
        + `temperature ${setting(settings.temperature)}. Σ ${exps} = ${fmt(head.exp_sum)}; Σ w_j = ${fmt(head.weight_sum)}: `
        + "exp makes every score positive and dividing by the sum makes the weights add up to 1 (hover a cell for its numbers)"),
      step(`Step 5 · Weighted sum y = Σ w_j v_j (${shown(doc, dims)})`,
        vectorTable([...keys.filter((key) => !key.masked).map((key) => [labels[key.index], `${fmt(key.weight)}·v`, key.term]), ["y", "= Σ", head.output]], true),
        "each word passes on its value v_j in proportion to its weight; y is their sum"
          + (keys.some((key) => key.masked) ? `; masked (${keys.filter((key) => key.masked).map((key) => `“${labels[key.index]}”`).join(", ")}): not in the sum` : "")),
    ];
  }

  function scaleWords(settings) {
    if (settings.scale === "sqrt") return `1/√${settings.d_head} = ${setting(settings.scale_factor)}`;
    return settings.scale === "none" ? "none (×1)" : `×${setting(settings.scale_factor)}`;
  }

  /** Step 6: the contextual vector y against the word's own vector, and the words it moved toward. */
  function changeStep(doc, trace, labels) {
    const shift = trace.shift, own = doc.settings.mode === "raw" ? "x" : "s";
    const rows = [[`cos(${own}, y)`, `${fmt(shift.cosine)} (1 = same direction)`],
      [`|y − ${own}|`, `${fmt(shift.delta_norm)} (how far it moved; |${own}| ${fmt(shift.static_norm)} → |y| ${fmt(shift.contextual_norm)})`],
      ["moved by", shift.pulled_by.map((c) => `${labels[c.index]} (w ${fmt(c.weight)}, share ${fmt(c.shift_share)} of y − ${own})`).join(", ") || "—"]];
    if (doc.settings.neighbors > 0) {
      const before = new Set(shift.neighbors_before.map((n) => n.word));
      rows.push(["nearest before", shift.neighbors_before.map((n) => n.word).join(", ")],
        ["nearest after", shift.neighbors_after.map((n, k) => [k ? ", " : "", before.has(n.word) ? n.word : el("span", { class: "new" }, n.word)]).flat()]);
    }
    const where = own === "x" ? "its static vector x" : "its own value s (what y would be if it attended only to itself)";
    return step(`Step 6 · What changed: y against ${where}`, el("div", { class: "scroll" }, dataTable([["what"], ["value"]], rows)),
      doc.settings.neighbors > 0 ? "nearest words by cosine; new after attention in bold green" : null);
  }

  /** Step 7: the same row from softmax(Q Kᵀ × scale / T) V, and how far it is from the term-by-term sum. */
  function matrixStep(trace, word) {
    const form = trace.matrix_form;
    const [nq, dHead] = form.queries_shape, nk = form.keys_shape[0];
    return step("Step 7 · All words at once, in matrix form: Y = softmax(Q Kᵀ × scale / T) V",
      vectorTable([["Y", word, form.output]]),
      `Q [${nq} × ${dHead}] · Kᵀ [${dHead} × ${nk}] → scores [${nq} × ${nk}], softmax row by row, · V [${nk} × ${dHead}] → `
        + `Y [${nq} × ${dHead}]${form.heads > 1 ? ` in each of ${form.heads} heads, then joined` : ""}.`,
      el("span", { class: "matrix-check" }, `Row “${word}” of Y differs from the term-by-term sum above by at most `,
        el("b", { "data-diff": trace.matrix_form_max_abs_diff }, trace.matrix_form_max_abs_diff.toExponential(1)),
        ": one computation, two notations."));
  }

  /** The teaching notes that hold for this word, each with the weights a suggested setting would give. */
  function notesStep(trace, labels) {
    return step("Notes", el("ul", { class: "notes" }, trace.notes.map((note) => el("li", {}, note.message + seeWithText(note),
      note.alternatives ? el("div", { class: "scroll" }, alternativesTable(trace.heads[note.head].keys, note.alternatives, labels)) : null))));
  }

  function alternativesTable(keys, alternatives, labels) {
    return dataTable([["weights if run with"], ...keys.map((k) => [labels[k.index], "num"])],
      [["(as above)", ...keys.map((k) => fmt(k.weight))], ...alternatives.map((a) => [flagText(a.settings), ...a.weights.map((w) => fmt(w))])]);
  }

  // ---- the page --------------------------------------------------------------------------------------------

  function main() {
    const page = JSON.parse(document.getElementById("attn-data").textContent);
    spelling = page.spelling || "options";
    const root = document.getElementById("attn-report");
    root.replaceChildren();
    root.append(pageHeader(page));
    page.documents.forEach((doc, k) => {
      const section = el("section", { class: "document", "data-document": k, "data-command": doc.command });
      root.append(section);
      VIEWS[doc.command](doc, section);
    });
  }

  main();
})();
