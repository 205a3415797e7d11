/**
 * Time as the gateway sees it: injected everywhere a timer or a timestamp matters, so a test
 * drives a whole session under virtual time (see `switchboard/testing`'s `virtualClock`).
 */
export interface Timer {
  cancel(): void;
}

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Run `fn` once after `ms` milliseconds. */
  setTimeout(fn: () => void, ms: number): Timer;
  /** Resolve after `ms` milliseconds, or reject with the signal's reason when it aborts first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

function sleepWith(clock: Pick<Clock, "setTimeout">, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted === true) {
      reject(signal.reason instanceof Error ? signal.reason : new Error("aborted"));
      return;
    }
    const onAbort = (): void => {
      timer.cancel();
      reject(signal?.reason instanceof Error ? signal.reason : new Error("aborted"));
    };
    const timer = clock.setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * A deadline that later activity moves, kept on one timer (an idle timeout, a record's expiry):
 * `set(at)` moves it; the timer, set for the earliest deadline asked, runs `due` once the
 * deadline has come and, when the deadline moved later meanwhile, is set again for the rest. A
 * timer per move would each live until the next move, long enough to outlive a young-generation
 * GC or two and be promoted, for a full GC to collect (docs/benchmarks.md, "Telephony").
 */
export class Deadline {
  readonly #clock: Clock;
  readonly #due: () => void;
  /** Epoch ms the deadline is at. */
  #at = 0;
  #timer: Timer | undefined;
  /** Epoch ms the timer was set for. */
  #timerAt = 0;
  /** What the timer runs: made once, not at every arm. */
  readonly #onTimer = (): void => this.#fire();

  constructor(clock: Clock, due: () => void) {
    this.#clock = clock;
    this.#due = due;
  }

  /** The deadline is now `at` (epoch ms); set again after it ran, it runs again. */
  set(at: number): void {
    this.#at = at;
    if (this.#timer !== undefined && this.#timerAt <= at) return;
    this.#timer?.cancel();
    this.#arm();
  }

  cancel(): void {
    this.#timer?.cancel();
    this.#timer = undefined;
  }

  #arm(): void {
    this.#timerAt = this.#at;
    this.#timer = this.#clock.setTimeout(this.#onTimer, this.#at - this.#clock.now());
  }

  #fire(): void {
    this.#timer = undefined;
    if (this.#clock.now() < this.#at) return this.#arm();
    this.#due();
  }
}

/**
 * A Node timer as a `Timer`: one object holding the handle, where `{ cancel: () => clearTimeout(handle) }`
 * was three (the object, the closure and the closure's context, about 130 bytes). A call keeps a
 * few timers armed for its whole length and sets more each turn.
 */
class NodeTimer implements Timer {
  readonly #handle: ReturnType<typeof setTimeout>;

  constructor(handle: ReturnType<typeof setTimeout>) {
    this.#handle = handle;
  }

  cancel(): void {
    clearTimeout(this.#handle);
  }
}

/** The real clock: `Date.now` and Node timers (unref'd: a pending timer never keeps a process alive). */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout(fn, ms) {
    const handle = setTimeout(fn, ms);
    handle.unref?.();
    return new NodeTimer(handle);
  },
  sleep(ms, signal) {
    return sleepWith(systemClock, ms, signal);
  },
};

/** A few turns of the event loop: long promise chains (streams) run to their next timer. */
async function settle(): Promise<void> {
  for (let i = 0; i < 3; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** A clock whose time moves only when a test says so. */
export interface VirtualClock extends Clock {
  /** Move time forward, firing every timer that falls due, in order. */
  advance(ms: number): Promise<void>;
  /** Timers not yet fired. */
  pending(): number;
}

/** A timer of the virtual clock: due `at` (epoch ms), ordered by `at` then `id` (the order they were set). */
interface VirtualTimer {
  readonly id: number;
  readonly at: number;
  readonly fn: () => void;
}

function before(a: VirtualTimer, b: VirtualTimer): boolean {
  return a.at < b.at || (a.at === b.at && a.id < b.id);
}

/**
 * The virtual clock's timers, earliest first: a binary heap, so finding the next due timer is
 * O(log n) rather than a scan of every timer at every step (a test of 50 sessions holds hundreds).
 * A cancelled timer leaves the live set at once and the heap when it reaches the top, or when
 * the cancelled outnumber the live.
 */
class TimerQueue {
  readonly #heap: VirtualTimer[] = [];
  readonly #live = new Map<number, VirtualTimer>();

  get size(): number {
    return this.#live.size;
  }

  add(timer: VirtualTimer): void {
    this.#live.set(timer.id, timer);
    const heap = this.#heap;
    let i = heap.push(timer) - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(timer, heap[parent] as VirtualTimer)) break;
      heap[i] = heap[parent] as VirtualTimer;
      i = parent;
    }
    heap[i] = timer;
  }

  cancel(id: number): void {
    this.#live.delete(id);
    // Cancelled timers far in the future would otherwise stay until time reaches them: rebuilt once they are most of the heap.
    if (this.#heap.length > 2 * this.#live.size + 64) {
      this.#heap.length = 0;
      for (const timer of this.#live.values()) this.add(timer);
    }
  }

  /** The earliest live timer due at or before `target`, taken off; undefined when none is. */
  takeDue(target: number): VirtualTimer | undefined {
    for (;;) {
      const top = this.#heap[0];
      if (top === undefined) return undefined;
      if (this.#live.has(top.id)) {
        if (top.at > target) return undefined;
        this.#live.delete(top.id);
        this.#pop();
        return top;
      }
      this.#pop();
    }
  }

  #pop(): void {
    const heap = this.#heap;
    const last = heap.pop() as VirtualTimer;
    if (heap.length === 0) return;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= heap.length) break;
      const right = left + 1;
      const child = right < heap.length && before(heap[right] as VirtualTimer, heap[left] as VirtualTimer) ? right : left;
      if (!before(heap[child] as VirtualTimer, last)) break;
      heap[i] = heap[child] as VirtualTimer;
      i = child;
    }
    heap[i] = last;
  }
}

/** Build a virtual clock starting at `start` (ms since the epoch). */
export function virtualClock(start = 1_700_000_000_000): VirtualClock {
  let now = start;
  let sequence = 0;
  const timers = new TimerQueue();
  const clock: VirtualClock = {
    now: () => now,
    setTimeout(fn, ms) {
      const id = ++sequence;
      timers.add({ id, at: now + Math.max(0, ms), fn });
      return { cancel: () => timers.cancel(id) };
    },
    sleep(ms, signal) {
      return sleepWith(clock, ms, signal);
    },
    async advance(ms) {
      const target = now + ms;
      for (;;) {
        // Let promise chains and I/O callbacks settle so timers they arm are seen in this advance.
        await settle();
        const timer = timers.takeDue(target);
        if (timer === undefined) break;
        now = Math.max(now, timer.at);
        timer.fn();
      }
      now = target;
      await settle();
    },
    pending: () => timers.size,
  };
  return clock;
}
