import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { createThrottle } from "../src/throttle.js";

/** A fake clock with timers. */
function fakeClock() {
  let t = 0;
  let nextId = 1;
  const timers = new Map();
  return {
    now: () => t,
    setTimer: (f, ms) => {
      const id = nextId++;
      timers.set(id, { f, at: t + ms });
      return id;
    },
    clearTimer: (id) => timers.delete(id),
    advance(ms) {
      const end = t + ms;
      for (;;) {
        const due = [...timers.entries()]
          .filter(([, x]) => x.at <= end)
          .sort((a, b) => a[1].at - b[1].at)[0];
        if (!due) break;
        timers.delete(due[0]);
        t = due[1].at;
        due[1].f();
      }
      t = end;
    },
    get pending() {
      return timers.size;
    },
  };
}

describe("render throttle", () => {
  test("a burst gives one render with the latest arguments; the next waits for the interval", () => {
    const clock = fakeClock();
    const renders = [];
    const th = createThrottle((x) => renders.push([clock.now(), x]), { interval: 50, ...clock });
    th.schedule(1);
    th.schedule(2);
    assert.deepEqual(renders, [], "never synchronous");
    clock.advance(0);
    assert.deepEqual(renders, [[0, 2]], "the first render is not delayed");
    clock.advance(10);
    th.schedule(3);
    th.schedule(4);
    clock.advance(39);
    assert.equal(renders.length, 1);
    clock.advance(1);
    assert.deepEqual(renders, [
      [0, 2],
      [50, 4],
    ]);
  });

  test("renders are at least `interval` apart and the last call always renders", () => {
    const clock = fakeClock();
    const renders = [];
    const th = createThrottle((x) => renders.push([clock.now(), x]), { interval: 50, ...clock });
    for (let i = 0; i < 30; i++) {
      th.schedule(i);
      clock.advance(7);
    }
    clock.advance(100);
    for (let k = 1; k < renders.length; k++) assert.ok(renders[k][0] - renders[k - 1][0] >= 50);
    assert.equal(renders.at(-1)[1], 29);
    assert.ok(renders.length <= 6, `few renders (${renders.length}) for 30 updates over 210 ms`);
    assert.equal(th.pending, false);
  });

  test("flush renders now and cancels the timer; cancel drops a pending render", () => {
    const clock = fakeClock();
    const renders = [];
    const th = createThrottle((x) => renders.push(x), { interval: 50, ...clock });
    th.schedule("a");
    clock.advance(1);
    th.schedule("b");
    assert.equal(th.pending, true);
    assert.equal(th.flush(), true);
    assert.deepEqual(renders, ["a", "b"]);
    assert.equal(clock.pending, 0);
    assert.equal(th.flush(), false, "nothing pending");
    th.schedule("c");
    th.cancel();
    clock.advance(200);
    assert.deepEqual(renders, ["a", "b"]);
  });

  test("works with the real timers", async () => {
    const renders = [];
    const th = createThrottle((x) => renders.push(x), { interval: 20 });
    th.schedule(1);
    th.schedule(2);
    await new Promise((r) => setTimeout(r, 60));
    assert.deepEqual(renders, [2]);
  });
});
