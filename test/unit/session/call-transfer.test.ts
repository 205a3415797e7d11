import { describe, expect, it, vi } from "vitest";
import { silentLogger } from "../../../src/log.js";
import { transferTarget, type TransferConfig, type TransferMode, type TransferTarget } from "../../../src/manifest/index.js";
import { CallTransfer, TRANSFER_FAILED_LINE } from "../../../src/session/call-transfer.js";
import type { EventBody } from "../../../src/events.js";

const config: TransferConfig = { destinations: [{ name: "sales", number: "+14155550123" }, { name: "desk", sip: "sip:desk@pbx.example.com", mode: "warm" }] };
const sales = transferTarget(config, config.destinations[0]!, undefined);
const desk = transferTarget(config, config.destinations[1]!, "Ann Lee, order 1234.");

function setup(link: { transferModes?: readonly TransferMode[]; transferRefusal?: (t: TransferTarget) => string | undefined; transfer?: (t: TransferTarget) => Promise<void> }) {
  const said: string[] = [];
  const closed: string[] = [];
  const events: EventBody[] = [];
  const transfer = new CallTransfer({ log: silentLogger, sessionId: "s1", live: () => closed.length === 0, link, emit: (e) => events.push(e), say: (t) => said.push(t), close: (r) => closed.push(r) });
  return { transfer, said, closed, events };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

describe("CallTransfer", () => {
  it("waits for the reply to settle, then hands the caller to the carrier and closes", async () => {
    const run = vi.fn(() => Promise.resolve());
    const { transfer, closed } = setup({ transferModes: ["cold"], transfer: run });
    expect(transfer.request(sales).isError).toBeUndefined();
    expect(run).not.toHaveBeenCalled();
    transfer.replySettled();
    await settle();
    expect(run).toHaveBeenCalledWith(sales, "s1");
    expect(closed).toEqual(["call transferred"]);
    expect(transfer.request(sales)).toEqual({ text: "A transfer is already under way.", isError: true });
  });

  it("a refused transfer leaves the call with the agent, who says so; it may be asked again", async () => {
    const { transfer, said, closed } = setup({ transferModes: ["cold"], transfer: () => Promise.reject(new Error("Twilio transfer answered 400")) });
    transfer.request(sales);
    transfer.replySettled();
    await settle();
    expect(said).toEqual([TRANSFER_FAILED_LINE]);
    expect(closed).toEqual([]);
    expect(transfer.request(sales).isError).toBeUndefined();
  });

  it("refuses what the line cannot do, and everything on a line that cannot transfer", () => {
    expect(setup({ transferModes: ["cold"], transfer: () => Promise.resolve() }).transfer.request(desk)).toMatchObject({ isError: true, text: expect.stringContaining("a warm transfer (a summary first) is not possible on this call") as string });
    expect(setup({ transferModes: [], transfer: () => Promise.resolve() }).transfer.request(sales)).toEqual({ text: "Transferring calls is not supported on this connection.", isError: true });
  });

  it("a target the line refuses although it offers its mode is refused with the line's reason, and nothing is asked of the carrier", async () => {
    const run = vi.fn(() => Promise.resolve());
    const { transfer, closed } = setup({ transferModes: ["cold", "warm"], transferRefusal: (t) => (t.address.kind === "sip" && t.mode === "warm" ? "No whisper to SIP here." : undefined), transfer: run });
    expect(transfer.request(desk)).toEqual({ text: "No whisper to SIP here. Tell the caller and offer another way to help.", isError: true });
    transfer.replySettled();
    await settle();
    expect(run).not.toHaveBeenCalled();
    expect(closed).toEqual([]);
    expect(transfer.request(sales).isError).toBeUndefined();
  });

  it("a client's session is sent transfer.requested (it can act on either kind), then closed", async () => {
    const { transfer, events, closed } = setup({});
    transfer.request(desk);
    transfer.replySettled();
    await settle();
    expect(events).toEqual([{ type: "transfer.requested", destination: "desk", sip: "sip:desk@pbx.example.com", mode: "warm", summary: "Ann Lee, order 1234." }]);
    expect(closed).toEqual(["call transferred"]);
  });

  it("nothing asked, nothing done", async () => {
    const run = vi.fn(() => Promise.resolve());
    const { transfer, closed } = setup({ transferModes: ["cold"], transfer: run });
    transfer.replySettled();
    await settle();
    expect(run).not.toHaveBeenCalled();
    expect(closed).toEqual([]);
  });
});
