import { createHash, createHmac, generateKeyPairSync, sign } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  plivoSignatureV3,
  telnyxPublicKey,
  twilioSignature,
  validPlivoSignature,
  validTelnyxSignature,
  validTwilioSignature,
  validVonageSignature,
} from "../../../../src/server/telephony/signatures.js";

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

describe("X-Plivo-Signature-V3", () => {
  const token = "MAXXXXXXXXXXXXXXXXXX";
  const nonce = "05429567804466091622";
  const hmac = (data: string): string => createHmac("sha256", token).update(data).digest("base64");
  const params: [string, string][] = [
    ["From", "14155550100"],
    ["CallUUID", "97ceeb52-58b6-11e1-86da-77300b68f8bb"],
    ["To", "14155550199"],
  ];

  it("signs a POST as the SDKs build it: URL, '?', then name+value sorted by name, '.', the nonce", () => {
    const url = "https://gw.example.com/telephony/plivo/voice";
    const expected = hmac(`${url}?CallUUID97ceeb52-58b6-11e1-86da-77300b68f8bbFrom14155550100To14155550199.${nonce}`);
    expect(plivoSignatureV3(token, "POST", url, params, nonce)).toBe(expected);
    expect(validPlivoSignature(token, expected, nonce, "POST", url, [...params].reverse())).toBe(true);
  });

  it("signs a URL query sorted as name=value joined by '&', followed by '.' and the POST parameters", () => {
    const url = "https://gw.example.com/telephony/plivo/voice?b=2&a=1";
    expect(plivoSignatureV3(token, "POST", url, params, nonce)).toBe(
      hmac(`https://gw.example.com/telephony/plivo/voice?a=1&b=2.CallUUID97ceeb52-58b6-11e1-86da-77300b68f8bbFrom14155550100To14155550199.${nonce}`),
    );
    expect(plivoSignatureV3(token, "GET", url, [], nonce)).toBe(hmac(`https://gw.example.com/telephony/plivo/voice?a=1&b=2.${nonce}`));
    expect(plivoSignatureV3(token, "GET", "https://gw.example.com:8443/voice", [], nonce)).toBe(hmac(`https://gw.example.com:8443/voice.${nonce}`));
  });

  it("accepts any signature of a comma-separated list (an Auth Token being rotated); refuses tampering and missing headers", () => {
    const url = "https://gw.example.com/telephony/plivo/voice";
    const good = plivoSignatureV3(token, "POST", url, params, nonce);
    expect(validPlivoSignature(token, `${hmac("old token")}, ${good}`, nonce, "POST", url, params)).toBe(true);
    expect(validPlivoSignature(token, good, "another-nonce", "POST", url, params)).toBe(false);
    expect(validPlivoSignature(token, good, nonce, "POST", url, [...params, ["Digits", "1"]])).toBe(false);
    expect(validPlivoSignature(token, good, nonce, "POST", "https://evil.example.com/telephony/plivo/voice", params)).toBe(false);
    expect(validPlivoSignature(token, undefined, nonce, "POST", url, params)).toBe(false);
    expect(validPlivoSignature(token, good, undefined, "POST", url, params)).toBe(false);
  });
});

describe("Vonage signed webhooks (HS256 JWT)", () => {
  const secret = "vonage-signature-secret";
  const now = 1_760_000_000_000;
  const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString("base64url");
  const jwt = (claims: Record<string, unknown>, key = secret, alg = "HS256"): string => {
    const head = `${b64({ alg, typ: "JWT" })}.${b64(claims)}`;
    return `Bearer ${head}.${createHmac("sha256", key).update(head).digest("base64url")}`;
  };
  const body = JSON.stringify({ from: "14155550100", to: "14155550199", uuid: "abc" });
  const hash = createHash("sha256").update(body).digest("hex");

  it("accepts a token signed with the secret, recent, whose payload_hash matches the body (or with no body)", () => {
    expect(validVonageSignature(secret, jwt({ iat: now / 1000, payload_hash: hash, iss: "Vonage" }), body, now)).toBe(true);
    expect(validVonageSignature(secret, jwt({ iat: now / 1000 - 120 }), "", now)).toBe(true);
  });

  it("refuses another secret, another algorithm, a stale iat, a body that does not match or is unhashed, and no token", () => {
    expect(validVonageSignature(secret, jwt({ iat: now / 1000, payload_hash: hash }, "other"), body, now)).toBe(false);
    expect(validVonageSignature(secret, jwt({ iat: now / 1000, payload_hash: hash }, secret, "none"), body, now)).toBe(false);
    expect(validVonageSignature(secret, jwt({ iat: now / 1000 - 301, payload_hash: hash }), body, now)).toBe(false);
    expect(validVonageSignature(secret, jwt({ iat: now / 1000, payload_hash: hash }), body.replace("abc", "xyz"), now)).toBe(false);
    expect(validVonageSignature(secret, jwt({ iat: now / 1000 }), body, now)).toBe(false);
    expect(validVonageSignature(secret, undefined, "", now)).toBe(false);
    expect(validVonageSignature(secret, "Bearer not-a-jwt", "", now)).toBe(false);
  });
});
