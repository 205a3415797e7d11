/**
 * Bytes allocated, sampled by V8's heap profiler (node:inspector `HeapProfiler.startSampling`),
 * every object included, those the young and the full collector took as well: what a piece of
 * work allocates, not what it keeps. Used by `bench:turn-counts` beside its cachegrind counts; the
 * sampled process runs with the counted processes' Node flags (bench/shared/cachegrind.ts), so
 * its seeds, and with them the sampling's random intervals, are fixed.
 *
 * A sample stands for about `SAMPLING_INTERVAL` bytes (V8 scales each by its size and the
 * interval), so a total over tens of megabytes is good to about a percent. An allocation is put to
 * the function that made it as V8 sees the stack: the outermost function of an optimized frame,
 * with what it inlined (a callee's allocation can show under its caller).
 */
import { Session } from "node:inspector";

/** Mean bytes between two samples: V8's default is 32 KiB; 1 KiB gives a few hundred thousand samples over a run. */
const SAMPLING_INTERVAL = 1024;

/** Where an allocation was made: the sampled function and its caller. */
export interface AllocationSite {
  readonly site: string;
  readonly bytes: number;
}

/** What a sampled stretch of work allocated: all of it, and the sites that allocated most. */
export interface Allocation {
  readonly bytes: number;
  readonly sites: readonly AllocationSite[];
}

interface ProfileNode {
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly selfSize: number;
  readonly children: readonly ProfileNode[];
}

/** How many sites an `Allocation` keeps. */
const SITES = 80;

/** A frame as a reader finds it: the function and its file from the build's root (`dist/…`), `node:…` or the package's; its line 1-based. */
function frameName(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  const file = url.replace(/^.*\/(dist|node_modules)\//, "$1/").replace(/^file:\/\/.*\//, "");
  return `${functionName === "" ? "(anonymous)" : functionName} ${file === "" ? "(V8)" : `${file}:${lineNumber + 1}`}`;
}

/** Sum a sampling profile's tree: every byte, and by site (the allocating frame ‹ its caller). */
export function summarize(head: ProfileNode): Allocation {
  const bySite = new Map<string, number>();
  let bytes = 0;
  const walk = (node: ProfileNode, caller: string): void => {
    const here = frameName(node);
    if (node.selfSize > 0) {
      bytes += node.selfSize;
      const site = `${here} ‹ ${caller}`;
      bySite.set(site, (bySite.get(site) ?? 0) + node.selfSize);
    }
    for (const child of node.children) walk(child, here);
  };
  walk(head, "(root)");
  const sites = [...bySite].sort((a, b) => b[1] - a[1]).slice(0, SITES).map(([site, siteBytes]) => ({ site, bytes: siteBytes }));
  return { bytes, sites };
}

/** Sample what `work` allocates. Start it on a collected heap: nothing allocated before is counted, whenever it is collected. */
export async function sampleAllocations(work: () => Promise<void>): Promise<Allocation> {
  const session = new Session();
  session.connect();
  const post = <T>(method: string, params: object = {}): Promise<T> =>
    new Promise((resolve, reject) => session.post(method, params, (error, result) => (error === null ? resolve(result as T) : reject(error))));
  try {
    await post("HeapProfiler.enable");
    await post("HeapProfiler.startSampling", { samplingInterval: SAMPLING_INTERVAL, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
    await work();
    const { profile } = await post<{ profile: { head: ProfileNode } }>("HeapProfiler.getSamplingProfile");
    await post("HeapProfiler.stopSampling");
    return summarize(profile.head);
  } finally {
    session.disconnect();
  }
}
