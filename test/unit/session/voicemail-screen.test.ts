// Screening a call for an answering machine (src/session/voicemail-screen.ts), under virtual
// time: the verdicts of each source, the window, the wait for the beep, and what the session is
// asked to do (greet, hang up, leave the message).
import { describe, expect, it } from "vitest";
import { encodeMulaw } from "../../../src/audio/g711.js";
import { samplesToBytes } from "../../../src/audio/pcm.js";
import { virtualClock } from "../../../src/clock.js";
import type { EventBody } from "../../../src/events.js";
import { silentLogger } from "../../../src/log.js";
import { resolveVoicemail, type VoicemailConfig } from "../../../src/manifest/index.js";
import { carrierVerdict, type CarrierVerdict } from "../../../src/voicemail/answered-by.js";
import { GREETING_END_QUIET_MS, screens, VoicemailScreen, type CallScreening } from "../../../src/session/voicemail-screen.js";

const MULAW_8K = { encoding: "pcmu", sampleRate: 8000 } as const;
const PCM_16K = { encoding: "pcm16", sampleRate: 16000 } as const;

function tone(ms: number, hz: number, rate: number, amp = 0.3): Int16Array {
  return Int16Array.from({ length: (ms * rate) / 1000 }, (_, i) => Math.round(amp * Math.sin((2 * Math.PI * hz * i) / rate) * 32767));
}

function setup(voicemail: VoicemailConfig, call: CallScreening = { placed: true }, transcribes = true) {
  const clock = virtualClock();
  const did: string[] = [];
  const events: EventBody[] = [];
  const settings = resolveVoicemail(voicemail);
  if (settings === undefined) throw new Error("no settings");
  const screen = new VoicemailScreen(settings, call, {
    clock,
    log: silentLogger,
    transcribes,
    emit: (event) => events.push(event),
    human: () => did.push("greet"),
    hangUp: (reason) => did.push(`hang up: ${reason}`),
    leaveMessage: (text) => did.push(`say: ${text}`),
  });
  screen.begin();
  return { clock, did, events, screen };
}

/** A carrier whose verdicts the test sends. */
function carrier(): { call: CallScreening; send: (verdict: CarrierVerdict) => void; watching: () => boolean } {
  let listener: ((verdict: CarrierVerdict) => void) | undefined;
  return {
    call: {
      placed: true,
      carrierVerdicts: (l) => {
        listener = l;
        return () => (listener = undefined);
      },
    },
    send: (verdict) => listener?.(verdict),
    watching: () => listener !== undefined,
  };
}

const message = "Hi, this is Ann from the clinic. Please call us back.";

describe("screens", () => {
  it("screens placed calls, answered ones only with calls: all, and carrier-only detection only with the carrier's verdicts", () => {
    const placed = resolveVoicemail({ action: "hangup" });
    expect(screens(placed, { placed: true })).toBe(true);
    expect(screens(placed, { placed: false })).toBe(false);
    expect(screens(resolveVoicemail({ action: "hangup", calls: "all" }), { placed: false })).toBe(true);
    expect(screens(resolveVoicemail({ action: "hangup", detection: "carrier" }), { placed: true })).toBe(false);
    expect(screens(resolveVoicemail({ action: "hangup", detection: "carrier" }), carrier().call)).toBe(true);
    expect(screens(undefined, { placed: true })).toBe(false);
  });
});

describe("VoicemailScreen", () => {
  it("greets a person who said hello and waited, and lets the turns go", async () => {
    const { clock, did, screen, events } = setup({ action: "hangup" });
    expect(screen.holding).toBe(true);
    await clock.advance(1000);
    screen.speech();
    screen.final("Hello?", true);
    await clock.advance(700);
    expect(did).toEqual([]);
    await clock.advance(200);
    expect(did).toEqual(["greet"]);
    expect(screen.holding).toBe(false);
    expect(events).toEqual([]);
    // Decided: the window and the judge's ticks are cancelled.
    expect(clock.pending()).toBe(0);
  });

  it("greets once the window has passed with no verdict (a silent callee is taken for a person)", async () => {
    const { clock, did } = setup({ action: "hangup", windowMs: 4000 });
    await clock.advance(3999);
    expect(did).toEqual([]);
    await clock.advance(1);
    expect(did).toEqual(["greet"]);
  });

  it("hangs up on a recorded greeting's phrase, with voicemail.detected, through the call's end", async () => {
    const { clock, did, events, screen } = setup({ action: "hangup" });
    await clock.advance(500);
    screen.partial("Hi, you've reached");
    expect(did).toEqual(["hang up: answering machine"]);
    expect(events).toEqual([{ type: "voicemail.detected", source: "transcript", action: "hangup", reason: "phrase", phrase: "you've reached" }]);
    // Held to the end: a machine's speech never makes a turn.
    expect(screen.holding).toBe(true);
    await clock.advance(10_000);
    expect(did).toHaveLength(1);
  });

  it("takes a monologue for a machine", async () => {
    const { clock, did, screen } = setup({ action: "hangup" });
    screen.speech();
    screen.partial("So");
    await clock.advance(4000);
    expect(did).toEqual(["hang up: answering machine"]);
  });

  it("leaves the message after the beep that follows a machine's greeting (μ-law, as an OpenAI Realtime call hears it)", () => {
    const { did, events, screen } = setup({ action: "message", message });
    screen.partial("Please leave a message");
    expect(events[0]).toMatchObject({ type: "voicemail.detected", source: "transcript", action: "message" });
    expect(did).toEqual([]);
    screen.audio(encodeMulaw(tone(2000, 300, 8000, 0.2)), MULAW_8K);
    expect(did).toEqual([]);
    screen.audio(encodeMulaw(tone(300, 1000, 8000)), MULAW_8K);
    screen.audio(encodeMulaw(new Int16Array(160)), MULAW_8K);
    expect(did).toEqual([`say: ${message}`]);
  });

  it("with no beep, leaves the message once the greeting has ended in quiet", () => {
    const { did, screen } = setup({ action: "message", message });
    screen.partial("You have reached the voicemail of");
    screen.audio(samplesToBytes(tone(1500, 300, 16000, 0.2)), PCM_16K);
    screen.audio(samplesToBytes(new Int16Array(((GREETING_END_QUIET_MS - 100) * 16000) / 1000)), PCM_16K);
    expect(did).toEqual([]);
    screen.audio(samplesToBytes(new Int16Array(200 * 16)), PCM_16K);
    expect(did).toEqual([`say: ${message}`]);
  });

  it("with neither, leaves the message beepWaitMs after the verdict", async () => {
    const { clock, did, screen } = setup({ action: "message", message, beepWaitMs: 5000 });
    screen.partial("not available");
    await clock.advance(4999);
    expect(did).toEqual([]);
    await clock.advance(1);
    expect(did).toEqual([`say: ${message}`]);
  });

  it("takes a beep heard while screening as a machine whose greeting has ended", () => {
    const { did, events, screen } = setup({ action: "message", message }, { placed: true }, false);
    screen.audio(encodeMulaw(tone(400, 850, 8000)), MULAW_8K);
    screen.audio(encodeMulaw(new Int16Array(160)), MULAW_8K);
    expect(events).toEqual([{ type: "voicemail.detected", source: "beep", action: "message", frequencyHz: 850 }]);
    expect(did).toEqual([`say: ${message}`]);
  });

  it("acts on the carrier's verdicts: human greets, machine_start waits for the beep, machine_end_beep speaks at once, fax hangs up", () => {
    const human = carrier();
    const a = setup({ action: "message", message }, human.call);
    human.send(carrierVerdict("human"));
    expect(a.did).toEqual(["greet"]);
    expect(human.watching()).toBe(false);

    const machine = carrier();
    const b = setup({ action: "message", message }, machine.call);
    machine.send(carrierVerdict("machine_start"));
    expect(b.events).toEqual([{ type: "voicemail.detected", source: "carrier", action: "message", answeredBy: "machine_start" }]);
    expect(b.did).toEqual([]);
    // The carrier saying the greeting ended also starts the message.
    machine.send(carrierVerdict("machine_end_beep"));
    expect(b.did).toEqual([`say: ${message}`]);

    const beep = carrier();
    const c = setup({ action: "message", message }, beep.call);
    beep.send(carrierVerdict("machine_end_beep"));
    expect(c.did).toEqual([`say: ${message}`]);

    const fax = carrier();
    const d = setup({ action: "message", message }, fax.call);
    fax.send(carrierVerdict("fax"));
    expect(d.did).toEqual(["hang up: fax machine"]);
    expect(d.events[0]).toMatchObject({ action: "hangup", answeredBy: "fax" });
  });

  it("with carrier detection only, ignores the transcript, uses a beep only to time the message, and takes 'unknown' as no verdict", async () => {
    const line = carrier();
    const { clock, did, screen } = setup({ action: "message", message, detection: "carrier" }, line.call);
    screen.partial("leave a message after the tone");
    line.send(carrierVerdict("unknown"));
    screen.audio(encodeMulaw(tone(300, 1000, 8000)), MULAW_8K);
    screen.audio(encodeMulaw(new Int16Array(160)), MULAW_8K);
    expect(did).toEqual([]);
    // The machine verdict after the beep: the greeting is over, the message goes at once.
    line.send(carrierVerdict("machine_start"));
    expect(did).toEqual([`say: ${message}`]);
    await clock.advance(60_000);
    expect(did).toHaveLength(1);
  });

  it("with local detection only, does not listen to the carrier", () => {
    const line = carrier();
    setup({ action: "hangup", detection: "local" }, line.call);
    expect(line.watching()).toBe(false);
  });

  it("stops: no timer fires after the session ended, and the carrier is no longer watched", async () => {
    const line = carrier();
    const { clock, did, screen } = setup({ action: "hangup" }, line.call);
    screen.stop();
    expect(line.watching()).toBe(false);
    expect(clock.pending()).toBe(0);
    await clock.advance(60_000);
    expect(did).toEqual([]);
  });
});
