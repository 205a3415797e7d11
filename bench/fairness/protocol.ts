/** Messages between the fairness bench (bench/fairness/run.ts) and its peers (bench/fairness/peer.ts). */

/** How an abuser floods: one of four ways, or all four at once on four connections. */
export type AbuseMode = "cancel" | "invalid-json" | "audio" | "typed" | "all";

export type ToPeer =
  | { readonly type: "victim"; readonly url: string; readonly turns: number; readonly gapMs: number }
  | { readonly type: "abuse"; readonly url: string; readonly mode: AbuseMode }
  | { readonly type: "stop" };

export type FromPeer =
  | { readonly type: "victim-done"; readonly firstAudioMs: number[]; readonly completedMs: number[]; readonly errors: string[] }
  | { readonly type: "abusing" }
  | { readonly type: "abuser-stopped"; readonly sent: number; readonly bytes: number }
  | { readonly type: "failed"; readonly error: string };
