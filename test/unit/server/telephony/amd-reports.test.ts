// The carriers' answering-machine callbacks read in the gateway's terms (amd-reports.ts): each
// carrier's documented fields mapped onto AnsweredBy, the call each names, Vonage's other call
// events passed by, and anything else refused with the reason — never a throw.
import { describe, expect, it } from "vitest";
import { amdReport } from "../../../../src/server/telephony/amd-reports.js";

const url = new URL("https://gw.example.com/telephony/x/amd/ticket");
const form = (params: Record<string, string>): string => new URLSearchParams(params).toString();

describe("amdReport", () => {
  it("takes Twilio's and Telnyx's AnsweredBy as is, with the CallSid", () => {
    expect(amdReport("twilio", url, form({ CallSid: "CA1", AnsweredBy: "machine_end_beep" }))).toEqual({ kind: "verdict", answeredBy: "machine_end_beep", callId: "CA1" });
    expect(amdReport("telnyx", url, form({ CallSid: "v3:1", AnsweredBy: "human" }))).toEqual({ kind: "verdict", answeredBy: "human", callId: "v3:1" });
    expect(amdReport("twilio", url, form({ CallSid: "CA1", AnsweredBy: "robot" }))).toMatchObject({ kind: "invalid", why: expect.stringMatching(/^AnsweredBy is missing/) });
  });

  it("maps Plivo's Machine onto a machine whose greeting plays, or a person, with the CallUUID", () => {
    expect(amdReport("plivo", url, form({ CallUUID: "u-1", Machine: "true", Event: "MachineDetection" }))).toEqual({ kind: "verdict", answeredBy: "machine_start", callId: "u-1" });
    expect(amdReport("plivo", url, form({ CallUUID: "u-1", Machine: "False" }))).toEqual({ kind: "verdict", answeredBy: "human", callId: "u-1" });
    expect(amdReport("plivo", url, form({ CallUUID: "u-1" }))).toEqual({ kind: "invalid", why: "Machine is missing or not true or false" });
  });

  it("maps Vonage's human/machine event and its beep sub-states, naming the call by call_uuid, and passes its other events by", () => {
    const vonage = (event: unknown): ReturnType<typeof amdReport> => amdReport("vonage", url, JSON.stringify(event));
    expect(vonage({ call_uuid: "v-1", status: "human" })).toEqual({ kind: "verdict", answeredBy: "human", callId: "v-1" });
    expect(vonage({ call_uuid: "v-1", status: "machine" })).toEqual({ kind: "verdict", answeredBy: "machine_start", callId: "v-1" });
    expect(vonage({ call_uuid: "v-1", status: "machine", sub_state: "beep_start" })).toEqual({ kind: "verdict", answeredBy: "machine_end_beep", callId: "v-1" });
    expect(vonage({ uuid: "v-2", status: "machine", sub_state: "beep_timeout" })).toEqual({ kind: "verdict", answeredBy: "machine_end_other", callId: "v-2" });
    expect(vonage({ status: "human" })).toEqual({ kind: "verdict", answeredBy: "human", callId: undefined });
    for (const status of ["started", "ringing", "answered", "completed", undefined]) expect(vonage({ uuid: "v-1", status })).toEqual({ kind: "progress" });
    expect(vonage({ call_uuid: "v-1", status: "machine", sub_state: "toString" })).toEqual({ kind: "invalid", why: "sub_state is not beep_start or beep_timeout" });
    expect(vonage(["machine"])).toEqual({ kind: "invalid", why: "a Vonage event is a JSON object" });
    expect(amdReport("vonage", url, "status=machine")).toEqual({ kind: "invalid", why: "a Vonage event is a JSON object" });
  });

  it("knows no Exotel verdict", () => {
    expect(amdReport("exotel", url, form({ AnsweredBy: "human" }))).toMatchObject({ kind: "invalid" });
  });
});
