// attn-cli senses page: the hovered point's sentence next to the pointer, the word marked. The sentence is the
// point's <title> (already literal and escaped by the page's maker); the marks are UTF-16 offsets into it.
(function () {
  "use strict";
  const tooltip = document.getElementById("attn-tooltip");

  /** The sentence as text nodes, each marked span inside a <mark>: never parsed as HTML. */
  function marked(sentence, marks) {
    const nodes = [];
    let last = 0;
    for (const span of marks ? marks.split(";") : []) {
      const [start, end] = span.split(",").map(Number);
      nodes.push(document.createTextNode(sentence.slice(last, start)));
      const mark = document.createElement("mark");
      mark.textContent = sentence.slice(start, end);
      nodes.push(mark);
      last = end;
    }
    nodes.push(document.createTextNode(sentence.slice(last)));
    return nodes;
  }

  function show(point, event) {
    const where = document.createElement("div");
    where.className = "where";
    where.textContent = `group ${point.dataset.group}, line ${point.dataset.line}`;
    const sentence = document.createElement("div");
    sentence.className = "sentence";
    sentence.append(...marked(point.querySelector("title").textContent, point.dataset.marks));
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
