/**
 * Render throttle: however often a stream asks for a render, `fn` runs at most once per
 * `interval` ms (~50 ms: 20 frames a second keep a streamed answer fluid without redrawing
 * Markdown for every token). `flush()` runs a pending render now (at the end of a stream,
 * before a checkpoint card is drawn); `cancel()` drops it (the pane is closing).
 *
 * Timers and the clock are injectable for tests.
 */
export function createThrottle(
  fn,
  {
    interval = 50,
    now = () => Date.now(),
    setTimer = (f, ms) => setTimeout(f, ms),
    clearTimer = (id) => clearTimeout(id),
  } = {},
) {
  let timer = null;
  let last = -Infinity;
  let pendingArgs = null;

  const run = () => {
    timer = null;
    const args = pendingArgs;
    pendingArgs = null;
    last = now();
    fn(...(args || []));
  };

  return {
    /** Ask for a render (the latest arguments win). */
    schedule(...args) {
      pendingArgs = args;
      if (timer !== null) return;
      const wait = Math.max(0, interval - (now() - last));
      timer = setTimer(run, wait);
    },
    /** Run a pending render now; returns whether one ran. */
    flush() {
      if (pendingArgs === null) return false;
      if (timer !== null) clearTimer(timer);
      run();
      return true;
    },
    /** Drop a pending render. */
    cancel() {
      if (timer !== null) clearTimer(timer);
      timer = null;
      pendingArgs = null;
    },
    get pending() {
      return pendingArgs !== null;
    },
  };
}
