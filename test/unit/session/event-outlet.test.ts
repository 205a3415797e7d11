import { describe, expect, it } from "vitest";
import { virtualClock } from "../../../src/clock.js";
import { GatewayError } from "../../../src/errors.js";
import { silentLogger } from "../../../src/log.js";
import type { AgentEvents } from "../../../src/manifest/index.js";
import { EventOutlet } from "../../../src/session/event-outlet.js";
import { noMetrics, type SessionMetrics } from "../../../src/session/metrics-port.js";
import { stamp, type EventBody, type ServerEvent } from "../../../src/transport/protocol.js";

function outlet(observers?: AgentEvents, shows?: (type: string) => boolean) {
  const clock = virtualClock();
  const order: string[] = [];
  const errors: string[] = [];
  const metrics: SessionMetrics = {
    ...noMetrics,
    event: (_mode, _transport, event) => order.push(`metrics ${event.type}`),
    error: (code) => errors.push(code),
  };
  const link = {
    emit: (body: EventBody): ServerEvent => {
      order.push(`link ${body.type}`);
      return stamp(body, clock.now());
    },
    ...(shows === undefined ? {} : { shows }),
  };
  const events = new EventOutlet({ clock, log: silentLogger, sessionId: "s1", agentName: "a", mode: "text", transport: "websocket", metrics, link, observers });
  return { events, order, errors };
}

describe("EventOutlet", () => {
  it("wants a transcript snapshot when the link shows it or an observer takes it, and not once closed", () => {
    expect(outlet().events.wants("agent-transcript.updated")).toBe(true);
    expect(outlet(undefined, () => false).events.wants("agent-transcript.updated")).toBe(false);
    expect(outlet(undefined, (type) => type === "user-transcript.updated").events.wants("user-transcript.updated")).toBe(true);
    const observed = outlet({ "agent-transcript.updated": () => undefined }, () => false).events;
    expect(observed.wants("agent-transcript.updated")).toBe(true);
    expect(observed.wants("user-transcript.updated")).toBe(false);
    observed.close();
    expect(observed.wants("agent-transcript.updated")).toBe(false);
  });

  it("counts an event, then sends it, then hands it to the observers (off the session's path)", async () => {
    const seen: string[] = [];
    const { events, order } = outlet({ "session.reset": (event) => void seen.push(event.type) });
    events.emit({ type: "session.reset" });
    expect(order).toEqual(["metrics session.reset", "link session.reset"]);
    expect(seen).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toEqual(["session.reset"]);
  });

  it("counts reported and fatal errors and sends them with their fatality", () => {
    const { events, order, errors } = outlet();
    events.report("protocol", "unknown command");
    events.fatal(new GatewayError("llm", "the model failed", { fatal: true }));
    expect(errors).toEqual(["protocol", "llm"]);
    expect(order).toEqual(["metrics error.reported", "link error.reported", "metrics error.reported", "link error.reported"]);
  });

  it("lets nothing out once closed", () => {
    const { events, order, errors } = outlet();
    events.close();
    events.emit({ type: "session.reset" });
    events.report("protocol", "late");
    expect(order).toEqual([]);
    expect(errors).toEqual(["protocol"]);
  });
});
