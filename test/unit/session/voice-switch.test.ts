import { describe, expect, it } from "vitest";
import { silentLogger } from "../../../src/log.js";
import type { SttProvider } from "../../../src/pipeline/stt-port.js";
import type { TtsProvider } from "../../../src/pipeline/tts-port.js";
import type { Vad } from "../../../src/pipeline/vad.js";
import type { VoiceProviders } from "../../../src/session/voice-runner.js";
import { VoiceSwitch } from "../../../src/session/voice-switch.js";

/** A gateway's providers as a class (the soak's and benches' are): its methods live on the prototype and read `this`. */
class ClassProviders implements VoiceProviders {
  readonly asked: string[] = [];
  stt(): SttProvider {
    this.asked.push("stt");
    return { kind: "class-stt", open: () => Promise.reject(new Error("not opened here")) };
  }
  tts(): TtsProvider {
    this.asked.push("tts");
    return { kind: "class-tts", open: () => Promise.reject(new Error("not opened here")) };
  }
  vad(): Promise<Vad> {
    this.asked.push("vad");
    return Promise.reject(new Error("not opened here"));
  }
}

describe("VoiceSwitch.providers", () => {
  it("keeps a class instance's methods and their `this` (a spread would drop them)", async () => {
    const voice = new ClassProviders();
    const providers = new VoiceSwitch(voice, { playbackRate: 24_000, useAudio: () => {} }, silentLogger, undefined).providers;
    expect(providers.stt({ kind: "deepgram", options: {} }).kind).toBe("class-stt");
    expect(providers.tts({ kind: "cartesia", options: {} }).kind).toBe("class-tts");
    await expect(providers.vad?.(16_000)).rejects.toThrow("not opened here");
    expect(voice.asked).toEqual(["stt", "tts", "vad"]);
  });
});
