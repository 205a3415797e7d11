// Dialogs in a speech-to-speech session: the service's tool calls go through the same tool runner
// (docs/config.md, "Dialogs"), so a dialog tool is refused out of state, moves the dialog in state,
// and the position is in syncState and survives a resume.
import { describe, expect, it } from "vitest";
import { virtualClock } from "../../../src/clock.js";
import { agent, dialog, withTools, type ResolvedAgentDef } from "../../../src/manifest/index.js";
import { MemorySessionStore } from "../../../src/session/store.js";
import { s2sSession } from "../../../src/testing/s2s-session.js";

const booking = dialog({
  id: "booking",
  initial: "choose",
  states: {
    choose: { instruction: "Ask which day suits and call pick_day.", on: { PICKED: "confirm" } },
    confirm: { instruction: "Read the day back and call confirm_booking once the caller agrees.", on: { CONFIRMED: "booked" } },
    booked: { instruction: "The table is booked: say goodbye.", type: "final" },
  },
});

const pickDay = booking.tool({ description: "Pick a day", allowedIn: ["choose"], sends: "PICKED", execute: () => "Friday it is." });
const confirmBooking = booking.tool({ description: "Confirm the booking", allowedIn: ["confirm"], sends: "CONFIRMED", execute: () => "Booked." });

const def = withTools(
  agent({
    name: "tables",
    greeting: "",
    s2s: { kind: "openai-realtime", options: {} },
    dialogs: { booking },
    syncState: (_session, { dialogs }) => ({ booking: dialogs.booking?.state ?? null }),
  }),
  { pick_day: pickDay, confirm_booking: confirmBooking },
) as ResolvedAgentDef;

describe("a dialog in an s2s session", () => {
  it("refuses out of state, moves in state, shows the position through syncState and keeps it across a resume", async () => {
    const store = new MemorySessionStore(virtualClock(0));
    const first = await s2sSession(def, { store });
    first.fake.events.speechStarted();
    first.fake.events.speechStopped();
    first.fake.events.userTranscript("a table on Friday", { final: true });
    const step = first.fake.start();
    first.fake.events.toolCall({ callId: "call_1", name: "confirm_booking", args: {}, responseId: step });
    first.fake.events.toolCall({ callId: "call_2", name: "pick_day", args: {}, responseId: step });
    first.fake.done(step);
    await first.clock.advance(100);
    expect(first.fake.calls.filter((c) => c.kind === "results")).toEqual([
      {
        kind: "results",
        results: [
          { callId: "call_1", output: "confirm_booking cannot run now: the dialog booking is at choose. First: Ask which day suits and call pick_day." },
          { callId: "call_2", output: "Friday it is.\n[guidance] Dialog booking is now at confirm. Next: Read the day back and call confirm_booking once the caller agrees." },
        ],
        respond: true,
      },
    ]);
    expect(first.link.of("state.updated").at(-1)?.state).toEqual({ booking: "confirm" });
    await first.session.end();

    const second = await s2sSession(def, { store, resumeId: first.session.id });
    expect(second.link.of("state.updated").map((e) => e.state)).toEqual([{ booking: "confirm" }]);
    const again = second.fake.start();
    second.fake.events.toolCall({ callId: "call_3", name: "confirm_booking", args: {}, responseId: again });
    second.fake.done(again);
    await second.clock.advance(100);
    expect(second.link.of("tool.completed")).toMatchObject([{ toolCallId: "call_3", result: expect.stringContaining("Dialog booking is done (at booked)") as string }]);
    expect(second.link.of("state.updated").at(-1)?.state).toEqual({ booking: "booked" });
    await second.session.end();
  });
});
