// `switchboard console`'s parts that need no session: the streamed transcript and the latency
// line (--voice's devices: console-audio.test.ts; test/e2e/console.test.ts drives the command itself).
import { describe, expect, it } from "vitest";
import { TranscriptWriter } from "../../../src/cli/console-transcript.js";
import { describeLatency } from "../../../src/cli/events.js";

const meta = { id: "evt_0", at: 0 };

function writer(): { out: string[]; transcript: TranscriptWriter; text: () => string } {
  const out: string[] = [];
  return { out, transcript: new TranscriptWriter((text) => out.push(text)), text: () => out.join("") };
}

describe("the console's transcript", () => {
  it("streams a reply: each snapshot adds only what is new to one agent line", () => {
    const { out, transcript, text } = writer();
    for (const snapshot of ["The", "The caller", "The caller is verified.", "The caller is verified. Now ask me."]) transcript.snapshot(snapshot);
    transcript.endReply();
    expect(out).toEqual(["agent: The", " caller", " is verified.", " Now ask me.", "\n"]);
    expect(text()).toBe("agent: The caller is verified. Now ask me.\n");
  });

  it("a tool line is shown once, as a tool line: the snapshots that carry it do not repeat it", () => {
    const { transcript, text } = writer();
    transcript.line("tool:  lookup_order({})");
    transcript.toolLine("Let me check that order.");
    transcript.line('tool:  (start) "Let me check that order."');
    transcript.snapshot("Let me check that order.");
    transcript.toolLine("Still looking.");
    transcript.line('tool:  (delayed) "Still looking."');
    transcript.snapshot("Let me check that order. Still looking.");
    transcript.line("tool:  → shipped");
    transcript.snapshot("Let me check that order. Still looking. Order");
    transcript.snapshot("Let me check that order. Still looking. Order A1 shipped.");
    transcript.endReply();
    expect(text()).toBe(['tool:  lookup_order({})', 'tool:  (start) "Let me check that order."', 'tool:  (delayed) "Still looking."', "tool:  → shipped", "agent: Order A1 shipped.", ""].join("\n"));
  });

  it("a line in the middle of a reply closes it; the reply goes on on a new agent line", () => {
    const { transcript, text } = writer();
    transcript.snapshot("Let me see.");
    transcript.line("tool:  current_time({})");
    transcript.snapshot("Let me see. It is noon.");
    transcript.endReply();
    expect(text()).toBe("agent: Let me see.\ntool:  current_time({})\nagent: It is noon.\n");
  });

  it("a snapshot that does not continue the last one (the error phrase) is written whole on a new line; a new reply starts afresh", () => {
    const { transcript, text } = writer();
    transcript.snapshot("Hello there");
    transcript.snapshot("Sorry, something went wrong.");
    transcript.endReply();
    transcript.snapshot("Hello there");
    transcript.endReply();
    expect(text()).toBe("agent: Hello there\nagent: Sorry, something went wrong.\nagent: Hello there\n");
  });
});

describe("the latency line", () => {
  it("a typed turn: the wall time to the first text, then the turn's stages (its voice-to-voice is the time to first audio)", () => {
    const line = describeLatency({ type: "metrics.turn", turnId: "t", endpointMs: 0, llmFirstTokenMs: 27.4, ttsFirstAudioMs: 147, voiceToVoiceMs: 496, meta }, 102, false);
    expect(line).toBe("       latency: first text 102 ms · llm first token 27 ms · tts first audio 147 ms · first audio 496 ms");
  });

  it("a spoken turn: endpointing and voice-to-voice; a text agent's turn: the model's first token only", () => {
    expect(describeLatency({ type: "metrics.turn", turnId: "t", endpointMs: 510, llmFirstTokenMs: 20, ttsFirstAudioMs: 80, voiceToVoiceMs: 700, meta }, 560, true)).toBe(
      "       latency: first text 560 ms · endpoint 510 ms · llm first token 20 ms · tts first audio 80 ms · voice-to-voice 700 ms",
    );
    expect(describeLatency({ type: "metrics.turn", turnId: "t", llmFirstTokenMs: 3, meta }, 5, false)).toBe("       latency: first text 5 ms · llm first token 3 ms");
  });
});
