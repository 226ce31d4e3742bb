/**
 * The pane's width handle: drag with the mouse, or focus it and use ←/→ (Shift: bigger
 * steps). The width is the container's `--zocrates-width` and is reported through `onResize`
 * (the Zotero side keeps it in a preference).
 */
export const MIN_WIDTH = 300;
export const MAX_WIDTH = 900;

export function clampWidth(px, available = Infinity) {
  const max = Math.min(MAX_WIDTH, Math.max(MIN_WIDTH, available - 320));
  return Math.round(Math.max(MIN_WIDTH, Math.min(max, Number(px) || MIN_WIDTH)));
}

export function attachResizer({ handle, container, win, initial = 400, onResize = () => {} }) {
  let width = clampWidth(initial, win.innerWidth);
  const apply = (w, save = false) => {
    width = clampWidth(w, win.innerWidth);
    container.style.setProperty("--zocrates-width", `${width}px`);
    handle.setAttribute("aria-valuenow", String(width));
    if (save) onResize(width);
  };
  apply(width);
  handle.setAttribute("aria-valuemin", String(MIN_WIDTH));
  handle.setAttribute("aria-valuemax", String(MAX_WIDTH));
  handle.setAttribute("aria-label", "Resize the Zocrates pane");

  let startX = 0;
  let startW = 0;
  const move = (e) => apply(startW + (startX - e.clientX));
  const up = () => {
    handle.removeAttribute("data-dragging");
    win.removeEventListener("mousemove", move);
    win.removeEventListener("mouseup", up);
    onResize(width);
  };
  const down = (e) => {
    if (e.button !== 0) return;
    e.preventDefault();
    startX = e.clientX;
    startW = width;
    handle.setAttribute("data-dragging", "true");
    win.addEventListener("mousemove", move);
    win.addEventListener("mouseup", up);
  };
  const key = (e) => {
    const step = e.shiftKey ? 60 : 16;
    if (e.key === "ArrowLeft") apply(width + step, true);
    else if (e.key === "ArrowRight") apply(width - step, true);
    else return;
    e.preventDefault();
  };
  handle.addEventListener("mousedown", down);
  handle.addEventListener("keydown", key);
  return {
    get width() {
      return width;
    },
    set: (w) => apply(w, true),
    detach() {
      handle.removeEventListener("mousedown", down);
      handle.removeEventListener("keydown", key);
      up();
    },
  };
}
