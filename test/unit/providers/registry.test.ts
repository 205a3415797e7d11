import { describe, expect, it } from "vitest";
import { GatewayError } from "../../../src/errors.js";
import { resolveStt } from "../../../src/pipeline/providers/stt/index.js";
import { resolveTts } from "../../../src/pipeline/providers/tts/index.js";
import { adapterFor } from "../../../src/providers/registry.js";
import { resolveS2s } from "../../../src/s2s/providers/index.js";

describe("adapterFor", () => {
  const table = { first: (d: { kind: string }, n: number) => `${d.kind} ${n}`, second: () => "second" };

  it("makes the adapter of the descriptor's kind, passing the arguments on", () => {
    expect(adapterFor("stt", "STT", table, { kind: "first" }, 7)).toBe("first 7");
  });

  it("refuses a kind the table lacks (an inherited name too) with a fatal error on the port, listing the kinds in order", () => {
    for (const kind of ["third", "toString", "constructor"]) {
      const refusal = (() => {
        try {
          return adapterFor("tts", "TTS", table, { kind }, 1);
        } catch (error) {
          return error;
        }
      })();
      expect(refusal).toBeInstanceOf(GatewayError);
      expect(refusal).toMatchObject({ code: "tts", fatal: true, message: `no TTS provider of kind "${kind}" is available in this gateway (first, second).` });
    }
  });
});

describe("the registries", () => {
  it("name the kinds each port has", () => {
    expect(() => resolveStt({ kind: "whisper", options: {} }, {})).toThrow('no STT provider of kind "whisper" is available in this gateway (deepgram, assemblyai, local).');
    expect(() => resolveTts({ kind: "polly", options: {} }, {})).toThrow('no TTS provider of kind "polly" is available in this gateway (cartesia, elevenlabs, openai, local).');
    expect(() => resolveS2s({ kind: "nova-sonic", options: {} }, {})).toThrow('no speech-to-speech provider of kind "nova-sonic" is available in this gateway (openai-realtime, gemini-live).');
  });
});
