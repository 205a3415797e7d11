/**
 * Screening a call for an answering machine (docs/telephony.md "Voicemail and answering
 * machines"): from the moment the call starts until a verdict, the agent does not speak and the
 * callee's speech makes no turn (a recorded greeting would otherwise be answered, and talked
 * over). The verdict comes from the carrier's detection (a call the gateway placed with it on),
 * from the transcript (voicemail/greeting-judge.ts, pipeline only), or from a beep on the
 * callee's audio (audio/beep-detector.ts, both voice modes) — whichever comes first among the
 * sources the agent's `voicemail.detection` allows. No verdict within `windowMs`: a person.
 *
 * A person: the turns are released and the agent greets. A machine: `voicemail.detected` is
 * emitted (the call record keeps it); with action `hangup` (or a fax, whatever the action) the
 * call ends at once; with `message`, the message is spoken verbatim once the greeting has ended —
 * a beep, the carrier saying so (`machine_end_*`), or `GREETING_END_QUIET_MS` of quiet after the
 * greeting — or `beepWaitMs` after the verdict at the latest; the call ends once it has been heard.
 */
import { decodeAlaw, decodeMulaw } from "../audio/g711.js";
import { bytesToSamples } from "../audio/pcm.js";
import { DEFAULT_SESSION_AUDIO, type AudioFormat } from "../audio/rates.js";
import type { ClientLink } from "../transport/client-connection.js";
import { BeepDetector, type BeepHeard } from "../audio/beep-detector.js";
import type { Timer } from "../clock.js";
import type { EventBody } from "../events.js";
import type { ResolvedVoicemail } from "../manifest/index.js";
import type { CarrierVerdict } from "../voicemail/answered-by.js";
import { judgeGreeting, wordCount, type GreetingVerdict } from "../voicemail/greeting-judge.js";
import type { RunnerContext, TranscriptListener } from "./mode-runner.js";

/** How often a pending judgement is looked at again while the callee is quiet (ms): a pause or a monologue is a matter of time passing. */
export const JUDGE_TICK_MS = 100;
/** A frame quieter than this is silence on a phone line (dBFS): line noise sits well below, speech well above. */
export const QUIET_DBFS = -45;
/** After a machine's greeting, this much quiet means it is recording (ms): machines that do not beep start recording in silence. */
export const GREETING_END_QUIET_MS = 2000;

/** What the session offers a call screened for a machine. */
export interface CallScreening {
  /** The gateway placed this call (`POST /v1/calls`); false: it answered it. */
  readonly placed: boolean;
  /** The carrier's verdicts on this call, when it was placed with the carrier's detection on: subscribe, and the unsubscribe. */
  readonly carrierVerdicts?: ((listener: (verdict: CarrierVerdict) => void) => () => void) | undefined;
}

/** The link as a mode opens on it (session/modes.ts `ModeOpening.link`). */
type ModeLink = Pick<ClientLink, "audio" | "playbackRate" | "g711" | "useAudio" | "playWaiting">;

/** The session's ports the screen reads: its clock, log and event outlet as every runner gets them, and its own. */
// A method, not picked: a mapped type would make it a property, and lint's unbound-method would no longer catch it taken off the object.
export interface VoicemailScreenHooks extends Pick<RunnerContext, "clock" | "log"> {
  emit(event: EventBody): void;
  /** Whether the mode transcribes (pipeline): transcript heuristics need a transcript. */
  readonly transcribes: boolean;
  /** A person answered: release the caller's turns and greet. */
  human(): void;
  /** End the call now (a machine with action `hangup`, a fax). */
  hangUp(reason: string): void;
  /** Say `text` verbatim, then end the call once it has been heard. */
  leaveMessage(text: string): void;
}

type Source = "carrier" | "transcript" | "beep";

/** Whether an agent's `voicemail` screens this call at all (and so holds its greeting). */
export function screens(settings: ResolvedVoicemail | undefined, call: CallScreening | undefined): settings is ResolvedVoicemail {
  if (settings === undefined || call === undefined) return false;
  if (!call.placed && settings.calls !== "all") return false;
  // Carrier-only detection on a call with no carrier verdict would only delay the greeting.
  return settings.detection !== "carrier" || call.carrierVerdicts !== undefined;
}

export class VoicemailScreen implements TranscriptListener {
  readonly #hooks: VoicemailScreenHooks;
  readonly #settings: ResolvedVoicemail;
  readonly #call: CallScreening;
  #state: "screening" | "waiting for the beep" | "done" = "screening";
  #verdict: "human" | "machine" | undefined;
  /** The callee's speech makes no turn: until a person is found (a machine's never does). */
  #turnsHeld = true;
  readonly #timers: Timer[] = [];
  /** The judge's next look (replaced each tick). */
  #tickTimer: Timer | undefined;
  #unsubscribe: (() => void) | undefined;
  #beeps: BeepDetector | undefined;
  #beepsRate = 0;
  /** A beep was heard (before a carrier's machine verdict, it times the message). */
  #beepHeard = false;
  /** Quiet since this many ms of audio (undefined: sound now); sound heard at all. */
  #quietSinceMs: number | undefined;
  #soundHeard = false;
  // What the transcript said, for the judge.
  #finals = "";
  #interim = "";
  #speechStart: number | undefined;
  #firstEnd: number | undefined;
  #firstWords = 0;
  #spokeAgain = false;

  /** What the session hears, as its mode declared it: the callee's audio is decoded from it. */
  #input: AudioFormat = DEFAULT_SESSION_AUDIO.input;

  constructor(settings: ResolvedVoicemail, call: CallScreening, hooks: VoicemailScreenHooks) {
    this.#hooks = hooks;
    this.#settings = settings;
    this.#call = call;
  }

  /**
   * The screen for a session, or undefined when the agent's `voicemail` does not screen this one:
   * only a phone call (`call` set by the gateway) in a voice mode.
   */
  static for(settings: ResolvedVoicemail | undefined, call: CallScreening | undefined, hooks: VoicemailScreenHooks): VoicemailScreen | undefined {
    return screens(settings, call) && call !== undefined ? new VoicemailScreen(settings, call, hooks) : undefined;
  }

  /** The link as the mode sees it: the audio format the mode declares is noted, to decode the callee's audio. */
  modeLink(link: ModeLink): ModeLink {
    const playWaiting = link.playWaiting?.bind(link);
    return {
      audio: (chunk, durationMs) => link.audio(chunk, durationMs),
      get playbackRate() {
        return link.playbackRate;
      },
      g711: link.g711,
      useAudio: (audio) => {
        link.useAudio(audio);
        this.#input = audio.input;
      },
      ...(playWaiting === undefined ? {} : { playWaiting }),
    };
  }

  /**
   * The callee's audio: screened, then whether the mode may hear it — not while the turns are held
   * by a mode that cannot hold them itself (`modeHolds` false: s2s, whose service would answer).
   */
  pass(chunk: Uint8Array, modeHolds: boolean): boolean {
    this.audio(chunk, this.#input);
    return modeHolds || !this.#turnsHeld;
  }

  /** The callee's speech makes no turn: until a person answered (on a machine, to the end of the call). */
  get holding(): boolean {
    return this.#turnsHeld;
  }

  /** Start screening: the window, the carrier's verdicts, the judge's ticks. */
  begin(): void {
    const { clock, log } = this.#hooks;
    const settings = this.#settings;
    const call = this.#call;
    log.info({ placed: call.placed, detection: settings.detection, windowMs: settings.windowMs }, "screening the call for an answering machine");
    this.#timers.push(clock.setTimeout(() => this.#windowEnded(), settings.windowMs));
    if (settings.detection !== "local" && call.carrierVerdicts !== undefined) this.#unsubscribe = call.carrierVerdicts((verdict) => this.#carrier(verdict));
    if (this.#local && this.#hooks.transcribes) this.#tick();
  }

  /** The session ended: timers cancelled, the carrier's verdicts no longer wanted. */
  stop(): void {
    this.#state = "done";
    this.#release();
  }

  /** The callee's audio, in the session's input format. */
  audio(chunk: Uint8Array, format: AudioFormat): void {
    if (this.#state === "done") return;
    if (this.#beeps === undefined || this.#beepsRate !== format.sampleRate) {
      this.#beeps = new BeepDetector(format.sampleRate);
      this.#beepsRate = format.sampleRate;
    }
    const samples = format.encoding === "pcmu" ? decodeMulaw(chunk) : format.encoding === "pcma" ? decodeAlaw(chunk) : bytesToSamples(chunk);
    const detector = this.#beeps;
    const beeps = detector.push(samples, (level) => this.#level(level, detector.heardMs));
    for (const beep of beeps) this.#beep(beep);
  }

  // ── the transcript (pipeline) ───────────────────────────────────────────────────────────

  speech(): void {
    const now = this.#hooks.clock.now();
    if (this.#speechStart === undefined) this.#speechStart = now;
    else if (this.#firstEnd !== undefined) this.#spokeAgain = true;
  }

  partial(text: string): void {
    this.speech();
    this.#interim = text;
    if (this.#firstEnd === undefined) this.#firstWords = wordCount(text);
    this.#judge();
  }

  final(text: string, endOfTurn: boolean): void {
    this.speech();
    this.#finals = `${this.#finals} ${text}`.trim();
    this.#interim = "";
    if (this.#firstEnd === undefined) {
      this.#firstWords = wordCount(this.#finals);
      if (endOfTurn) this.#firstEnd = this.#hooks.clock.now();
    }
    this.#judge();
  }

  // ── verdicts ────────────────────────────────────────────────────────────────────────────

  get #local(): boolean {
    return this.#settings.detection !== "carrier";
  }

  #tick(): void {
    if (this.#state !== "screening") return;
    this.#judge();
    if (this.#state === "screening") this.#tickTimer = this.#hooks.clock.setTimeout(() => this.#tick(), JUDGE_TICK_MS);
  }

  #judge(): void {
    if (this.#state !== "screening" || !this.#local) return;
    const verdict: GreetingVerdict | undefined = judgeGreeting({
      text: `${this.#finals} ${this.#interim}`.trim(),
      speechStartMs: this.#speechStart,
      firstUtteranceEndMs: this.#firstEnd,
      firstUtteranceWords: this.#firstWords,
      spokeAgain: this.#spokeAgain,
      nowMs: this.#hooks.clock.now(),
    });
    if (verdict === undefined) return;
    if (verdict.verdict === "human") return this.#human("transcript");
    this.#machine("transcript", { reason: verdict.reason, ...(verdict.reason === "phrase" ? { phrase: verdict.phrase } : {}) }, false);
  }

  #carrier(verdict: CarrierVerdict): void {
    const { log } = this.#hooks;
    if (this.#state === "done") {
      log.info({ answeredBy: verdict.answeredBy }, "carrier answering-machine verdict after the call was decided: not acted on");
      return;
    }
    if (verdict.kind === "machine" && verdict.greetingEnded && this.#state === "waiting for the beep") return this.#speak("carrier: greeting ended");
    if (this.#state !== "screening") return;
    switch (verdict.kind) {
      case "human":
        return this.#human("carrier");
      case "machine":
        return this.#machine("carrier", { answeredBy: verdict.answeredBy }, verdict.greetingEnded);
      case "fax":
        return this.#machine("carrier", { answeredBy: verdict.answeredBy }, false, true);
      case "unknown":
        log.info({ answeredBy: verdict.answeredBy }, "the carrier could not tell who answered");
        return;
    }
  }

  #beep(beep: BeepHeard): void {
    this.#hooks.log.info({ frequencyHz: beep.frequencyHz, durationMs: beep.durationMs }, "beep heard");
    this.#beepHeard = true;
    if (this.#state === "waiting for the beep") return this.#speak("beep");
    // A beep is a machine's: a verdict of its own when the gateway detects, else it only times the message.
    if (this.#state === "screening" && this.#local) this.#machine("beep", { frequencyHz: beep.frequencyHz }, true);
  }

  #level(levelDbfs: number, atMs: number): void {
    if (levelDbfs >= QUIET_DBFS) {
      this.#soundHeard = true;
      this.#quietSinceMs = undefined;
      return;
    }
    this.#quietSinceMs ??= atMs;
    if (this.#state === "waiting for the beep" && this.#soundHeard && atMs - this.#quietSinceMs >= GREETING_END_QUIET_MS) this.#speak("quiet after the greeting");
  }

  #windowEnded(): void {
    if (this.#state !== "screening") return;
    this.#human("window");
  }

  /** The verdict, once there is one. */
  get verdict(): "human" | "machine" | undefined {
    return this.#verdict;
  }

  #human(source: Source | "window"): void {
    this.#verdict = "human";
    this.#hooks.log.info({ source }, "a person answered");
    this.#state = "done";
    this.#turnsHeld = false;
    this.#release();
    this.#hooks.human();
  }

  #machine(source: Source, detail: { answeredBy?: string; reason?: string; phrase?: string; frequencyHz?: number }, greetingEnded: boolean, fax = false): void {
    const { log, clock } = this.#hooks;
    const settings = this.#settings;
    const action = fax ? "hangup" : settings.action;
    this.#verdict = "machine";
    log.info({ source, ...detail, action }, "answering machine detected");
    this.#hooks.emit({ type: "voicemail.detected", source, action, ...detail });
    if (action === "hangup") {
      this.#state = "done";
      this.#release();
      return this.#hooks.hangUp(fax ? "fax machine" : "answering machine");
    }
    if (greetingEnded || this.#beepHeard) return this.#speak(source === "beep" ? "beep" : "greeting ended");
    this.#state = "waiting for the beep";
    // The quiet that ends a greeting is counted from the verdict on.
    this.#quietSinceMs = undefined;
    this.#soundHeard = false;
    this.#timers.push(clock.setTimeout(() => this.#speak("beepWaitMs passed"), settings.beepWaitMs));
  }

  #speak(after: string): void {
    if (this.#state === "done") return;
    this.#hooks.log.info({ after }, "leaving the voicemail message");
    // The turns stay held: nothing the machine records interrupts the message.
    this.#state = "done";
    this.#release();
    this.#hooks.leaveMessage(this.#settings.message ?? "");
  }

  #release(): void {
    for (const timer of this.#timers.splice(0)) timer.cancel();
    this.#tickTimer?.cancel();
    this.#tickTimer = undefined;
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
  }
}
