/**
 * The telephony bench's provider: the loopback fake OpenAI Realtime service (fakes/openai-realtime.ts,
 * audio in real time, no history kept), run as its own process by bench/telephony/run.ts and
 * bench/scale/run.ts and shared by the servers under test, so none of them pays for it in its CPU
 * figure. This file plays the caller on every connection, on the fake's own clock:
 *
 * After the first `session.update`: a greeting for any `response.create`, then turns. A turn is
 * `speech_started`, `userMs` of "speech", the VAD and transcription events, then a reply of
 * `replyMs` of μ-law (one 20 ms delta every 20 ms). Turns alternate: the next one starts either
 * `gapMs` after the reply ended (no barge-in) or `bargeAtMs` into the reply while it still plays
 * (a barge-in: the reply is cancelled, as `interrupt_response` asks).
 *
 * Measured here: each tagged `input_audio_buffer.append` on arrival (now − the caller's send
 * time in the tag), each delta's send time (written into the delta's own audio), and each
 * barge-in's `speech_started` send time, by caller (learnt from the callers' tags).
 */
import { startFakeOpenAiRealtime, type FakeOpenAiRealtime, type FakeRealtimeConnection } from "../../fakes/openai-realtime.js";
import { monoMs } from "../shared/stats.js";
import { CALLER_TAG, cpuMs, FRAME_MS, inWindow, MODEL_TAG, readFrameTag, SCRIPT, serveCalls, taggedFrame, type FakeTaken, type Window } from "./protocol.js";

/** The caller on one connection. */
interface Call {
  /** The caller's number, from the tags of its audio (0 until the first tagged append). */
  client: number;
  updated: boolean;
  turns: number;
  /** The response running is the greeting (its end starts the turns whatever its status). */
  greeting: boolean;
  /** The script's next step. */
  timer: NodeJS.Timeout | undefined;
}

/** What was measured since the last `collect`. */
const taken = {
  /** [caller send time, arrival − send time] per tagged append. */
  up: [] as number[],
  /** Send time of each tagged delta. */
  deltas: [] as number[],
  /** [speech_started send time, caller] per barge-in. */
  barges: [] as number[],
  /** Barge-ins on sockets whose caller was not known yet. */
  unattributed: 0,
};
const calls = new Map<number, Call>();

function callOf(connection: FakeRealtimeConnection): Call {
  let call = calls.get(connection.index);
  if (call === undefined) {
    call = { client: 0, updated: false, turns: 0, greeting: false, timer: undefined };
    calls.set(connection.index, call);
  }
  return call;
}

function schedule(connection: FakeRealtimeConnection, ms: number, step: () => void): void {
  const call = callOf(connection);
  clearTimeout(call.timer);
  call.timer = setTimeout(() => {
    if (connection.open) step();
    else calls.delete(connection.index);
  }, ms);
}

/** The caller starts speaking; a barge-in when a reply is still being sent (and so played). */
function userTurn(fake: FakeOpenAiRealtime, connection: FakeRealtimeConnection): void {
  const call = callOf(connection);
  call.turns += 1;
  if (connection.responding) {
    if (call.client === 0) taken.unattributed += 1;
    else taken.barges.push(monoMs(), call.client);
  }
  fake.speechStarted(connection);
  schedule(connection, SCRIPT.userMs, () => {
    // Odd turns run to the end; even turns are barged in on.
    if (call.turns % 2 === 0) schedule(connection, SCRIPT.bargeAtMs, () => userTurn(fake, connection));
    fake.speechStopped(`caller ${call.client} turn ${call.turns}`, connection).catch(() => undefined);
  });
}

const fake: FakeOpenAiRealtime = await startFakeOpenAiRealtime({
  realTime: true,
  chunkMs: FRAME_MS,
  record: false,
  // The Agents SDK peer sends a second session.update; the service takes it.
  oneSessionUpdate: false,
  driver: {
    onAppend(connection, audio) {
      const tag = readFrameTag(audio, CALLER_TAG);
      if (tag === undefined) return;
      taken.up.push(tag.at, monoMs() - tag.at);
      const call = callOf(connection);
      if (call.client === 0) call.client = tag.id;
    },
    onSessionUpdate(connection) {
      const audio = connection.session.audio as { input?: { format?: { type?: string } }; output?: { format?: { type?: string } } } | undefined;
      for (const [side, type] of [["input", audio?.input?.format?.type], ["output", audio?.output?.format?.type]] as const) {
        if (type !== undefined && type !== "audio/pcmu") fake.violations.push(`connection ${connection.index}: ${side} format ${type}, not audio/pcmu`);
      }
      const call = callOf(connection);
      if (call.updated) return;
      call.updated = true;
      // Turns start after the greeting, or on their own if none is asked for.
      schedule(connection, SCRIPT.noGreetingMs, () => userTurn(fake, connection));
    },
    reply(connection, request) {
      const call = callOf(connection);
      call.greeting = request !== undefined;
      if (call.greeting) clearTimeout(call.timer);
      return { say: "word ".repeat(Math.ceil((call.greeting ? SCRIPT.greetingMs : SCRIPT.replyMs) / 100)).trim(), audioMs: call.greeting ? SCRIPT.greetingMs : SCRIPT.replyMs };
    },
    onResponseDone(connection, response) {
      const call = callOf(connection);
      if (call.greeting || response.status === "completed") schedule(connection, SCRIPT.gapMs, () => userTurn(fake, connection));
    },
    audio(connection, ms) {
      // The tag's time is taken as late as possible: right before the event is serialized and sent.
      const at = monoMs();
      taken.deltas.push(at);
      return ms === FRAME_MS ? taggedFrame(MODEL_TAG, callOf(connection).client, at) : Buffer.alloc(ms * 8, 0xff);
    },
  },
});

serveCalls({
  url: () => fake.url,
  cpu: () => cpuMs(),
  open: () => fake.openSockets(),
  /** This window's figures (barge-ins: all since the last collect); everything taken so far is dropped. */
  collect: (window: Window): FakeTaken => {
    const result = {
      up: inWindow(taken.up, window),
      deltasSent: taken.deltas.filter((t) => t >= window.from && t <= window.to).length,
      // All of them: a clear in the window may answer a barge-in just before it.
      barges: taken.barges,
      unattributed: taken.unattributed,
      violations: fake.violations.splice(0),
    };
    Object.assign(taken, { up: [], deltas: [], barges: [], unattributed: 0 });
    return result;
  },
});
