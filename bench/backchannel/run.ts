/**
 * `npm run bench:backchannel`: false barge-ins on acknowledgements ("uh-huh", "okay", "yeah") and
 * missed real interruptions ("stop", "wait a moment"), on the offline stack, with the phrase
 * filter off (the baseline, the same run) and on (docs/config.md `interruption`,
 * `acknowledgementPhrases` / `interruptPhrases`).
 *
 * The caller is flite (`synthesize`, scripts/make-fixtures.ts: the cmu_us_slt voice at 16 kHz,
 * the voice pocketsphinx understands). Each trial is one session on an in-process gateway: local
 * STT (pocketsphinx), the scripted model, local TTS (flite). The caller types a turn (`user_text`)
 * whose scripted reply is ≈ 25 s of speech; MIC_OPEN_MS before it speaks its mic opens and streams
 * a ±20 LSB noise floor in 20 ms frames in real time to the end of the call; LEAD_MS after the
 * reply's first audio it says one phrase (mixed into the noise floor, in real time), then waits for pocketsphinx's final on it (at most
 * FINAL_WAIT_MS) and SETTLE_MS more. Outcome: a barge-in is a `reply.cancelled` in that time; a
 * turn is a `user-transcript.committed`; what pocketsphinx heard is every final it gave in the
 * trial (a tap on the STT's events). A trial where the reply finished first is void.
 *
 * Variants (one gateway each), one call at a time — pocketsphinx decodes in real time at best, and
 * three at once on a loaded 2-core machine fell seconds behind — each phrase in every variant in
 * turn, rotating which goes first, so drift falls on all alike: the filter off at the default thresholds (minWords 1,
 * minDurationMs 500: the baseline); the filter off at minWords 3 (the usual workaround: fewer
 * false barge-ins, and a lone "stop" no longer cuts); the filter on (the default lists).
 *
 * Options: --rounds N (default 1: every phrase once per variant), --limit N (only the first N
 * phrases of each kind, for a quick look), --no-docs (print only). About 10
 * minutes a round. Results go to stdout and to docs/benchmarks.md between the bench:backchannel
 * markers.
 */
import { cpus } from "node:os";
import WebSocket from "ws";
import { samplesToBytes } from "../../src/audio/pcm.js";
import { silentLogger } from "../../src/log.js";
import { agent, type AgentOptions, type ProviderDescriptor } from "../../src/manifest/index.js";
import { LOCAL_STT_MODEL_DIR, localSttAvailable } from "../../src/pipeline/providers/stt/local-setup.js";
import { resolveStt } from "../../src/pipeline/providers/stt/index.js";
import { resolveTts } from "../../src/pipeline/providers/tts/index.js";
import { shutdownLocalTts } from "../../src/pipeline/providers/tts/local-pool.js";
import type { SttEvents, SttProvider } from "../../src/pipeline/stt-port.js";
import { createGateway } from "../../src/server/index.js";
import type { Gateway } from "../../src/server/gateway-types.js";
import type { ServerEvent } from "../../src/transport/protocol.js";
import { synthesize } from "../../scripts/make-fixtures.js";
import { countOption, docSection, flagValue, ms, runBench, sleep, within, writeSection } from "../shared/common.js";
import { monoMs, summarize } from "../shared/stats.js";

const { path: DOCS, start: START, end: END } = docSection("bench:backchannel");
const RUN_LIMIT_MS = 60 * 60_000;

const RATE = 16_000;
const FRAME_MS = 20;
const FRAME = (RATE * FRAME_MS) / 1000;
/** The caller speaks this long after the reply's first audio reached them (ms). */
const LEAD_MS = 1500;
/**
 * The caller's mic opens this long before the phrase (ms), sending the noise floor. pocketsphinx
 * adapts to what precedes the first words: after 5 s of the ±20 LSB floor it heard nothing in
 * "Okay.", "Wait." or "Uh-huh." (an empty line each); after 0.5 s, "okay", "wait" (measured with
 * the local STT on these clips); after 5 s of digital zeros, "again", "wade" and "huh".
 */
const MIC_OPEN_MS = 500;
/**
 * After the phrase, the trial waits for pocketsphinx's final (it ends an utterance ≈ 0.5 s after
 * the speech, then decodes; a loaded machine makes that seconds), at most FINAL_WAIT_MS, then
 * SETTLE_MS for the cut or the turn it causes.
 */
const FINAL_WAIT_MS = 15_000;
const SETTLE_MS = 500;

/** Said while the agent speaks: the caller is listening. */
const BACKCHANNELS = [
  "Uh-huh.", "Mm-hmm.", "Okay.", "Okay, okay.", "Right.", "Yeah.", "Yeah, yeah.", "Yep.", "Yes.", "Sure.",
  "Got it.", "I see.", "Alright.", "Exactly.", "Great.", "I understand.", "Makes sense.",
] as const;
/** Said while the agent speaks: the caller wants the floor. The last two hold no interrupt phrase. */
const INTERRUPTIONS = [
  "Stop.", "Wait.", "Wait a moment.", "Wait, wait.", "Stop, stop.", "No, wait.", "Hold on a second.", "Excuse me.",
  "Please stop.", "One moment.", "Actually, I meant Tuesday.", "Sorry, what was that?",
] as const;

const REPLY =
  "Our premium plan includes unlimited calls to any number in the country, two hundred international minutes every month, " +
  "voicemail that arrives as text in your inbox, call recording for up to ninety days, a second line for your business, " +
  "priority support at any hour of the day or night, and a discount on every new phone you buy from us during the first year. " +
  "It also comes with a free router, installation by one of our technicians, and a thirty day trial you can cancel at any time.";
const SCRIPT = { rules: [{ when: "plan", say: REPLY }] };

interface Variant {
  readonly label: string;
  readonly interruption: Exclude<AgentOptions["interruption"], "off" | undefined>;
}

const VARIANTS: readonly Variant[] = [
  { label: "filter off (baseline)", interruption: { acknowledgementPhrases: [], interruptPhrases: [] } },
  { label: "filter off, minWords 3", interruption: { minWords: 3, acknowledgementPhrases: [], interruptPhrases: [] } },
  { label: "filter on (defaults)", interruption: {} },
];

interface Outcome {
  readonly bargeIn: boolean;
  /** The end of the phrase's audio → `reply.cancelled` (ms). */
  readonly cutMs: number | undefined;
  readonly turn: boolean;
  /** pocketsphinx's finals in the trial, joined with " | " ("" when it heard nothing). */
  readonly heard: string;
  readonly void: boolean;
}

/** A microphone's noise floor: ±20 LSB (≈ −64 dBFS), deterministic (as in the local STT's tests). */
function noiseFrame(seed: number): Int16Array {
  const samples = new Int16Array(FRAME);
  let state = seed;
  for (let i = 0; i < samples.length; i++) {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    samples[i] = (state % 41) - 20;
  }
  return samples;
}

/** The caller's mic, once open: the noise floor in 20 ms frames in real time, a phrase mixed in when one is said. */
class Mic {
  readonly #send: (pcm: Uint8Array) => void;
  #timer: NodeJS.Timeout | undefined;
  #openedAt = 0;
  #frames = 0;
  #speech: { readonly pcm: Int16Array; at: number; readonly done: (endedAt: number) => void } | undefined;

  constructor(send: (pcm: Uint8Array) => void) {
    this.#send = send;
  }

  open(): void {
    this.#openedAt = monoMs();
    this.#timer = setInterval(() => this.#tick(), FRAME_MS);
  }

  /** Say `pcm`; resolves when its last frame is sent, with that time (monoMs). */
  say(pcm: Int16Array): Promise<number> {
    return new Promise((done) => (this.#speech = { pcm, at: 0, done }));
  }

  close(): void {
    clearInterval(this.#timer);
  }

  #tick(): void {
    // Catch up on frames a busy event loop delayed, so the stream keeps real time.
    while (this.#frames * FRAME_MS <= monoMs() - this.#openedAt) {
      const frame = noiseFrame(this.#frames + 1);
      const speech = this.#speech;
      if (speech !== undefined) {
        for (let i = 0; i < FRAME && speech.at + i < speech.pcm.length; i++) frame[i] = Math.max(-32768, Math.min(32767, (frame[i] ?? 0) + (speech.pcm[speech.at + i] ?? 0)));
        speech.at += FRAME;
        if (speech.at >= speech.pcm.length) {
          this.#speech = undefined;
          speech.done(monoMs());
        }
      }
      this.#send(samplesToBytes(frame));
      this.#frames += 1;
    }
  }
}

/** One variant's gateway, with a tap on its STT's finals. */
class Bench {
  readonly variant: Variant;
  readonly gateway: Gateway;
  /** The finals of the trial in progress: a session's STT writes to the trial it was opened in. */
  #sink: { heard: string[]; finals: number } = { heard: [], finals: 0 };

  constructor(variant: Variant) {
    this.variant = variant;
    const tap = (provider: SttProvider): SttProvider => ({
      kind: provider.kind,
      open: (options, events) => {
        const sink = this.#sink;
        const tapped: SttEvents = {
          partial: (text, info) => events.partial(text, info),
          final: (text, info) => {
            sink.finals += 1;
            if (text.trim() !== "") sink.heard.push(text.trim());
            events.final(text, info);
          },
          speechStarted: () => events.speechStarted(),
          error: (error, info) => events.error(error, info),
          closed: (info) => events.closed(info),
        };
        return provider.open(options, tapped);
      },
    });
    const def = agent({
      name: "backchannel",
      greeting: "",
      stt: { kind: "local", options: {} },
      llm: { kind: "scripted", options: {} },
      tts: { kind: "local", options: {} },
      interruption: variant.interruption,
    });
    this.gateway = createGateway({
      agent: def,
      script: SCRIPT,
      env: {},
      logger: silentLogger,
      processMetrics: false,
      voice: {
        stt: (descriptor: ProviderDescriptor) => tap(resolveStt(descriptor, {}, silentLogger)),
        tts: (descriptor: ProviderDescriptor) => resolveTts(descriptor, {}, silentLogger),
      },
    });
  }

  /** One call: the reply starts, `phrase` is said over it, the window passes. */
  async trial(port: number, phrase: Int16Array): Promise<Outcome> {
    const sink = { heard: [] as string[], finals: 0 };
    this.#sink = sink;
    const ws = new WebSocket(`ws://127.0.0.1:${port}/websocket?sampleRate=${RATE}`, { perMessageDeflate: false });
    const events: { at: number; event: ServerEvent }[] = [];
    let firstAudio: (() => void) | undefined;
    const audio = new Promise<void>((resolve) => (firstAudio = resolve));
    ws.on("message", (data, isBinary) => {
      if (isBinary) firstAudio?.();
      else events.push({ at: monoMs(), event: JSON.parse((data as Buffer).toString("utf8")) as ServerEvent });
    });
    await within(new Promise<void>((resolve, reject) => ws.once("open", () => resolve()).once("error", reject)), 10_000, "the connection");
    const mic = new Mic((pcm) => {
      if (ws.readyState === ws.OPEN) ws.send(pcm);
    });
    try {
      await within(new Promise<void>((resolve) => {
        const poll = setInterval(() => {
          if (events.some((e) => e.event.type === "session.configured")) {
            clearInterval(poll);
            resolve();
          }
        }, 10);
      }), 20_000, "session.configured");
      ws.send(JSON.stringify({ type: "user_text", text: "Tell me about the premium plan." }));
      await within(audio, 20_000, "the reply's first audio");
      await sleep(LEAD_MS - MIC_OPEN_MS);
      mic.open();
      await sleep(MIC_OPEN_MS);
      const from = events.length;
      const finalsBefore = sink.finals;
      const spokenEnd = await mic.say(phrase);
      const waitUntil = monoMs() + FINAL_WAIT_MS;
      while (sink.finals === finalsBefore && monoMs() < waitUntil) await sleep(FRAME_MS);
      await sleep(SETTLE_MS);
      const after = events.slice(from);
      const cut = after.find((e) => e.event.type === "reply.cancelled");
      return {
        bargeIn: cut !== undefined,
        cutMs: cut === undefined ? undefined : cut.at - spokenEnd,
        turn: after.some((e) => e.event.type === "user-transcript.committed"),
        heard: sink.heard.join(" | "),
        void: after.some((e) => e.event.type === "reply.completed") && cut === undefined,
      };
    } finally {
      mic.close();
      ws.close(1000, "trial over");
      await sleep(100);
    }
  }
}

interface Trial {
  readonly phrase: string;
  readonly kind: "backchannel" | "interruption";
  readonly outcomes: Outcome[];
}

const pct = (part: number, whole: number): string => (whole === 0 ? "–" : `${part}/${whole} (${Math.round((100 * part) / whole)} %)`);

function summaryRows(trials: readonly Trial[]): string[] {
  const rows: string[] = [];
  const col = (i: number, kind: Trial["kind"], test: (o: Outcome) => boolean): string => {
    const outcomes = trials.filter((t) => t.kind === kind).map((t) => t.outcomes[i]).filter((o): o is Outcome => o !== undefined && !o.void);
    return pct(outcomes.filter(test).length, outcomes.length);
  };
  rows.push(`| false barge-ins (backchannel cut the reply) | ${VARIANTS.map((_, i) => col(i, "backchannel", (o) => o.bargeIn)).join(" | ")} |`);
  rows.push(`| backchannels committed as a user turn | ${VARIANTS.map((_, i) => col(i, "backchannel", (o) => o.turn)).join(" | ")} |`);
  rows.push(`| missed interruptions (no cut) | ${VARIANTS.map((_, i) => col(i, "interruption", (o) => !o.bargeIn)).join(" | ")} |`);
  const cut = VARIANTS.map((_, i) => summarize(trials.filter((t) => t.kind === "interruption").flatMap((t) => (t.outcomes[i]?.cutMs === undefined ? [] : [t.outcomes[i].cutMs]))));
  rows.push(`| end of interruption → cut, median (ms) | ${cut.map((s) => (s.n === 0 ? "–" : ms(s.p50))).join(" | ")} |`);
  const voided = VARIANTS.map((_, i) => trials.filter((t) => t.outcomes[i]?.void === true).length);
  rows.push(`| void trials (the reply ended first) | ${voided.join(" | ")} |`);
  return rows;
}

function trialRows(trials: readonly Trial[]): string[] {
  const mark = (o: Outcome | undefined): string => (o === undefined ? "–" : o.void ? "void" : `${o.bargeIn ? "**cut**" : "no cut"}${o.turn ? ", turn" : ""}`);
  return trials.map((t) => {
    const heard = [...new Set(t.outcomes.map((o) => o.heard))].map((h) => (h === "" ? "(nothing)" : `"${h}"`)).join(" / ");
    return `| ${t.kind} | ${t.phrase} | ${heard} | ${t.outcomes.map(mark).join(" | ")} |`;
  });
}

async function main(): Promise<number> {
  if (!(await localSttAvailable())) {
    console.error("bench:backchannel needs pocketsphinx and its en-us model (apt-get install pocketsphinx pocketsphinx-en-us); model dir:", LOCAL_STT_MODEL_DIR);
    return 1;
  }
  const rounds = countOption(flagValue(process.argv, "rounds"), 1, "rounds");
  const limit = countOption(flagValue(process.argv, "limit"), Math.max(BACKCHANNELS.length, INTERRUPTIONS.length), "limit");
  const docs = !process.argv.includes("--no-docs");
  const began = monoMs();
  const benches = VARIANTS.map((v) => new Bench(v));
  const ports = await Promise.all(benches.map(async (b) => (await b.gateway.listen(0, "127.0.0.1")).port));
  const phrases = [
    ...BACKCHANNELS.slice(0, limit).map((p) => ({ phrase: p, kind: "backchannel" as const })),
    ...INTERRUPTIONS.slice(0, limit).map((p) => ({ phrase: p, kind: "interruption" as const })),
  ];
  const audio = new Map<string, Int16Array>();
  for (const { phrase } of phrases) audio.set(phrase, await synthesize(phrase));
  const trials: Trial[] = [];
  try {
    for (let round = 0; round < rounds; round++) {
      for (const { phrase, kind } of phrases) {
        // One call at a time (pocketsphinx decodes in real time at best), the variants in turn, rotating which goes first.
        const outcomes: Outcome[] = [];
        for (let j = 0; j < benches.length; j++) {
          const i = (trials.length + j) % benches.length;
          const bench = benches[i];
          if (bench !== undefined) outcomes[i] = await bench.trial(ports[i] ?? 0, audio.get(phrase) ?? new Int16Array(0));
        }
        trials.push({ phrase, kind, outcomes });
        console.log(`${kind.padEnd(12)} ${phrase.padEnd(28)} ${outcomes.map((o) => `${o.void ? "void" : o.bargeIn ? "CUT " : "--  "}${o.turn ? "T" : " "} ${JSON.stringify(o.heard)}`).join("   ")}`);
      }
    }
  } finally {
    await Promise.all(benches.map((b) => b.gateway.close()));
    await shutdownLocalTts();
  }
  const seconds = (monoMs() - began) / 1000;
  const head = `| figure | ${VARIANTS.map((v) => v.label).join(" | ")} |`;
  const rule = `|---|${VARIANTS.map(() => "--:").join("|")}|`;
  const stamp = new Date().toISOString().slice(0, 16).replace("T", " ");
  const body = [
    START,
    `Run ${stamp} UTC on ${cpus()[0]?.model.trim().split(" ").slice(0, 2).join(" ") ?? "?"} (${cpus().length} cores), Node ${process.version}: \`npm run bench:backchannel\`; ${rounds} round(s), ${BACKCHANNELS.length} backchannels and ${INTERRUPTIONS.length} interruptions per variant, ${seconds.toFixed(0)} s in all.`,
    "",
    head,
    rule,
    ...summaryRows(trials),
    "",
    "Per phrase: what pocketsphinx heard (every variant's hearing, when they differ), and each variant's outcome (cut: `reply.cancelled`; turn: `user-transcript.committed`).",
    "",
    `| kind | flite said | pocketsphinx heard | ${VARIANTS.map((v) => v.label).join(" | ")} |`,
    `|---|---|---|${VARIANTS.map(() => "---").join("|")}|`,
    ...trialRows(trials),
    END,
  ].join("\n");
  console.log(`\n${body}`);
  if (docs) writeSection(DOCS, START, END, body);
  return 0;
}

runBench("bench:backchannel", RUN_LIMIT_MS, main);
