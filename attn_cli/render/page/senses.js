// attn-cli senses page: the hovered point's sentence next to the pointer, the word marked. The point carries
// the words around its occurrence (data-before, data-word, data-after) and its label (data-label, with labels),
// made literal by the page's maker; they are set as text, never parsed as HTML. The whole sentence is the
// point's <title>.
(function () {
  "use strict";
  const tooltip = document.getElementById("attn-tooltip");

  function show(point, event) {
    const where = document.createElement("div");
    where.className = "where";
    const label = point.dataset.label === undefined ? "" : `, label ${point.dataset.label}`;
    where.textContent = `group ${point.dataset.group}${label}, line ${point.dataset.line}`;
    const sentence = document.createElement("div");
    sentence.className = "sentence";
    const mark = document.createElement("mark");
    mark.textContent = point.dataset.word;
    sentence.append(point.dataset.before, ...(point.dataset.word ? [mark] : []), point.dataset.after);
    tooltip.replaceChildren(sentence, where);
    tooltip.hidden = false;
    const pad = 14, box = tooltip.getBoundingClientRect();
    tooltip.style.left = `${Math.max(4, Math.min(event.clientX + pad, window.innerWidth - box.width - 4))}px`;
    tooltip.style.top = `${Math.max(4, event.clientY + pad + box.height > window.innerHeight
      ? event.clientY - box.height - pad : event.clientY + pad)}px`;
  }

  for (const svg of document.querySelectorAll("svg.senses-scatter")) {
    svg.addEventListener("mouseover", (event) => {
      const point = event.target.closest("circle");
      if (point) show(point, event);
    });
    svg.addEventListener("mouseout", (event) => {
      if (event.target.closest("circle")) tooltip.hidden = true;
    });
  }
})();
