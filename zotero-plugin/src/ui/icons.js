/**
 * The pane's icons: 16×16 stroke icons drawn with SVG elements made by createElementNS
 * (no markup strings). They take the text colour (stroke: currentColor).
 */
export const SVG_NS = "http://www.w3.org/2000/svg";

// Each icon is a list of SVG path `d` strings on a 16×16 grid, drawn with a 1.5 stroke.
const PATHS = {
  plus: ["M8 3.5v9", "M3.5 8h9"],
  gear: [
    "M8 10.2a2.2 2.2 0 1 0 0-4.4 2.2 2.2 0 0 0 0 4.4z",
    "M13 8.9v-1.8l-1.6-.4-.5-1.2.9-1.4-1.3-1.3-1.4.9-1.2-.5L7.5 1.6H6.1l-.4 1.6-1.2.5-1.4-.9-1.3 1.3.9 1.4-.5 1.2-1.6.4v1.8l1.6.4.5 1.2-.9 1.4 1.3 1.3 1.4-.9 1.2.5.4 1.6h1.8l.4-1.6 1.2-.5 1.4.9 1.3-1.3-.9-1.4.5-1.2z",
  ],
  chevronDown: ["M4 6l4 4 4-4"],
  chevronRight: ["M6 4l4 4-4 4"],
  pencil: ["M10.5 2.5l3 3L6 13H3v-3z", "M9 4l3 3"],
  trash: ["M3 4.5h10", "M6.5 4.5V3h3v1.5", "M4.5 4.5l.6 8.5h5.8l.6-8.5"],
  x: ["M4 4l8 8", "M12 4l-8 8"],
  rewind: ["M3 3v4h4", "M3.6 10a5 5 0 1 0 .9-5.4L3 7"],
  send: ["M8 13V3.5", "M4 7.5l4-4 4 4"],
  stop: ["M5 5h6v6H5z"],
  search: ["M7 11.5a4.5 4.5 0 1 0 0-9 4.5 4.5 0 0 0 0 9z", "M10.3 10.3L13.5 13.5"],
  book: [
    "M2.5 3.5h4a1.5 1.5 0 0 1 1.5 1.5v8a1.5 1.5 0 0 0-1.5-1.5h-4z",
    "M13.5 3.5h-4A1.5 1.5 0 0 0 8 5v8a1.5 1.5 0 0 1 1.5-1.5h4z",
  ],
  pin: ["M9.5 2.5l4 4-2 1-2.5 2.5.5 2.5-1 1-2.5-2.5L3 14", "M6 8.5L2.5 5l1-1 2.5.5L8.5 2z"],
  alert: ["M8 2.5l6 10.5H2z", "M8 6.5v3", "M8 11.2v.1"],
  info: ["M8 14A6 6 0 1 0 8 2a6 6 0 0 0 0 12z", "M8 7.5v3.5", "M8 5.2v.1"],
  check: ["M3.5 8.5l3 3 6-7"],
  list: ["M5.5 4h8", "M5.5 8h8", "M5.5 12h8", "M2.5 4h.1", "M2.5 8h.1", "M2.5 12h.1"],
  sparkle: ["M8 2l1.4 4.6L14 8l-4.6 1.4L8 14l-1.4-4.6L2 8l4.6-1.4z"],
  thought: ["M4 11.5a4.5 4 0 1 1 3 1l-3 1.5z"],
  flag: ["M3.5 14V2.5", "M3.5 3h8l-1.5 3 1.5 3h-8"],
  copy: ["M5.5 5.5h7v7h-7z", "M3.5 10.5v-7h7"],
  note: ["M3.5 2.5h6l3 3v8h-9z", "M9.5 2.5v3h3", "M5.5 8.5h5", "M5.5 11h3.5"],
  panel: ["M2.5 3h11v10h-11z", "M10 3v10"],
  refresh: ["M13 8a5 5 0 1 1-1.5-3.5", "M13 2.5v3h-3"],
  arrowRight: ["M3 8h10", "M9 4l4 4-4 4"],
  image: ["M2.5 3.5h11v9h-11z", "M2.5 10.5l3-3 2.5 2.5 2-2 3.5 3.5", "M10.5 6.2v.1"],
};

export const ICON_NAMES = Object.freeze(Object.keys(PATHS));

/** An icon element (`<svg class="zc-icon zc-icon-NAME">`), hidden from screen readers. */
export function icon(doc, name, { size = 16, className = "" } = {}) {
  const svg = doc.createElementNS(SVG_NS, "svg");
  svg.setAttribute("viewBox", "0 0 16 16");
  svg.setAttribute("width", String(size));
  svg.setAttribute("height", String(size));
  svg.setAttribute("fill", "none");
  svg.setAttribute("stroke", "currentColor");
  svg.setAttribute("stroke-width", "1.5");
  svg.setAttribute("stroke-linecap", "round");
  svg.setAttribute("stroke-linejoin", "round");
  svg.setAttribute("aria-hidden", "true");
  svg.setAttribute("focusable", "false");
  svg.setAttribute("class", `zc-icon zc-icon-${name}${className ? ` ${className}` : ""}`);
  for (const d of PATHS[name] || PATHS.info) {
    const path = doc.createElementNS(SVG_NS, "path");
    path.setAttribute("d", d);
    svg.appendChild(path);
  }
  return svg;
}
