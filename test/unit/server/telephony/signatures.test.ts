import { createHash, generateKeyPairSync, sign } from "node:crypto";
import { describe, expect, it } from "vitest";
import { telnyxPublicKey, twilioSignature, validTelnyxSignature, validTwilioSignature } from "../../../../src/server/telephony/signatures.js";

// Twilio's published example (docs "Webhooks security"; the same vector in every twilio-* SDK's tests).
const TOKEN = "12345";
const URL_ = "https://mycompany.com/myapp.php?foo=1&bar=2";
const PARAMS: [string, string][] = [
  ["CallSid", "CA1234567890ABCDE"],
  ["Caller", "+14158675309"],
  ["Digits", "1234"],
  ["From", "+14158675309"],
  ["To", "+18005551212"],
];
const SIGNATURE = "RSOYDt4T1cUTdK1PDd93/VVr8B8=";

describe("X-Twilio-Signature", () => {
  it("reproduces Twilio's documented example, whatever order the parameters come in", () => {
    expect(twilioSignature(TOKEN, URL_, PARAMS)).toBe(SIGNATURE);
    expect(validTwilioSignature(TOKEN, SIGNATURE, URL_, [...PARAMS].reverse())).toBe(true);
  });

  it("signs every value of a repeated parameter, sorted (the SDKs' repeated-parameter vector)", () => {
    const repeated: [string, string][] = [
      ["Sid", "CA123"],
      ["SidAccount", "AC123"],
      ["Digits", "5678"],
      ["Digits", "1234"],
      ["Digits", "1234"],
    ];
    expect(validTwilioSignature(TOKEN, "IK+Dwps556ElfBT0I3Rgjkr1wJU=", URL_, repeated)).toBe(true);
  });

  it("refuses a tampered value, another URL, another token, an empty or missing header", () => {
    const tampered = PARAMS.map(([k, v]): [string, string] => [k, k === "Digits" ? "9999" : v]);
    expect(validTwilioSignature(TOKEN, SIGNATURE, URL_, tampered)).toBe(false);
    expect(validTwilioSignature(TOKEN, SIGNATURE, `${URL_}&x=1`, PARAMS)).toBe(false);
    expect(validTwilioSignature("54321", SIGNATURE, URL_, PARAMS)).toBe(false);
    expect(validTwilioSignature(TOKEN, "", URL_, PARAMS)).toBe(false);
    expect(validTwilioSignature(TOKEN, undefined, URL_, PARAMS)).toBe(false);
  });

  it("accepts the URL signed with or without the default port, as twilio-node does", () => {
    const withPort = "https://mycompany.com:443/myapp.php?foo=1&bar=2";
    expect(validTwilioSignature(TOKEN, twilioSignature(TOKEN, withPort, PARAMS), URL_, PARAMS)).toBe(true);
    expect(validTwilioSignature(TOKEN, SIGNATURE, withPort, PARAMS)).toBe(true);
  });

  it("validates a stream upgrade: the wss:// URL with no parameters", () => {
    const url = "wss://gw.example.com/telephony/twilio";
    expect(validTwilioSignature(TOKEN, twilioSignature(TOKEN, url, []), url, [])).toBe(true);
    expect(validTwilioSignature(TOKEN, twilioSignature(TOKEN, url, []), "wss://evil.example.com/telephony/twilio", [])).toBe(false);
  });

  it("checks a JSON body by its bodySHA256 and signs the URL alone", () => {
    const body = '{"property": "value", "boolean": true}';
    const hash = createHash("sha256").update(body).digest("hex");
    expect(hash).toBe("0a1ff7634d9ab3b95db5c9a2dfe9416e41502b283a80c7cf19632632f96e6620");
    const url = `${URL_}&bodySHA256=${hash}`;
    const signature = twilioSignature(TOKEN, url, []);
    expect(validTwilioSignature(TOKEN, signature, url, [], body)).toBe(true);
    expect(validTwilioSignature(TOKEN, signature, url, [], body.replace("value", "other"))).toBe(false);
  });
});

describe("telnyx-signature-ed25519", () => {
  const { publicKey, privateKey } = generateKeyPairSync("ed25519");
  const raw = publicKey.export({ format: "der", type: "spki" }).subarray(-32).toString("base64");
  const key = telnyxPublicKey(raw);
  const now = 1_760_000_000_000;
  const timestamp = String(now / 1000);
  const body = "CallSid=v3%3Aabc&From=%2B13125550100";
  const signature = sign(null, Buffer.from(`${timestamp}|${body}`), privateKey).toString("base64");

  it("verifies Ed25519 over `${timestamp}|${rawBody}` with the account's public key", () => {
    expect(validTelnyxSignature(key, signature, timestamp, body, now)).toBe(true);
  });

  it("refuses a changed body, a timestamp over 300 s off, a malformed signature or missing headers", () => {
    expect(validTelnyxSignature(key, signature, timestamp, `${body}&x=1`, now)).toBe(false);
    expect(validTelnyxSignature(key, signature, timestamp, body, now + 301_000)).toBe(false);
    expect(validTelnyxSignature(key, "AAAA", timestamp, body, now)).toBe(false);
    expect(validTelnyxSignature(key, undefined, timestamp, body, now)).toBe(false);
    expect(validTelnyxSignature(key, signature, undefined, body, now)).toBe(false);
    expect(validTelnyxSignature(key, signature, "12abc", body, now)).toBe(false);
  });

  it("names the setting when the public key is not 32 bytes of base64", () => {
    expect(() => telnyxPublicKey("c2hvcnQ=")).toThrow(/TELNYX_PUBLIC_KEY/);
  });
});
