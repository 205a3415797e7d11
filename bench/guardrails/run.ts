/**
 * `npm run bench:guardrails`: what guardrails cost a pipeline reply's first audio, and how much
 * of an s2s answer a caller hears before an input guardrail's verdict (docs/config.md
 * "Guardrails"). One process, in memory, about 10 s.
 *
 * **Pipeline, on the real clock.**
 * Three pipeline sessions side by side on the same fakes (`Session` over a `MemoryLink`, the
 * fake STT, the scripted model with no delay, the fake TTS with no latency): no guardrails (the
 * baseline), one trivial synchronous output guardrail (a card-number regex), and that plus the
 * same as an input guardrail. Their turns are interleaved — one turn of each in turn, rotating
 * which goes first — so drift on a shared machine lands on all three alike. Per turn, on the
 * monotonic clock (`monoMs`):
 * - **STT final → first TTS text**: from the fake STT's `final(text, {endOfTurn:true})` to the
 *   reply's first text reaching the TTS stream: the stage the guardrails sit in.
 * - **STT final → first audio out**: to the reply's first audio chunk handed to the link (the
 *   fake TTS answers on a 0 ms timer, so this adds a timer turn to both).
 * The report quotes each guarded session against the baseline of the same run.
 *
 * **s2s, on a virtual clock.** An s2s session on the scripted service (`s2sSession`, `FakeS2s`)
 * with a trivial synchronous input guardrail: the caller's speech ends at 0; the service's
 * answer starts and its first audio arrives at `S2S_FIRST_AUDIO_MS`, then its audio comes
 * `S2S_SERVICE_SPEED`× faster than real time in 20 ms chunks; the caller's transcript (the only
 * thing a guardrail can check) arrives at each of `TRANSCRIPT_LATENCIES_MS`. Per latency: the
 * answer's audio played at the listener by the verdict (what cannot be taken back), and handed
 * to the link but not yet played (flushed by the verdict's `reply.cancelled`), measured from the
 * link's audio and the real-time playback of it, with the runner doing the cutting.
 *
 * Options: --turns N (default 300 per session), --no-docs (print only). Results go to stdout
 * and to docs/benchmarks.md between the bench:guardrails markers.
 */
import { cpus } from "node:os";
import { systemClock } from "../../src/clock.js";
import { silentLogger } from "../../src/log.js";
import { agent, toAgentConfig, type AgentConfigSource, type Guardrail, type ResolvedAgentDef } from "../../src/manifest/index.js";
import { scriptedModel } from "../../src/pipeline/providers/llm/scripted.js";
import type { TtsProvider } from "../../src/pipeline/tts-port.js";
import { Session } from "../../src/session/session.js";
import { MemorySessionStore } from "../../src/session/store.js";
import { FakeStt, FakeTts, fakeVad } from "../../src/testing/fake-speech.js";
import { MemoryLink } from "../../src/testing/memory-link.js";
import { s2sSession } from "../../src/testing/s2s-session.js";
import { countOption, docSection, flagValue, ms, ratio, runBench, within, writeSection } from "../shared/common.js";
import { monoMs, summarize, type Summary } from "../shared/stats.js";

const RUN_LIMIT_MS = 120_000;
const { path: DOCS, start: START, end: END } = docSection("bench:guardrails");
/** Unreported warm-up turns per session (the JIT, the reply loop's first import). */
const WARMUP_TURNS = 30;

/** The trivial guardrail: a full card number, 13 to 19 digits, spaced or dashed or not. */
const CARD_NUMBER = /\b(?:\d[ -]?){12,18}\d\b/;
const noCardNumbers: Guardrail = (text) => (CARD_NUMBER.test(text) ? { replacement: "I can't read card numbers out loud." } : undefined);

const SCRIPT = { rules: [{ when: "order", say: "Your order shipped on Monday and arrives on Friday. Anything else I can help with?" }] };

/** s2s: the service's first audio after the caller's speech ends (ms), and how much faster than real time it sends audio. */
const S2S_FIRST_AUDIO_MS = 500;
const S2S_SERVICE_SPEED = 2;
/** s2s: when the caller's transcript arrives after their speech ends (ms). */
const TRANSCRIPT_LATENCIES_MS = [250, 500, 750, 1000, 1500, 2000] as const;
const S2S_ANSWER_MS = 6000;
const CHUNK_MS = 20;

interface Variant {
  readonly label: string;
  readonly guardrails: { inputGuardrails?: Guardrail[]; outputGuardrails?: Guardrail[] };
}

const VARIANTS: readonly Variant[] = [
  { label: "no guardrails (baseline)", guardrails: {} },
  { label: "one synchronous output guardrail", guardrails: { outputGuardrails: [noCardNumbers] } },
  { label: "the same as input and output guardrail", guardrails: { inputGuardrails: [noCardNumbers], outputGuardrails: [noCardNumbers] } },
];

/** One pipeline session on the fakes, with marks for the first TTS text and the first audio out. */
class Measured {
  readonly link = new MemoryLink(systemClock);
  readonly stt = new FakeStt({ endpointing: true });
  readonly session: Session;
  readonly toTts: number[] = [];
  readonly toAudio: number[] = [];
  #finalAt: number | undefined;
  #ttsAt: number | undefined;
  #audioAt: number | undefined;

  constructor(variant: Variant) {
    const fake = new FakeTts(systemClock, { msPerChar: 0.02, latencyMs: 0 });
    const tts: TtsProvider = {
      kind: "fake",
      open: async (options) => {
        const session = await fake.open(options);
        return {
          ...session,
          stream: (events) => {
            const stream = session.stream(events);
            return {
              ...stream,
              push: (text) => {
                this.#ttsAt ??= monoMs();
                stream.push(text);
              },
            };
          },
        };
      },
    };
    const audio = this.link.audio.bind(this.link);
    this.link.audio = (pcm, durationMs) => {
      this.#audioAt ??= monoMs();
      audio(pcm, durationMs);
    };
    const def = agent({ name: "bench", greeting: "", ...variant.guardrails }) as ResolvedAgentDef;
    const config = toAgentConfig({ ...(def as AgentConfigSource), llm: { kind: "scripted", options: {} } }, { warn: () => {} });
    const model = scriptedModel(SCRIPT);
    this.session = new Session({
      agent: { def, config },
      link: this.link,
      clock: systemClock,
      log: silentLogger,
      store: new MemorySessionStore(systemClock),
      resolveModel: () => model,
      voice: { stt: () => this.stt, tts: () => tts, vad: (rate) => Promise.resolve(fakeVad(rate)) },
    });
  }

  /** One turn: the STT's final, then wait for the reply to have played. */
  async turn(record: boolean): Promise<void> {
    const after = this.link.events.length;
    this.#ttsAt = undefined;
    this.#audioAt = undefined;
    this.#finalAt = monoMs();
    this.stt.current.final("where is my order", true);
    await within(this.link.next("reply.completed", after), 5_000, "a reply");
    if (!record || this.#ttsAt === undefined || this.#audioAt === undefined) return;
    this.toTts.push(this.#ttsAt - this.#finalAt);
    this.toAudio.push(this.#audioAt - this.#finalAt);
  }
}

/** s2s: what the caller hears of the answer to a refused turn whose transcript arrives `latencyMs` after their speech ended. */
async function s2sLeak(latencyMs: number): Promise<{ playedMs: number; unplayedMs: number }> {
  const def = agent({ name: "bench", greeting: "", s2s: { kind: "openai-realtime", options: {} }, inputGuardrails: [noCardNumbers] }) as ResolvedAgentDef;
  const { link, fake, clock, session } = await s2sSession(def);
  const start = clock.now();
  fake.events.speechStarted();
  fake.events.speechStopped();
  let answer: string | undefined;
  let sentMs = 0;
  let verdictAt: number | undefined;
  // Each 20 ms chunk of the answer, due at its place on the service's faster-than-real-time schedule.
  const chunkDue = (i: number): number => S2S_FIRST_AUDIO_MS + (i * CHUNK_MS) / S2S_SERVICE_SPEED;
  for (let i = 0, t = 0; t <= Math.max(latencyMs, chunkDue(S2S_ANSWER_MS / CHUNK_MS)); t += 5) {
    await clock.advance(start + t - clock.now());
    if (answer === undefined && t >= S2S_FIRST_AUDIO_MS) answer = fake.start();
    while (answer !== undefined && sentMs < S2S_ANSWER_MS && chunkDue(i) <= t) {
      fake.events.audio(new Uint8Array((48 * CHUNK_MS)), { responseId: answer, itemId: `item_${answer}` });
      sentMs += CHUNK_MS;
      i += 1;
    }
    if (verdictAt === undefined && t >= latencyMs) {
      const cancelled = link.of("reply.cancelled").length;
      fake.events.userTranscript("my card is 4111 1111 1111 1111", { final: true, itemId: "item_caller" });
      await clock.advance(0);
      if (link.of("reply.cancelled").length > cancelled || answer === undefined) verdictAt = clock.now();
    }
  }
  await session.end();
  // The link plays what it was handed in real time, one chunk after another.
  let playEnd = 0;
  let playedMs = 0;
  let handedMs = 0;
  const at = verdictAt ?? clock.now();
  for (const chunk of link.audioOut) {
    if (chunk.at > at) break;
    const begins = Math.max(playEnd, chunk.at);
    playEnd = begins + chunk.ms;
    playedMs += Math.min(chunk.ms, Math.max(0, at - begins));
    handedMs += chunk.ms;
  }
  return { playedMs, unplayedMs: handedMs - playedMs };
}

function row(label: string, figure: (s: Summary) => number, runs: readonly Summary[]): string {
  const [base, ...rest] = runs.map(figure);
  return `| ${label} | ${[base, ...rest].map((v) => ms(v ?? Number.NaN)).join(" | ")} | ${rest.map((v) => ratio(v ?? 0, base ?? 0)).join(" | ")} |`;
}

async function main(): Promise<number> {
  const turns = countOption(flagValue(process.argv, "turns"), 300, "turns");
  const docs = !process.argv.includes("--no-docs");
  const began = monoMs();
  const sessions = VARIANTS.map((variant) => new Measured(variant));
  await Promise.all(sessions.map((s) => s.session.start()));
  for (let i = 0; i < WARMUP_TURNS + turns; i++) {
    // Rotate which session goes first, so none always runs right after a warm cache or a GC.
    for (let j = 0; j < sessions.length; j++) await sessions[(i + j) % sessions.length]?.turn(i >= WARMUP_TURNS);
  }
  await Promise.all(sessions.map((s) => s.session.end()));
  const toTts = sessions.map((s) => summarize(s.toTts));
  const toAudio = sessions.map((s) => summarize(s.toAudio));
  const leaks: string[] = [];
  for (const latencyMs of TRANSCRIPT_LATENCIES_MS) {
    const { playedMs, unplayedMs } = await s2sLeak(latencyMs);
    leaks.push(`| ${latencyMs} | ${Math.round(playedMs)} | ${Math.round(unplayedMs)} |`);
  }

  const cpu = cpus()[0]?.model.trim().split(/\s+/).slice(0, 2).join(" ") ?? "unknown CPU";
  const header = `| figure (ms) | ${VARIANTS.map((v) => v.label).join(" | ")} | ${VARIANTS.slice(1).map((v) => `${v.label} ÷ baseline`).join(" | ")} |`;
  const align = `|---|${VARIANTS.map(() => "--:").join("|")}|${VARIANTS.slice(1).map(() => "--:").join("|")}|`;
  const body = [
    START,
    `Run ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC on ${cpu} (${cpus().length} cores), Node ${process.version}, ${process.platform}/${process.arch}; ${turns} turns per session after ${WARMUP_TURNS} of warm-up, interleaved; ${((monoMs() - began) / 1000).toFixed(0)} s in all.`,
    "",
    header,
    align,
    row("STT final → first TTS text, p50", (s) => s.p50, toTts),
    row("STT final → first TTS text, p95", (s) => s.p95, toTts),
    row("STT final → first TTS text, mean", (s) => s.mean, toTts),
    row("STT final → first audio out, p50", (s) => s.p50, toAudio),
    row("STT final → first audio out, p95", (s) => s.p95, toAudio),
    row("STT final → first audio out, mean", (s) => s.mean, toAudio),
    "",
    `s2s, a trivial synchronous input guardrail refusing the caller's turn: the answer's first audio ${S2S_FIRST_AUDIO_MS} ms after the caller's speech ended, its audio sent ${S2S_SERVICE_SPEED}× faster than real time.`,
    "",
    "| caller's transcript after their speech ended (ms) | answer heard by the verdict (ms) | answer sent, not yet played, flushed by the verdict (ms) |",
    "|--:|--:|--:|",
    ...leaks,
    END,
  ].join("\n");
  console.log(body);
  if (docs) writeSection(DOCS, START, END, body);
  return 0;
}

runBench("bench:guardrails", RUN_LIMIT_MS, main);
