import { Writable } from "node:stream";
import { GetObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { virtualClock } from "../../src/clock.js";
import { readWav } from "../../src/audio/wav.js";
import { createLogger } from "../../src/log.js";
import { agent, resolveConfig, toAgentConfig, withTools, type RecordingConfig, type RecordOutcome } from "../../src/manifest/index.js";
import { CallRecorder } from "../../src/session/recording/call-recorder.js";
import { MemoryLink } from "../../src/testing/memory-link.js";
import { voiceSession } from "../../src/testing/voice-session.js";
import { S3RVER_ACCESS_KEY, S3RVER_SECRET, startS3, type S3Server } from "../helpers/s3-server.js";

const BUCKET = "call-records";
let s3: S3Server;
const savedEnv = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };

beforeAll(async () => {
  s3 = await startS3([BUCKET]);
  // Credentials come from the environment, as in production (the SDK's default chain).
  process.env.AWS_ACCESS_KEY_ID = S3RVER_ACCESS_KEY;
  process.env.AWS_SECRET_ACCESS_KEY = S3RVER_SECRET;
});

afterAll(async () => {
  await s3.stop();
  for (const [name, value] of [["AWS_ACCESS_KEY_ID", savedEnv.id], ["AWS_SECRET_ACCESS_KEY", savedEnv.secret]] as const) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

function client(): S3Client {
  return new S3Client({ region: "us-east-1", endpoint: s3.endpoint, forcePathStyle: true });
}

async function fetchObject(key: string): Promise<Uint8Array> {
  const got = await client().send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
  return (await got.Body?.transformToByteArray()) ?? new Uint8Array(0);
}

describe("recording to an S3-compatible bucket", () => {
  it("a pipeline session's record and WAV are PUT under <prefix><sessionId>/<start>/, and onSessionEnd gets the s3:// location", async () => {
    const outcomes: RecordOutcome[] = [];
    const def = withTools(
      agent({
        name: "voice",
        greeting: "Hi there.",
        recording: { destination: { s3: { bucket: BUCKET, prefix: "calls/", endpoint: s3.endpoint, forcePathStyle: true, region: "us-east-1" } } },
        onSessionEnd: ({ record }) => void (record && outcomes.push(record)),
      }),
      {},
    );
    const { clock, started, session, link } = voiceSession(def, { ttsLevel: 2500 });
    await started;
    await clock.advance(1500);
    link.sendAudio(new Uint8Array(6400).fill(7));
    await clock.advance(500);
    // The upload runs on the real network while the virtual clock stands still (its deadline and retries are on it).
    await session.end();

    const outcome = outcomes[0];
    if (outcome?.status !== "written") throw new Error(`not written: ${JSON.stringify(outcome)}`);
    expect(outcome.location).toMatch(new RegExp(`^s3://${BUCKET}/calls/${session.id}/\\d{8}T\\d{9}Z/$`));
    const prefix = outcome.location.slice(`s3://${BUCKET}/`.length);
    const record = JSON.parse(Buffer.from(await fetchObject(`${prefix}record.json`)).toString("utf8"));
    expect(record).toMatchObject({ sessionId: session.id, audio: { file: "audio.wav", sampleRate: 16_000 } });
    expect(record.transcript[0]).toMatchObject({ speaker: "agent", text: "Hi there." });
    const wav = readWav(await fetchObject(`${prefix}audio.wav`));
    expect(wav.channels).toBe(2);
    expect(wav.samples.length / 2).toBe(Math.round((record.audio.durationMs / 1000) * 16_000));
    // The greeting on the agent's channel.
    expect(Math.abs(wav.samples[2 * 1600 + 1] ?? 0)).toBeGreaterThan(1000);
  });

  it("a bucket that does not exist: the outcome says why, the logs say so without the credentials, nothing throws", async () => {
    const lines: string[] = [];
    const log = createLogger({ level: "debug", destination: new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(chunk.toString()), done()) }) });
    const recording: RecordingConfig = { destination: { s3: { bucket: "no-such-bucket", endpoint: s3.endpoint, forcePathStyle: true, region: "us-east-1" } } };
    const config = toAgentConfig({ name: "voice", recording });
    const clock = virtualClock();
    const recorder = CallRecorder.for(resolveConfig(config).recording, { clock, log, sessionId: "s1", agentName: "voice", mode: "pipeline", transport: "twilio", history: () => [] });
    const link = recorder?.tap(new MemoryLink(clock));
    link?.emit({ type: "user-transcript.committed", text: "hello" });
    const outcome = await recorder?.finish();
    expect(outcome).toMatchObject({ status: "failed", error: expect.stringMatching(/S3 refused .*record\.json.*(NoSuchBucket|does not exist)/) });
    const logged = lines.join("");
    expect(logged).toContain("recording not delivered");
    expect(logged).not.toContain(S3RVER_SECRET);
  });

  it("an endpoint that does not answer: retried on the reconnect schedule under the clock, then failed", async () => {
    const clock = virtualClock();
    const config = toAgentConfig({ name: "voice", recording: { destination: { s3: { bucket: BUCKET, endpoint: "http://127.0.0.1:9", forcePathStyle: true, region: "us-east-1" } } } });
    const recorder = CallRecorder.for(resolveConfig(config).recording, { clock, log: createLogger({ level: "silent" }), sessionId: "s2", agentName: "voice", mode: "text", transport: "websocket", history: () => [] });
    let outcome: RecordOutcome | undefined;
    void recorder?.finish().then((done) => (outcome = done));
    for (let i = 0; i < 200 && outcome === undefined; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      await clock.advance(250);
    }
    expect(outcome).toMatchObject({ status: "failed", error: expect.stringMatching(/failed 4 times/) });
  });
});
