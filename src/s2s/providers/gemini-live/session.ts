/**
 * Gemini Live: the port over the session's sockets (their lifecycle: `sockets.ts`), and Gemini's
 * messages mapped onto it (the mapping and its gaps: the header of `gemini-live.ts`).
 */
import { GatewayError } from "../../../errors.js";
import { ServiceAudio } from "../../../audio/service-audio.js";
import { sendAudioOrDrop } from "../../../providers/ws-backlog.js";
import { base64TextOf, type AudioPayload } from "../../../audio/audio-payload.js";
import { Base64Frame } from "../../../audio/base64-frame.js";
import { isRecord } from "../../../providers/ws-frames.js";
import type { S2sEvents, S2sOpenOptions, S2sSession } from "../../s2s-port.js";
import { CallerSpeech } from "./caller-speech.js";
import { openAborted, type Link } from "./link.js";
import { GeminiSockets, type Runtime } from "./sockets.js";
import { GEMINI_INPUT_RATE, GEMINI_OUTPUT_RATE, INPUT_MIME, type GeminiLiveSettings } from "./settings.js";
import { historyTurns } from "./setup.js";
import { spread } from "../../../spread.js";

/** `realtimeInput` audio, every 20 ms of a call: written around a template (audio/base64-frame.ts); the data last. */
const REALTIME_AUDIO = new Base64Frame((data) => ({ realtimeInput: { audio: { mimeType: INPUT_MIME, data } } }));

/** A synthesized response (Gemini has no response ids). */
interface Turn {
  readonly id: string;
  readonly outOfBand: boolean;
  /** `cancelResponse` was called: nothing more of it is forwarded but its tool calls. */
  muted: boolean;
  usage?: { inputTokens: number; outputTokens: number; totalTokens: number };
}

interface FunctionResponse {
  id?: string;
  name: string;
  response: { output: string };
}

/**
 * A request the model has not acted on yet, re-sent once on each new socket until it does: a
 * `toolResponse` (acted on when the model next outputs on the socket it went out on) or a
 * `clientContent` asking for a response (`createResponse`, `sendText`; acted on when a response
 * starts, oldest first).
 */
type Pending =
  | { readonly kind: "tools"; readonly message: object; sentOn: Link | undefined }
  | { readonly kind: "ask"; readonly message: object; readonly outOfBand: boolean; readonly typed: boolean; sentOn: Link | undefined };

function numberOr(value: unknown, fallback: number): number {
  return typeof value === "number" && Number.isFinite(value) ? value : fallback;
}

export class GeminiLiveSession extends GeminiSockets implements S2sSession {
  readonly audioFormat = "pcm16";
  readonly inputSampleRate = GEMINI_INPUT_RATE;
  readonly outputSampleRate = GEMINI_OUTPUT_RATE;
  readonly #speech: CallerSpeech;
  /** The model's `inlineData` audio, decoded strictly. */
  readonly #audio: ServiceAudio;
  #turn: Turn | undefined;
  #responses = 0;
  readonly #callNames = new Map<string, { name: string; wireId: string | undefined }>();
  #calls = 0;
  #pending: Pending[] = [];
  /** `interrupted` came; the `turnComplete` that closes that turn has not. */
  #closingInterrupted = false;
  /** A `toolCall` ended the last turn and the model has not continued yet (not resumable meanwhile). */
  #toolRound = false;
  #droppedAudio = 0;
  /** Every byte of caller audio dropped (while reconnecting, or by the backlog limit), for the session's report at close. */
  #droppedTotal = 0;
  #warnedRate = false;
  #closing: Promise<void> | undefined;

  private constructor(settings: GeminiLiveSettings, runtime: Runtime, options: S2sOpenOptions, events: S2sEvents) {
    super(settings, runtime, options, events);
    this.#speech = new CallerSpeech(this.events);
    this.#audio = new ServiceAudio("gemini-live", runtime.log, () => runtime.clock.now());
  }

  protected busy(): boolean {
    return this.#turn !== undefined || this.#toolRound;
  }

  static async open(settings: GeminiLiveSettings, runtime: Runtime, options: S2sOpenOptions, events: S2sEvents): Promise<S2sSession> {
    const { signal } = options;
    if (signal?.aborted === true) throw openAborted(signal);
    const session = new GeminiLiveSession(settings, runtime, options, events);
    try {
      await session.dial(signal);
    } catch (error) {
      session.state = "closed";
      throw error;
    }
    return session;
  }

  // ---- the port ----

  /** Caller audio dropped so far (bytes): not sent while reconnecting, or over the socket's backlog limit. */
  get droppedAudioBytes(): number {
    return this.#droppedTotal;
  }

  sendAudio(audio: AudioPayload): void {
    const link = this.link;
    if (this.state !== "open" || link?.ready !== true) {
      this.#droppedAudio += audio.byteLength; // real time: never queued (logged on the next reconnect)
      this.#droppedTotal += audio.byteLength;
      return;
    }
    const dropped = sendAudioOrDrop(link.ws, REALTIME_AUDIO.write(base64TextOf(audio)), audio.byteLength);
    this.#droppedAudio += dropped;
    this.#droppedTotal += dropped;
  }

  createResponse(options: { readonly instructions?: string; readonly outOfBand?: boolean } = {}): void {
    // No out-of-band responses on Gemini: a user turn carrying the instructions, which Gemini
    // keeps in its context (there is no `conversation:"none"`); see the header.
    const turns = options.instructions === undefined ? [] : [{ role: "user", parts: [{ text: options.instructions }] }];
    const message = { clientContent: spread(turns.length > 0 ? { turns } : {}, { turnComplete: true }) };
    this.#request({ kind: "ask", message, outOfBand: options.outOfBand === true, typed: false, sentOn: undefined });
  }

  sendText(text: string): void {
    const message = { clientContent: { turns: [{ role: "user", parts: [{ text }] }], turnComplete: true } };
    this.#request({ kind: "ask", message, outOfBand: false, typed: true, sentOn: undefined });
  }

  /** Gemini has no system role mid-session: the note is a `user` turn the model answers (kept in its context, re-sent on a new socket until answered). */
  note(text: string): boolean {
    const message = { clientContent: { turns: [{ role: "user", parts: [{ text }] }], turnComplete: true } };
    this.#request({ kind: "ask", message, outOfBand: false, typed: false, sentOn: undefined });
    return true;
  }

  cancelResponse(responseId?: string): void {
    const turn = this.#turn;
    if (turn === undefined || (responseId !== undefined && responseId !== turn.id)) {
      this.runtime.log.debug({ responseId }, "gemini-live: no such response in flight; cancel ignored");
      return;
    }
    // No cancel message on Gemini: stop forwarding the rest of this turn (see the header).
    turn.muted = true;
  }

  truncate(itemId: string, audioEndMs: number): void {
    this.runtime.log.debug({ itemId, audioEndMs }, "gemini-live: truncate is not supported; ignored");
  }

  sendToolResults(results: readonly { readonly callId: string; readonly output: string }[], respond: boolean): void {
    if (results.length === 0) return;
    if (!respond) this.runtime.log.debug({}, "gemini-live: the model continues on its own after a toolResponse; respond:false cannot be honoured");
    const responses = results.map((result): FunctionResponse => {
      const call = this.#callNames.get(result.callId);
      if (call === undefined) this.runtime.log.warn({ callId: result.callId }, "gemini-live: a tool result for an unknown call");
      return spread(call === undefined ? { id: result.callId } : call.wireId === undefined ? {} : { id: call.wireId }, {
        name: call?.name ?? "",
        response: { output: result.output },
      });
    });
    this.#request({ kind: "tools", message: { toolResponse: { functionResponses: responses } }, sentOn: undefined });
  }

  close(): Promise<void> {
    if (this.#closing !== undefined) return this.#closing;
    if (this.state === "closed") return Promise.resolve();
    this.state = "closing";
    this.stop.abort(new Error("gemini-live session closed"));
    this.goAway.stop();
    const link = this.link;
    this.link = undefined;
    this.#closing = (link === undefined ? Promise.resolve() : this.closeLink(link)).then(() => {
      this.state = "closed";
      this.events.closed({ expected: true });
    });
    return this.#closing;
  }

  /** A new socket is ready: restore the conversation, then re-send (or send) every pending request, in order. */
  protected restore(): void {
    const link = this.link;
    if (link === undefined) return;
    if (!link.resumed) {
      const turns = historyTurns(this.options.history());
      if (turns.length > 0) this.send(link, { clientContent: { turns, turnComplete: false } });
    }
    for (const item of this.#pending) {
      item.sentOn = link;
      // A typed turn is in the replayed history already (the session commits it first): only ask for the response.
      this.send(link, item.kind === "ask" && item.typed && !link.resumed ? { clientContent: { turnComplete: true } } : item.message);
    }
    if (this.#droppedAudio > 0) this.runtime.log.debug({ bytes: this.#droppedAudio }, "gemini-live: mic audio dropped while reconnecting");
    this.#droppedAudio = 0;
    this.runtime.log.debug({ link: link.id, resumed: link.resumed }, "gemini-live: reconnected");
    this.events.reconnected?.();
  }

  /** A request: sent now on a ready socket, else when the next one is ready (`restore`); kept until the model acts on it. */
  #request(item: Pending): void {
    if (this.state === "closing" || this.state === "closed") {
      this.runtime.log.debug({ kind: item.kind }, "gemini-live: session closed; request dropped");
      return;
    }
    this.#pending.push(item);
    const link = this.link;
    if (this.state === "open" && link?.ready === true) {
      item.sentOn = link;
      this.send(link, item.message);
    }
  }

  // ---- server messages (docs/vendors.md (Gemini Live), "Messages" and "Turns") ----

  /** One server message; it may carry several top-level keys. */
  protected onMessage(link: Link, message: Record<string, unknown>): void {
    const { usageMetadata, sessionResumptionUpdate, serverContent, toolCall, toolCallCancellation, goAway, voiceActivity, error } = message;
    if (isRecord(usageMetadata)) this.#onUsage(usageMetadata);
    if (isRecord(voiceActivity)) this.#onVoiceActivity(voiceActivity);
    if (isRecord(serverContent)) this.#onServerContent(link, serverContent);
    if (isRecord(toolCall)) this.#onToolCall(link, toolCall);
    if (isRecord(toolCallCancellation)) {
      // A barge-in voided pending calls; the tool runner's results for them are harmless.
      this.#toolRound = false;
      this.runtime.log.debug({ ids: toolCallCancellation.ids }, "gemini-live: tool calls cancelled by the server");
    }
    // After the content it came with: a handle in the same message as `turnComplete` reflects that turn.
    if (isRecord(sessionResumptionUpdate)) this.#onResumption(link, sessionResumptionUpdate);
    if (isRecord(error)) {
      const text = typeof error.message === "string" ? error.message : JSON.stringify(error);
      this.events.error(new GatewayError("s2s", `Gemini Live error: ${text}`), { fatal: false });
    }
    if (isRecord(goAway)) this.goAway.goAway(link, goAway);
    if (this.goAway.draining === link) this.goAway.maybeSwitch();
  }

  #onUsage(usage: Record<string, unknown>): void {
    const inputTokens = numberOr(usage.promptTokenCount, 0);
    const outputTokens = numberOr(usage.responseTokenCount, numberOr(usage.candidatesTokenCount, 0));
    const totals = { inputTokens, outputTokens, totalTokens: numberOr(usage.totalTokenCount, inputTokens + outputTokens) };
    if (this.#turn !== undefined) this.#turn.usage = totals;
  }

  #onResumption(link: Link, update: Record<string, unknown>): void {
    // Keep the newest resumable handle; a non-resumable moment (generating, calling tools: no
    // handle, `resumable:false`) keeps the older one, which then predates the last turn.
    if (update.resumable !== false && typeof update.newHandle === "string" && update.newHandle !== "") {
      this.handle = update.newHandle;
      this.handleCurrent = true;
      link.sentHandle = true;
    }
  }

  /** `voiceActivity` (SDK `VoiceActivity {voiceActivityType, audioOffset}`): the service's own activity detection. */
  #onVoiceActivity(activity: Record<string, unknown>): void {
    // A start while a response is in flight is left to `interrupted` (the barge-in, when activity
    // handling interrupts); an end is the only end-of-speech report Gemini gives.
    if (activity.voiceActivityType === "ACTIVITY_START" && this.#turn === undefined) this.#speech.started();
    else if (activity.voiceActivityType === "ACTIVITY_END") this.#speech.stopped();
  }

  #onServerContent(link: Link, content: Record<string, unknown>): void {
    const { inputTranscription, modelTurn, outputTranscription } = content;
    if (isRecord(inputTranscription)) this.#speech.transcription(inputTranscription, this.#turn !== undefined);
    if (content.interrupted === true) {
      // Gemini's VAD heard the caller over the model: the barge-in. Queued audio of this turn is
      // void, and what the caller said before is one utterance, final now: the next pieces are new speech.
      this.#speech.flush();
      this.#speech.started();
      this.endTurn("cancelled");
      this.#closingInterrupted = true;
    } else {
      if (isRecord(modelTurn) && Array.isArray(modelTurn.parts)) this.#onModelParts(link, modelTurn.parts);
      if (isRecord(outputTranscription) && typeof outputTranscription.text === "string" && outputTranscription.text !== "") {
        const turn = this.#modelOutput(link);
        if (!turn.muted) this.events.agentTranscript(outputTranscription.text, { responseId: turn.id, itemId: turn.id });
      }
    }
    // The model is done generating: the utterance it answered is over.
    if (content.generationComplete === true) this.#speech.flush();
    if (content.turnComplete === true) {
      if (this.#turn !== undefined) this.endTurn("completed");
      // A turn that answered nothing still ends the utterance; the one closing an interrupted turn
      // comes while the barge-in utterance is being spoken, and leaves it open.
      else if (!this.#closingInterrupted) this.#speech.flush();
      this.#closingInterrupted = false;
    }
  }

  #onModelParts(link: Link, parts: unknown[]): void {
    for (const part of parts) {
      if (!isRecord(part) || !isRecord(part.inlineData)) continue; // `text`, `executableCode`: not spoken
      const { mimeType, data } = part.inlineData;
      if (typeof data !== "string" || (typeof mimeType === "string" && !mimeType.startsWith("audio/"))) continue;
      if (!this.#warnedRate && typeof mimeType === "string" && !mimeType.includes(`rate=${GEMINI_OUTPUT_RATE}`)) {
        this.#warnedRate = true;
        this.runtime.log.warn({ mimeType }, "gemini-live: model audio is not the expected 24 kHz PCM16");
      }
      const turn = this.#modelOutput(link);
      if (turn.muted) continue;
      const pcm = this.#audio.decode(data, { turn: turn.id });
      if (pcm !== undefined && pcm.byteLength > 0) this.events.audio(new Uint8Array(pcm.buffer, pcm.byteOffset, pcm.byteLength), { responseId: turn.id, itemId: turn.id });
    }
  }

  #onToolCall(link: Link, toolCall: Record<string, unknown>): void {
    const calls = Array.isArray(toolCall.functionCalls) ? toolCall.functionCalls.filter(isRecord) : [];
    if (calls.length === 0) return;
    const turn = this.#modelOutput(link);
    for (const call of calls) {
      const wireId = typeof call.id === "string" && call.id !== "" ? call.id : undefined;
      const callId = wireId ?? `gemini_call_${++this.#calls}`;
      const name = typeof call.name === "string" ? call.name : "";
      this.#callNames.set(callId, { name, wireId });
      this.events.toolCall({ callId, name, args: call.args ?? {}, responseId: turn.id });
    }
    // Gemini waits for the toolResponse: this batch's response is done (see the header).
    this.endTurn("completed");
    this.#toolRound = true;
  }

  /** The response this model output belongs to, started when none is in flight. Delivers outstanding tool results. */
  #modelOutput(link: Link): Turn {
    this.#pending = this.#pending.filter((item) => item.kind !== "tools" || item.sentOn !== link);
    if (this.#turn !== undefined) return this.#turn;
    // The oldest request for a response is answered by this one (Gemini names neither).
    const asked = this.#pending.find((item) => item.kind === "ask");
    if (asked !== undefined) this.#pending = this.#pending.filter((item) => item !== asked);
    const turn: Turn = { id: `gemini_${++this.#responses}`, outOfBand: asked?.kind === "ask" && asked.outOfBand, muted: false };
    this.#turn = turn;
    this.#toolRound = false;
    this.events.responseStarted({ responseId: turn.id, outOfBand: turn.outOfBand });
    // No `voiceActivity` end came: the model answering is the first sign the caller stopped. Reported
    // after the response started, as inferred, so no turn is timed from it (see the header, "Speech edges").
    this.#speech.stopped(true);
    return turn;
  }

  protected endTurn(status: "completed" | "cancelled" | "failed"): void {
    const turn = this.#turn;
    if (turn === undefined) return;
    this.#turn = undefined;
    this.handleCurrent = false; // the service's state moved on: a handle from before is stale
    this.#speech.flush(); // the utterance ends with the response to it; the caller's words go before the reply
    this.events.responseDone({
      responseId: turn.id,
      outOfBand: turn.outOfBand,
      status: turn.muted ? "cancelled" : status,
      ...(turn.usage === undefined ? {} : { usage: turn.usage }),
    });
  }

}
