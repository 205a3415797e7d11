/**
 * The agent's replies as Realtime responses (docs/realtime.md "Responses", "Client tools"): one
 * response open at a time, with one assistant message item and one content part, its text shown as
 * deltas of the session's snapshots, its audio, and its end (`done` events, `response.done`, a
 * client tool's call as its last output). The binding decides when; this owns how a response
 * looks on the wire. Pure: ids from the injected counter.
 */
import { realtimeAudioMs, type RealtimeAudioFormat } from "./audio-format.js";
import type { ClientTools } from "./client-tools.js";
import type { ConversationItems } from "./conversation-items.js";
import type { ReplyAudio } from "./reply-truncation.js";
import * as server from "./server-events.js";
import type { ConversationItem, MessageItem, Modality, RealtimeServerEvent, ResponseStatus, StatusDetails } from "./server-events.js";
import { appendedText } from "./text-deltas.js";
import type { ReplyUsage } from "./usage.js";
import { spread } from "../spread.js";

interface OpenResponse {
  readonly id: string;
  readonly item: { readonly id: string };
  /** Its message item was added (a response opened by a client tool's call has none). */
  message: boolean;
  /** The item before its message in the conversation. */
  readonly previous: string | null;
  /** The session's latest snapshot of the reply (`agent-transcript.updated`). */
  snapshot: string;
  /** The tool messages said during the reply (`tool.message`): an s2s agent speaks them out of band, outside its snapshot. */
  readonly toolLines: string[];
  /** What the client is shown: tool lines the snapshot does not hold, then the snapshot. */
  text: string;
  /** Text sent as deltas: a prefix of `text` unless a snapshot rewrote earlier text. */
  sent: string;
  /** The reply as recorded (`agent-transcript.committed`), when the session said so. */
  committed?: string;
  /** The client asked to cancel it (`response.cancel`). */
  cancelRequested: boolean;
  /** Its audio has started (its format is then fixed: session-settings.ts). */
  audioSent: boolean;
}

/** A declared client tool's call: the response's last output (its continuation is a new response). */
export interface ClientCall {
  readonly callId: string;
  readonly name: string;
  readonly args: unknown;
}

export interface ResponseStreamPorts {
  readonly modality: Modality;
  readonly send: (event: RealtimeServerEvent) => void;
  readonly eventId: () => string;
  /** A fresh id with the given prefix (`item`, `resp`). */
  readonly id: (prefix: string) => string;
  /** The client's output format now (session-settings.ts). */
  readonly format: () => RealtimeAudioFormat;
  readonly items: ConversationItems;
  readonly tools: ClientTools;
  readonly replyAudio: ReplyAudio;
  /** The binding's state machine: a response began, a response ended. */
  readonly began: () => void;
  readonly ended: () => void;
}

export class ResponseStream {
  readonly #ports: ResponseStreamPorts;
  #response: OpenResponse | undefined;

  constructor(ports: ResponseStreamPorts) {
    this.#ports = ports;
  }

  /** A response is open. */
  get open(): boolean {
    return this.#response !== undefined;
  }

  /** The open response's audio has started (its output format is fixed). */
  get audioStarted(): boolean {
    return this.#response?.audioSent === true;
  }

  /** The open response was cancelled by the client. */
  get cancelRequested(): boolean {
    return this.#response?.cancelRequested === true;
  }

  /** `response.cancel`: the open response, if any, ends `client_cancelled`. */
  requestCancel(): void {
    if (this.#response !== undefined) this.#response.cancelRequested = true;
  }

  /** The session's latest snapshot of the reply. */
  snapshot(text: string): void {
    const response = this.#message();
    response.snapshot = text;
    this.#show(response);
  }

  /** A tool message said during the reply. */
  toolLine(text: string): void {
    const response = this.#message();
    response.toolLines.push(text);
    this.#show(response);
  }

  /** The reply as the session recorded it. */
  committed(text: string): void {
    if (this.#response !== undefined) this.#response.committed = text;
  }

  /** Paced agent audio in the output format: the open response's (or a new one's). */
  audio(audio: Uint8Array): void {
    const response = this.#message();
    if (!response.audioSent) this.#ports.replyAudio.began(response.item.id);
    response.audioSent = true;
    this.#ports.replyAudio.sent(response.item.id, realtimeAudioMs(audio.byteLength, this.#ports.format()));
    this.#ports.send(server.audioDelta(this.#ports.eventId(), this.#at(response), Buffer.from(audio.buffer, audio.byteOffset, audio.byteLength).toString("base64")));
  }

  /** A declared client tool's call ends the open response, or is a response of its own. */
  call(call: ClientCall): void {
    if (this.#response === undefined) this.#begin();
    this.finish("completed", undefined, undefined, call);
  }

  /** An absorbed `response.create` no response answered (the reply ended silent): an empty one. */
  payOwed(): void {
    this.#begin(false);
    this.finish("completed");
  }

  /** The open response ends: its message's `done` events, a client call's item, `response.done`. */
  finish(status: Exclude<ResponseStatus, "in_progress">, details?: StatusDetails, usage?: ReplyUsage, call?: ClientCall): void {
    const response = this.#response;
    if (response === undefined) return;
    this.#response = undefined;
    this.#ports.ended();
    const { items, modality } = this.#ports;
    const output: ConversationItem[] = response.message ? [this.#messageDone(response, status)] : [];
    if (call !== undefined) {
      const id = this.#ports.id("item");
      const previous = items.place(id);
      const item = this.#ports.tools.call(this.#ports.send, this.#ports.eventId, { responseId: response.id, outputIndex: output.length, previous, shown: response.text }, spread(call, { id }));
      output.push(item);
      items.done(item, previous);
    }
    this.#ports.send(server.responseDone(this.#ports.eventId(), { id: response.id, status, modality, output, format: this.#ports.format(), ...(details === undefined ? {} : { statusDetails: details }), ...(usage === undefined ? {} : { usage }) }));
  }

  /** `response.created`: it answers a `response.create` absorbed before it (`replying`). */
  #begin(replying = true): OpenResponse {
    const response: OpenResponse = { id: this.#ports.id("resp"), item: { id: this.#ports.id("item") }, previous: this.#ports.items.last, message: false, snapshot: "", toolLines: [], text: "", sent: "", cancelRequested: false, audioSent: false };
    this.#response = response;
    this.#ports.began();
    this.#ports.tools.responseBegan(replying);
    this.#ports.send(server.responseCreated(this.#ports.eventId(), { id: response.id, status: "in_progress", modality: this.#ports.modality, output: [], format: this.#ports.format() }));
    return response;
  }

  /** The open response with its message, or a new one: a reply begins (or continues after a client tool's call) with its first words or audio. */
  #message(): OpenResponse {
    if (this.#response?.message === true) return this.#response;
    const response = this.#response ?? this.#begin();
    const item = this.#item(response, "in_progress", "");
    this.#ports.items.place(item.id);
    response.message = true;
    this.#ports.items.remember(item);
    this.#ports.send(server.outputItemAdded(this.#ports.eventId(), response.id, item));
    this.#ports.send(server.itemAdded(this.#ports.eventId(), item, response.previous));
    this.#ports.send(server.contentPartAdded(this.#ports.eventId(), this.#at(response), this.#ports.modality));
    return response;
  }

  /** Show the reply's text as it now stands: a delta when it extends what was sent. */
  #show(response: OpenResponse): void {
    const snapshot = this.#ports.tools.unshown(response.snapshot);
    const lines = response.toolLines.filter((line) => !snapshot.includes(line));
    const text = [...lines, snapshot].filter((part) => part !== "").join(" ");
    response.text = text;
    const delta = appendedText(response.sent, text); // undefined when rewritten: the `done` events carry the whole text
    if (delta !== undefined && delta !== "") this.#delta(response, delta);
  }

  #delta(response: OpenResponse, delta: string): void {
    response.sent += delta;
    const at = this.#at(response);
    const eventId = this.#ports.eventId();
    this.#ports.send(this.#ports.modality === "text" ? server.textDelta(eventId, at, delta) : server.transcriptDelta(eventId, at, delta));
  }

  #at(response: OpenResponse): { responseId: string; itemId: string } {
    return { responseId: response.id, itemId: response.item.id };
  }

  #item(response: OpenResponse, status: MessageItem["status"], text: string): MessageItem {
    const content = this.#ports.modality === "text" ? { type: "output_text" as const, text } : { type: "output_audio" as const, transcript: text };
    return { id: response.item.id, role: "assistant", status, content: status === "in_progress" ? [] : [content] };
  }

  /** The message's `done` events and item. */
  #messageDone(response: OpenResponse, status: Exclude<ResponseStatus, "in_progress">): MessageItem {
    const { modality, send, eventId } = this.#ports;
    // What the client was shown (the deltas add up to it), tool lines included; the recorded reply only if nothing was.
    const text = response.text === "" ? this.#ports.tools.unshown(response.committed ?? "") : response.text;
    const at = this.#at(response);
    // A reply the session only committed (no snapshot first): its text as one last delta, so the deltas add up to the done text.
    const last = appendedText(response.sent, text);
    if (last !== undefined && last !== "") this.#delta(response, last);
    if (modality === "text") {
      send(server.textDone(eventId(), at, text));
    } else {
      send(server.audioDone(eventId(), at));
      send(server.transcriptDone(eventId(), at, text));
    }
    send(server.contentPartDone(eventId(), at, modality, text));
    const item = this.#item(response, status === "completed" ? "completed" : "incomplete", text);
    send(server.outputItemDone(eventId(), response.id, item));
    this.#ports.items.done(item, response.previous);
    return item;
  }
}
