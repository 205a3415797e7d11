// The Switchboard demo page: one session over WS /websocket (docs/protocol.md).
//
// Mic → AudioWorklet (mic-worklet.js: 16 kHz PCM16, 20 ms frames) → binary frames up.
// Binary frames down (PCM16, 24 kHz) → Player (player.js), which reports `playback_progress`
// every 100 ms while audio is queued and is flushed on `reply.cancelled` / `session.reset`.
// JSON events drive the captions, the transcript, tool cards, barge-in markers and metrics.
// `window.__switchboard` exposes counters for tests and for anyone curious in the console.

import { Player } from "./player.js";

const MIC_RATE = 16000;
const PROGRESS_EVERY_MS = 100;

const $ = (id) => {
  const el = document.getElementById(id);
  if (!el) throw new Error(`missing #${id}`);
  return el;
};

const ui = {
  agentName: $("agent-name"),
  agentSub: $("agent-sub"),
  modeBadge: $("mode-badge"),
  offlineBadge: $("offline-badge"),
  statusDot: $("status-dot"),
  statusText: $("status-text"),
  statusDetail: $("status-detail"),
  connect: $("connect"),
  mute: $("mute"),
  interrupt: $("interrupt"),
  meter: $("mic-meter"),
  meterFill: $("mic-meter-fill"),
  notices: $("notices"),
  timeline: $("transcript"),
  scroller: $("transcript-scroll"),
  empty: $("empty"),
  userCaption: $("user-caption"),
  userCaptionText: $("user-caption-text"),
  composer: $("composer"),
  input: $("text-input"),
  send: $("send"),
  composerHint: $("composer-hint"),
  mV2v: $("m-v2v"),
  mLlm: $("m-llm"),
  mTts: $("m-tts"),
  mEndpoint: $("m-endpoint"),
  turns: $("turns"),
  sessionLine: $("session-line"),
  statePanel: $("state-panel"),
  stateJson: $("state-json"),
};

/** Counters for tests and debugging. */
const stats = {
  connected: false,
  sessionId: undefined,
  mode: undefined,
  micActive: false,
  framesSent: 0,
  bytesSent: 0,
  audioFramesReceived: 0,
  audioMsReceived: 0,
  playbackProgressSent: 0,
  lastBufferedMs: 0,
  bargeIns: 0,
  events: /** @type {Record<string, number>} */ ({}),
  errors: /** @type {{code: string, message: string, fatal: boolean}[]} */ ([]),
};
window.__switchboard = stats;

/** @type {any} */
let config;
/** @type {WebSocket | undefined} */
let ws;
/** @type {AudioContext | undefined} */
let audioContext;
/** @type {Player | undefined} */
let player;
/** @type {{ stream: MediaStream, node: AudioWorkletNode, source: MediaStreamAudioSourceNode, sink: GainNode } | undefined} */
let mic;
/** @type {ReturnType<typeof setInterval> | undefined} */
let ticker;
let configured = false;
let muted = false;
let userSpeaking = false;
let awaitingReply = false;
let cancelRequested = false;
let micLevel = 0;
let fatalShown = false;
let sttLost = false;
/** Typed messages come back as user-transcript.committed: remembered to tag their bubbles. */
const typedQueue = [];

/** The reply being built: its element in the timeline, and whether it is still going. */
let reply = /** @type {{ el: HTMLElement, text: HTMLElement, tools: HTMLElement, hasText: boolean } | undefined} */ (undefined);
/** A reply is running (text, a tool call or audio came since the last one ended). */
let replyActive = false;
/** The reply element that ended last: metrics.turn attaches to it. */
let lastReplyEl = /** @type {HTMLElement | undefined} */ (undefined);
/** Tool cards by toolCallId. */
const toolCards = new Map();

// ---------------------------------------------------------------- helpers

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function fmtMs(value) {
  if (typeof value !== "number" || !Number.isFinite(value)) return "—";
  return value >= 10_000 ? `${(value / 1000).toFixed(1)} s` : `${Math.round(value)} ms`;
}

function modeLabel(mode) {
  return mode === "pipeline" ? "Voice · pipeline" : mode === "s2s" ? "Voice · speech-to-speech" : mode === "text" ? "Text only" : String(mode);
}

function nearBottom() {
  const s = ui.scroller;
  return s.scrollHeight - s.scrollTop - s.clientHeight < 80;
}

function scrollToEnd(force = false) {
  if (force || nearBottom()) ui.scroller.scrollTop = ui.scroller.scrollHeight;
}

/** Add a node to the end of the timeline (before the live caption). */
function append(node) {
  const stick = nearBottom();
  ui.timeline.insertBefore(node, ui.userCaption); // the live caption stays last
  ui.empty.hidden = true;
  if (stick) scrollToEnd(true);
  return node;
}

/** A notice under the call card. kind: info | warn | error. Same key replaces the earlier one. */
function notice(kind, title, message, key) {
  if (key) ui.notices.querySelector(`[data-key="${key}"]`)?.remove();
  const box = el("div", `notice ${kind}`);
  if (key) box.dataset.key = key;
  box.setAttribute("role", kind === "error" ? "alert" : "status");
  const body = el("div", "notice-body");
  body.append(el("strong", "", title));
  if (message) body.append(el("span", "", message));
  const close = el("button", "notice-close", "×");
  close.type = "button";
  close.title = "Dismiss";
  close.setAttribute("aria-label", "Dismiss");
  close.addEventListener("click", () => box.remove());
  box.append(body, close);
  ui.notices.append(box);
  return box;
}

function clearNotice(key) {
  ui.notices.querySelector(`[data-key="${key}"]`)?.remove();
}

// ---------------------------------------------------------------- transcript

function userBubble(text, typed = false) {
  const row = el("li", "turn user");
  const bubble = el("div", "bubble");
  bubble.append(el("p", "text", text));
  if (typed) bubble.append(el("span", "tag", "typed"));
  row.append(bubble);
  return append(row);
}

function ensureReply() {
  if (reply) return reply;
  const row = el("li", "turn agent pending");
  const bubble = el("div", "bubble");
  const tools = el("div", "tools");
  const text = el("p", "text");
  bubble.append(tools, text);
  row.append(bubble);
  append(row);
  reply = { el: row, text, tools, hasText: false };
  return reply;
}

function setReplyText(text) {
  const r = ensureReply();
  r.text.textContent = text;
  r.hasText = text.length > 0;
  scrollToEnd();
}

function endReply(outcome) {
  if (reply) {
    reply.el.classList.remove("pending");
    reply.el.classList.add(outcome);
    if (!reply.hasText && reply.tools.childElementCount === 0) reply.el.remove();
    else lastReplyEl = reply.el;
  }
  reply = undefined;
  replyActive = false;
}

function bargeInMarker(byUser) {
  const row = el("li", "marker barge-in");
  row.setAttribute("role", "status");
  const pill = el("span", "pill");
  pill.append(el("span", "marker-icon"), el("span", "", byUser ? "Reply stopped" : "Barge-in: you interrupted the agent"));
  row.append(pill);
  append(row);
}

function divider(text) {
  const row = el("li", "marker divider");
  row.append(el("span", "pill subtle", text));
  append(row);
}

function toolCard(event) {
  const r = ensureReply();
  const card = el("div", "tool-card running");
  card.dataset.toolCallId = event.toolCallId;
  const head = el("div", "tool-head");
  const name = el("span", "tool-name", event.toolName);
  const state = el("span", "tool-state", "running");
  head.append(el("span", "tool-icon"), name, state);
  const args = el("code", "tool-args", JSON.stringify(event.args ?? {}));
  const lines = el("ul", "tool-lines");
  const result = el("div", "tool-result");
  result.hidden = true;
  card.append(head, args, lines, result);
  r.tools.append(card);
  const entry = { card, state, lines, result };
  toolCards.set(event.toolCallId, entry);
  scrollToEnd();
  return entry;
}

function onToolMessage(event) {
  const entry = toolCards.get(event.toolCallId) ?? toolCard({ toolCallId: event.toolCallId, toolName: "tool", args: {} });
  const line = el("li", `tool-line ${event.kind}`);
  line.append(el("span", "speaker"), el("span", "", event.text));
  entry.lines.append(line);
  scrollToEnd();
}

function onToolCompleted(event) {
  const entry = toolCards.get(event.toolCallId) ?? toolCard({ toolCallId: event.toolCallId, toolName: "tool", args: {} });
  entry.card.classList.remove("running");
  entry.card.classList.add(event.isError ? "failed" : "done");
  entry.state.textContent = event.isError ? "failed" : "done";
  entry.result.hidden = false;
  // A tool's system-role completion line rides on the result as "\n[guidance] …" (docs/config.md):
  // words for the model, shown apart from the result itself.
  const [result, ...guidance] = String(event.result ?? "").split(/\n\[guidance\] /);
  const text = el("span", "result-text", result);
  for (const line of guidance) text.append(el("span", "result-guidance", line));
  entry.result.replaceChildren(el("span", "result-label", event.isError ? "Error" : "Result"), text);
  scrollToEnd();
}

function showCaption(text) {
  ui.userCaptionText.textContent = text;
  ui.userCaption.hidden = text.length === 0;
  if (text) {
    ui.empty.hidden = true;
    scrollToEnd();
  }
}

// ---------------------------------------------------------------- metrics

function onMetrics(event) {
  ui.mV2v.textContent = fmtMs(event.voiceToVoiceMs);
  ui.mLlm.textContent = fmtMs(event.llmFirstTokenMs);
  ui.mTts.textContent = fmtMs(event.ttsFirstAudioMs);
  ui.mEndpoint.textContent = fmtMs(event.endpointMs);

  const parts = [
    ["voice→voice", event.voiceToVoiceMs],
    ["LLM", event.llmFirstTokenMs],
    ["TTS", event.ttsFirstAudioMs],
    ["endpoint", event.endpointMs],
  ].filter(([, v]) => typeof v === "number");

  const row = el("li", "turn-row");
  row.append(el("span", "turn-id", event.turnId));
  for (const [label, value] of parts) {
    const chip = el("span", "chip");
    chip.append(el("span", "chip-label", label), el("span", "chip-value", fmtMs(value)));
    row.append(chip);
  }
  ui.turns.prepend(row);
  while (ui.turns.childElementCount > 6) ui.turns.lastElementChild?.remove();

  if (lastReplyEl && !lastReplyEl.querySelector(".latency")) {
    const chips = el("div", "latency");
    for (const [label, value] of parts) chips.append(el("span", "", `${label} ${fmtMs(value)}`));
    lastReplyEl.querySelector(".bubble")?.append(chips);
  }
}

// ---------------------------------------------------------------- status

function setStatus(kind, text, detail) {
  ui.statusDot.className = `dot ${kind}`;
  ui.statusText.textContent = text;
  ui.statusDetail.textContent = detail;
}

function refreshStatus() {
  ui.interrupt.disabled = !(configured && (replyActive || (player?.playing ?? false)));
  if (!ws) return;
  if (ws.readyState === WebSocket.CONNECTING || !configured) return setStatus("connecting", "Connecting…", "Opening a session with the gateway.");
  const speaking = player?.playing ?? false;
  if (userSpeaking) return setStatus("user", "You're speaking", "The agent is listening.");
  if (speaking) return setStatus("agent", "Agent speaking", "Talk over it to interrupt.");
  if (awaitingReply || replyActive) return setStatus("thinking", "Thinking…", "The agent is working on a reply.");
  if (stats.mode === "text") return setStatus("live", "Connected", "Text session: type a message below.");
  if (sttLost) return setStatus("live", "Connected", "Speech recognition is unavailable: type a message below.");
  if (!mic) return setStatus("live", "Connected", "No microphone: type a message below.");
  if (muted) return setStatus("muted", "Muted", "Unmute to talk, or type below.");
  return setStatus("live", "Listening", "Go ahead and speak.");
}

function tick() {
  if (player && audioContext && ws && ws.readyState === WebSocket.OPEN && configured) {
    const buffered = player.bufferedMs();
    // Report only while audio is really queued on a running clock: a suspended context would
    // report ever-growing buffers and hold the reply's commit back.
    if (buffered > 0 && audioContext.state === "running") {
      send({ type: "playback_progress", bufferedMs: Math.round(buffered) });
      stats.playbackProgressSent += 1;
      stats.lastBufferedMs = Math.round(buffered);
    }
  }
  ui.meterFill.style.transform = `scaleX(${Math.min(1, muted ? 0 : micLevel * 4).toFixed(3)})`;
  micLevel *= 0.8;
  refreshStatus();
}

// ---------------------------------------------------------------- session

function send(command) {
  if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(command));
}

function sessionUrl() {
  const base = typeof config?.sessionUrl === "string" ? config.sessionUrl : `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/websocket`;
  const url = new URL(base);
  url.searchParams.set("codec", "pcm16");
  url.searchParams.set("sampleRate", String(MIC_RATE));
  const token = new URLSearchParams(location.search).get("token");
  if (token) url.searchParams.set("token", token);
  return url.toString();
}

async function startMic(context) {
  if (!navigator.mediaDevices?.getUserMedia) throw new Error("this browser cannot capture audio here (a secure context — https or localhost — is needed)");
  const stream = await navigator.mediaDevices.getUserMedia({ audio: { channelCount: 1, echoCancellation: true, noiseSuppression: true, autoGainControl: true } });
  await context.audioWorklet.addModule(new URL("./mic-worklet.js", import.meta.url));
  const source = context.createMediaStreamSource(stream);
  const node = new AudioWorkletNode(context, "mic-capture", {
    numberOfInputs: 1,
    numberOfOutputs: 1,
    channelCount: 1,
    channelCountMode: "explicit",
    processorOptions: { targetRate: MIC_RATE, frameMs: 20 },
  });
  node.port.onmessage = (message) => {
    const { pcm, level } = message.data;
    micLevel = Math.max(micLevel, level);
    // Muted: the track is disabled, so these frames are silence; they keep the STT stream fed.
    if (!ws || ws.readyState !== WebSocket.OPEN) return;
    ws.send(pcm);
    stats.framesSent += 1;
    stats.bytesSent += pcm.byteLength;
  };
  // The node is pulled by the graph only when it reaches the destination: through a silent gain.
  const sink = context.createGain();
  sink.gain.value = 0;
  source.connect(node);
  node.connect(sink);
  sink.connect(context.destination);
  return { stream, node, source, sink };
}

function stopMic() {
  if (!mic) return;
  mic.node.port.onmessage = null;
  mic.source.disconnect();
  mic.node.disconnect();
  mic.sink.disconnect();
  for (const track of mic.stream.getTracks()) track.stop();
  mic = undefined;
  stats.micActive = false;
}

async function connect() {
  ui.connect.disabled = true;
  configured = false;
  userSpeaking = false;
  awaitingReply = false;
  fatalShown = false;
  sttLost = false;
  typedQueue.length = 0;
  clearNotice("closed");
  clearNotice("fatal");
  clearNotice("stt");
  clearNotice("mic");
  const voice = config?.mode !== "text";
  setStatus("connecting", "Connecting…", voice ? "Starting audio and the microphone." : "Opening a text session.");
  try {
    if (voice) {
      audioContext = new AudioContext({ latencyHint: "interactive" });
      await audioContext.resume();
      player = new Player(audioContext, { sampleRate: config?.ttsSampleRate ?? 24000 });
      try {
        mic = await startMic(audioContext);
        stats.micActive = true;
      } catch (err) {
        notice("warn", "Microphone unavailable.", `${err instanceof Error ? err.message : String(err)}. You can still type below and hear the agent.`, "mic");
      }
    }
    openSocket();
  } catch (err) {
    notice("error", "Could not start.", err instanceof Error ? err.message : String(err), "start");
    teardown();
  } finally {
    ui.connect.disabled = false;
  }
}

function openSocket() {
  const socket = new WebSocket(sessionUrl());
  socket.binaryType = "arraybuffer";
  ws = socket;
  setConnectedUi(true);
  ticker = setInterval(tick, PROGRESS_EVERY_MS);

  socket.onopen = () => {
    stats.connected = true;
    if (mic) send({ type: "audio_ready" });
    refreshStatus();
  };
  socket.onmessage = (message) => {
    if (socket !== ws) return;
    if (typeof message.data !== "string") {
      onAudio(message.data);
      return;
    }
    let event;
    try {
      event = JSON.parse(message.data);
    } catch {
      return;
    }
    if (event && typeof event.type === "string") onEvent(event);
  };
  socket.onerror = () => {
    // the close event that follows says what happened
  };
  socket.onclose = (event) => {
    if (socket !== ws) return;
    const reason = event.reason ? `${event.reason} (${event.code})` : `code ${event.code}`;
    if (!fatalShown && (event.code !== 1000 || event.reason)) notice(event.code === 1000 ? "info" : "error", "Session ended.", reason, "closed");
    teardown();
  };
}

function hangUp() {
  const socket = ws;
  teardown();
  if (socket && socket.readyState <= WebSocket.OPEN) socket.close(1000, "hung up");
  setStatus("idle", "Call ended", "Press Connect to start a new session.");
}

function teardown() {
  if (ticker !== undefined) clearInterval(ticker);
  ticker = undefined;
  ws = undefined;
  stats.connected = false;
  configured = false;
  userSpeaking = false;
  awaitingReply = false;
  player?.flush();
  player = undefined;
  stopMic();
  void audioContext?.close().catch(() => undefined);
  audioContext = undefined;
  showCaption("");
  if (reply) endReply("ended");
  micLevel = 0;
  ui.meterFill.style.transform = "scaleX(0)";
  setConnectedUi(false);
  setStatus("idle", "Not connected", "Press Connect to start a session.");
}

function setConnectedUi(connected) {
  ui.connect.textContent = connected ? "Hang up" : "Connect";
  ui.connect.classList.toggle("danger", connected);
  ui.connect.classList.toggle("primary", !connected);
  ui.mute.disabled = !connected || !mic;
  ui.mute.hidden = config?.mode === "text";
  ui.meter.hidden = config?.mode === "text";
  ui.interrupt.disabled = true;
  ui.input.disabled = !connected;
  ui.send.disabled = !connected;
  ui.composerHint.textContent = connected ? "Enter to send" : "Connect to send messages";
}

function onAudio(data) {
  if (!player) return;
  const ms = player.enqueue(data);
  stats.audioFramesReceived += 1;
  stats.audioMsReceived += ms;
  replyActive = true;
  awaitingReply = false;
}

function onEvent(event) {
  stats.events[event.type] = (stats.events[event.type] ?? 0) + 1;
  switch (event.type) {
    case "session.configured": {
      configured = true;
      stats.sessionId = event.sessionId;
      stats.mode = event.mode;
      ui.modeBadge.textContent = modeLabel(event.mode);
      ui.modeBadge.dataset.mode = event.mode;
      ui.sessionLine.textContent = `Session ${event.sessionId} · ${event.audioFormat} ${event.sampleRate / 1000} kHz up, ${event.ttsSampleRate / 1000} kHz down`;
      if (event.mode === "text") {
        stopMic();
        notice("info", "Text-only session.", "This agent has no voice: type your messages below.", "mode");
      }
      break;
    }
    case "history.restored": {
      for (const m of event.messages ?? []) {
        if (m.role === "user") userBubble(m.text);
        else {
          setReplyText(m.text);
          endReply("completed");
        }
      }
      divider("Conversation restored");
      break;
    }
    case "speech.started":
      userSpeaking = true;
      break;
    case "speech.stopped":
      userSpeaking = false;
      break;
    case "user-transcript.updated":
      showCaption(event.text);
      break;
    case "user-transcript.committed": {
      showCaption("");
      const typed = typedQueue[0] === event.text;
      if (typed) typedQueue.shift();
      userBubble(event.text, typed);
      awaitingReply = true;
      break;
    }
    case "agent-transcript.updated":
      replyActive = true;
      awaitingReply = false;
      setReplyText(event.text);
      break;
    case "agent-transcript.committed":
      setReplyText(event.text);
      break;
    case "tool.called":
      replyActive = true;
      awaitingReply = false;
      toolCard(event);
      break;
    case "tool.message":
      onToolMessage(event);
      break;
    case "tool.completed":
      onToolCompleted(event);
      break;
    case "reply.completed":
      endReply("completed");
      break;
    case "reply.cancelled": {
      const midReply = replyActive || reply !== undefined || (player?.playing ?? false);
      player?.flush();
      if (midReply) {
        stats.bargeIns += 1;
        if (reply) reply.el.classList.add("interrupted");
        endReply("interrupted");
        bargeInMarker(cancelRequested);
      }
      cancelRequested = false;
      awaitingReply = false;
      break;
    }
    case "session.reset":
      player?.flush();
      endReply("interrupted");
      showCaption("");
      divider("Conversation reset");
      break;
    case "session.timed-out":
      notice("info", "Session timed out.", "Nothing happened for a while, so the gateway ended the session.", "closed");
      break;
    case "metrics.turn":
      onMetrics(event);
      break;
    case "state.updated":
      ui.statePanel.hidden = false;
      ui.stateJson.textContent = JSON.stringify(event.state, null, 2);
      break;
    case "usage.updated":
      ui.sessionLine.dataset.usage = `${event.totalTokens} tokens`;
      break;
    case "user-turn.exceeded":
      notice("info", "Turn cut short.", `You spoke for a while (${event.words} words), so the agent took its turn.`, "turn-limit");
      break;
    case "error.reported":
      onError(event);
      break;
    default:
      break;
  }
  refreshStatus();
}

function onError(event) {
  stats.errors.push({ code: event.code, message: event.message, fatal: event.fatal });
  if (event.fatal) fatalShown = true;
  // Speech recognition failed (at start, or lost mid-session): say so; typing still works while
  // the session lives.
  if (event.code === "stt" || (event.code === "connection" && /speech|recogni|stt/i.test(event.message))) {
    sttLost = true;
    notice(
      event.fatal ? "error" : "warn",
      "Speech recognition is unavailable.",
      `${event.message}. ${event.fatal ? "The session has ended: connect again to retry." : "You can keep typing below."}`.replace(/\.\. /, ". "),
      "stt",
    );
    if (!event.fatal) ui.input.focus();
    return;
  }
  if (event.code === "audio" && !event.fatal) {
    notice("info", "Audio is not used in this session.", event.message, "audio");
    return;
  }
  const titles = {
    llm: "The model had a problem.",
    tts: "Speech synthesis failed.",
    auth: "Not allowed to connect.",
    protocol: "The gateway could not use a message.",
    internal: "The session could not start.",
    connection: "A provider connection was lost.",
  };
  notice(event.fatal ? "error" : "warn", titles[event.code] ?? `Error (${event.code}).`, event.message, event.fatal ? "fatal" : undefined);
}

// ---------------------------------------------------------------- wiring

ui.connect.addEventListener("click", () => {
  if (ws) hangUp();
  else void connect();
});

ui.mute.addEventListener("click", () => {
  muted = !muted;
  for (const track of mic?.stream.getAudioTracks() ?? []) track.enabled = !muted;
  ui.mute.textContent = muted ? "Unmute" : "Mute";
  ui.mute.setAttribute("aria-pressed", String(muted));
  refreshStatus();
});

ui.interrupt.addEventListener("click", () => {
  cancelRequested = true;
  send({ type: "cancel" });
});

ui.composer.addEventListener("submit", (event) => {
  event.preventDefault();
  const text = ui.input.value.trim();
  if (!text || !ws || ws.readyState !== WebSocket.OPEN) return;
  send({ type: "user_text", text });
  typedQueue.push(text);
  ui.input.value = "";
});

async function loadConfig() {
  try {
    const res = await fetch("/client-config", { cache: "no-store" });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    config = await res.json();
  } catch (err) {
    ui.agentSub.textContent = "Could not reach the gateway.";
    notice("error", "Could not load /client-config.", err instanceof Error ? err.message : String(err), "config");
    return;
  }
  ui.agentName.textContent = config.name;
  document.title = `${config.name} · Switchboard`;
  ui.agentSub.textContent = config.greeting ? `“${config.greeting}”` : "Starts silent: speak or type first.";
  ui.modeBadge.textContent = modeLabel(config.mode);
  ui.modeBadge.dataset.mode = config.mode;
  ui.offlineBadge.hidden = false;
  ui.offlineBadge.textContent = config.offline ? "Offline stack" : "Live providers";
  ui.offlineBadge.classList.toggle("warn", config.offline === true);
  ui.offlineBadge.title = config.offline
    ? "Running on the offline stack (local speech, the scripted model), forced or because a provider key is missing."
    : "Using the agent's configured speech and model providers.";
  if (config.offline) {
    if (config.mode !== "text") {
      notice("warn", "Offline stack.", "This agent runs on local speech recognition and a scripted model. If speech recognition is unavailable, the page says so and you can type instead.", "offline");
    }
  }
  if (config.mode === "text") notice("info", "Text-only agent.", "Connect, then type your messages below.", "mode");
  if (config.auth && !new URLSearchParams(location.search).get("token")) {
    notice("warn", "This gateway needs a session token.", "Mint one with POST /v1/sessions on your server and open this page with ?token=…", "auth");
  }
  setConnectedUi(false);
  ui.connect.disabled = false;
}

setConnectedUi(false);
ui.connect.disabled = true;
void loadConfig();
