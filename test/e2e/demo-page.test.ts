// The demo page (public/) end to end, in headless Chromium driven by playwright-core.
//
// A pipeline gateway runs in-process with fake vendors on loopback: Deepgram (auto mode: after
// 1.5 s of the caller's audio it sends "where is my order A1234" as a final), Cartesia, and an
// OpenAI-compatible LLM. Chromium's fake microphone plays fixtures/audio/order-status.wav, so
// the page's AudioWorklet really captures, downsamples and sends 16 kHz PCM16; the agent's
// 24 kHz audio really comes back and is scheduled for playback.
//
// Skipped when /usr/bin/chromium is not installed. Screenshots go to test/e2e/artifacts/ (not
// committed). The README's picture is the demo agent's page (demo-agent-page.test.ts).
import { mkdirSync, statSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Type } from "@sinclair/typebox";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../../src/log.js";
import { agent, tool, withTools } from "../../src/manifest/index.js";
import { createGateway } from "../../src/server/index.js";
import type { Gateway } from "../../src/server/gateway-types.js";
import { CHROMIUM_MISSING, launchChromium } from "../helpers/chromium.js";
import { startFakeCartesia, type FakeCartesia } from "../../fakes/cartesia.js";
import { FAKE_DEEPGRAM_KEY, startFakeDeepgram, type FakeDeepgram } from "../../fakes/deepgram.js";
import { startFakeOpenAiServer, type FakeOpenAiServer } from "../../fakes/openai-chat.js";

/** Why this file's tests cannot run here, or undefined: said once in the output, and in the suite's name. */
const SKIPPED = CHROMIUM_MISSING;
if (SKIPPED !== undefined) console.warn(`skipped: ${SKIPPED}`);
const VOICE_WAV = fileURLToPath(new URL("../../fixtures/audio/order-status.wav", import.meta.url));
const ARTIFACTS = fileURLToPath(new URL("./artifacts/", import.meta.url));

/** Generous: a loaded CI machine can be slow; nothing here asserts on speed. */
const WAIT_MS = 30_000;
const CALLER = "where is my order A1234";

/** What the page exposes as `window.__switchboard` (public/app.js). */
interface PageStats {
  connected: boolean;
  sessionId?: string;
  mode?: string;
  micActive: boolean;
  framesSent: number;
  bytesSent: number;
  audioFramesReceived: number;
  audioMsReceived: number;
  playbackProgressSent: number;
  lastBufferedMs: number;
  bargeIns: number;
  events: Record<string, number>;
  errors: { code: string; message: string; fatal: boolean }[];
}

const lookupOrder = tool({
  description: "Look up an order",
  parameters: Type.Object({ orderId: Type.String() }),
  messages: { start: "Let me check that order." },
  execute: ({ orderId }) => `Order ${orderId} shipped on Friday.`,
});

interface Harness {
  llm: FakeOpenAiServer;
  stt: FakeDeepgram;
  tts: FakeCartesia;
  gateway: Gateway;
  url: string;
}

/** A gateway on 127.0.0.1:0 with fake vendors; `text: true` makes the agent text-only (no STT/TTS). */
async function startHarness(options: { msPerChar?: number; text?: boolean } = {}): Promise<Harness> {
  const [llm, stt, tts] = await Promise.all([
    startFakeOpenAiServer(),
    startFakeDeepgram({ transcriptAfterMs: 1500, transcript: [CALLER] }),
    startFakeCartesia({ msPerChar: options.msPerChar ?? 10, chunkDelayMs: 5 }),
  ]);
  const llmConfig = { kind: "openai-compatible", options: { baseURL: llm.url, model: "fake-model" } } as const;
  const def = withTools(
    options.text === true
      ? agent({ name: "shop", mode: "text", greeting: "Welcome to the shop.", llm: llmConfig, maxRetries: 0 })
      : agent({
          name: "shop",
          greeting: "Welcome to the shop.",
          stt: { kind: "deepgram", options: { url: stt.url } },
          tts: { kind: "cartesia", options: { url: tts.url, voice: "test-voice" } },
          llm: llmConfig,
          maxRetries: 0,
          interruption: { minWords: 1, minDurationMs: 300 },
        }),
    { lookup_order: lookupOrder },
  );
  const gateway = createGateway({ agent: def, logger: silentLogger, env: { DEEPGRAM_API_KEY: FAKE_DEEPGRAM_KEY, CARTESIA_API_KEY: "test-key" }, processMetrics: false });
  const { port } = await gateway.listen(0, "127.0.0.1");
  return { llm, stt, tts, gateway, url: `http://127.0.0.1:${port}/` };
}

async function stopHarness(h: Harness | undefined): Promise<void> {
  if (h === undefined) return;
  await h.gateway.close().catch(() => undefined);
  await Promise.all([h.llm.close(), h.stt.close(), h.tts.close()]).catch(() => undefined);
}

function stats(page: Page): Promise<PageStats> {
  return page.evaluate(() => (globalThis as unknown as { __switchboard: PageStats }).__switchboard);
}

/** Poll the page's counters until `check` holds. */
async function waitForStats(page: Page, what: string, check: (s: PageStats) => boolean, timeoutMs = WAIT_MS): Promise<PageStats> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const s = await stats(page);
    if (check(s)) return s;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; page stats: ${JSON.stringify(s)}`);
    await page.waitForTimeout(100);
  }
}

/** Wait for `selector` (with `text`) to be visible; on a timeout, say what the page and the fakes saw. */
async function see(page: Page, h: Harness, selector: string, text?: string): Promise<void> {
  const locator = text === undefined ? page.locator(selector).first() : page.locator(selector, { hasText: text }).first();
  try {
    await locator.waitFor({ timeout: WAIT_MS });
  } catch (err) {
    const s = await stats(page).catch(() => undefined);
    const timeline = await page.locator("#transcript").innerText().catch(() => "?");
    throw new Error(
      `${selector}${text === undefined ? "" : ` with "${text}"`} never showed: ${String(err)}\n` +
        `page stats: ${JSON.stringify(s)}\nfake STT heard ${h.stt.audioBytes} bytes; LLM requests: ${h.llm.requests.length}\ntimeline:\n${timeline}`,
      { cause: err },
    );
  }
}

describe.skipIf(SKIPPED !== undefined)(`the demo page in Chromium${SKIPPED === undefined ? "" : ` — skipped: ${SKIPPED}`}`, () => {
  let browser: Browser;
  let context: BrowserContext | undefined;
  let harness: Harness | undefined;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    browser = await launchChromium(VOICE_WAV);
  }, WAIT_MS);

  afterAll(async () => {
    await browser?.close();
  });

  afterEach(async () => {
    await context?.close().catch(() => undefined);
    context = undefined;
    await stopHarness(harness);
    harness = undefined;
    pageErrors.length = 0;
  });

  /** A fresh browser context on the page: 1280×800 and light by default. */
  async function open(h: Harness, options: { viewport?: { width: number; height: number }; colorScheme?: "light" | "dark" } = {}): Promise<Page> {
    context = await browser.newContext({ viewport: options.viewport ?? { width: 1280, height: 800 }, colorScheme: options.colorScheme ?? "light" });
    await context.grantPermissions(["microphone"], { origin: h.url.replace(/\/$/, "") });
    const page = await context.newPage();
    page.on("pageerror", (err) => pageErrors.push(err.message));
    page.on("console", (message) => {
      if (message.type() === "error") pageErrors.push(message.text());
    });
    await page.goto(h.url);
    await page.locator("#connect:not([disabled])").waitFor({ timeout: WAIT_MS });
    return page;
  }

  it("serves the page and its assets with the right content types", async () => {
    harness = await startHarness();
    const get = (path: string): Promise<Response> => fetch(new URL(path, harness!.url));
    const index = await get("/");
    expect(index.status).toBe(200);
    expect(index.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(index.headers.get("cache-control")).toBe("no-cache");
    expect(await index.text()).toContain('<script type="module" src="app.js">');
    expect((await get("/app.js")).headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect((await get("/mic-worklet.js")).headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect((await get("/player.js")).headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect((await get("/style.css")).headers.get("content-type")).toBe("text/css; charset=utf-8");
    const etag = index.headers.get("etag") ?? "";
    expect((await fetch(new URL("/", harness.url), { headers: { "if-none-match": etag } })).status).toBe(304);
    // Traversal and unknown paths fall through to the gateway's JSON 404.
    for (const path of ["/../package.json", "/%2e%2e/package.json", "/..%2fpackage.json", "/nope.js", "/.gitignore"]) {
      const res = await get(path);
      expect(res.status, path).toBe(404);
      expect(res.headers.get("content-type"), path).toBe("application/json; charset=utf-8");
    }
    expect((await get("/client-config")).headers.get("content-type")).toBe("application/json; charset=utf-8");
  });

  it("talks: the caller's words, a tool card with its spoken line, the agent's reply, audio both ways", async () => {
    const h = (harness = await startHarness());
    h.llm.enqueue(
      { toolCalls: [{ name: "lookup_order", args: { orderId: "A1234" }, id: "call_1" }] },
      { text: "Your order A1234 shipped on Friday. It should reach you by Tuesday." },
    );
    const page = await open(h);
    await expect(page.locator("#agent-name").textContent()).resolves.toBe("shop");
    await expect(page.locator("#mode-badge").textContent()).resolves.toContain("pipeline");

    await page.click("#connect");
    await see(page, h, ".turn.agent", "Welcome to the shop.");
    await see(page, h, ".turn.user", CALLER);
    const card = page.locator(".tool-card", { hasText: "lookup_order" });
    await card.locator(".tool-line.start", { hasText: "Let me check that order." }).waitFor({ timeout: WAIT_MS });
    await card.locator(".tool-result", { hasText: "Order A1234 shipped on Friday." }).waitFor({ timeout: WAIT_MS });
    await see(page, h, ".turn.agent.completed", "It should reach you by Tuesday.");
    // metrics.turn closes the reply: its latency chips and the panel fill in.
    await page.locator(".turn.agent .latency").first().waitFor({ timeout: WAIT_MS });
    await expect(page.locator("#m-v2v").textContent()).resolves.toMatch(/\d+ (ms|s)$/);

    const s = await waitForStats(page, "playback_progress reports", (x) => x.playbackProgressSent > 0);
    expect(s.connected).toBe(true);
    expect(s.mode).toBe("pipeline");
    expect(s.micActive).toBe(true);
    expect(s.framesSent).toBeGreaterThan(0);
    expect(s.bytesSent).toBe(s.framesSent * 640); // 20 ms of 16 kHz PCM16 per frame
    expect(s.audioMsReceived).toBeGreaterThan(0);
    expect(s.playbackProgressSent).toBeGreaterThan(0);
    expect(s.errors).toEqual([]);
    expect(pageErrors).toEqual([]);
    // The gateway got what the page sent: the fake STT heard the mic, the model was asked.
    expect(h.stt.audioBytes).toBeGreaterThan(0);
    expect(h.llm.requests.length).toBeGreaterThanOrEqual(2);
    expect(JSON.stringify(h.llm.requests[0]?.messages)).toContain(CALLER);
    expect(h.llm.violations).toEqual([]);

    await page.locator("#connect").blur(); // no focus ring in the picture
    await page.mouse.move(0, 0);
    await page.screenshot({ path: `${ARTIFACTS}demo-page.png`, fullPage: true });
    expect(statSync(`${ARTIFACTS}demo-page.png`).size).toBeLessThan(300 * 1024);

    // Typed text works in the same session.
    h.llm.enqueue({ text: "You are welcome." });
    await page.fill("#text-input", "thanks");
    await page.press("#text-input", "Enter");
    await see(page, h, ".turn.user", "thanks");
    await see(page, h, ".turn.agent", "You are welcome.");

    await page.click("#connect"); // hang up
    await expect(page.locator("#connect").textContent()).resolves.toBe("Connect");
  }, 120_000);

  it("shows a barge-in marker when the caller talks over a long reply", async () => {
    const h = (harness = await startHarness({ msPerChar: 20 }));
    h.llm.enqueue({
      text:
        "Your order A1234 left our warehouse on Friday morning, it went through the regional sorting centre over the weekend, " +
        "and it is now on a delivery van in your area, so it should reach you by Tuesday afternoon at the latest, " +
        "and you will get a text message with a one hour delivery window on the morning it arrives.",
    });
    const page = await open(h, { viewport: { width: 390, height: 844 }, colorScheme: "dark" }); // a phone, in dark mode
    await page.click("#connect");
    await see(page, h, ".turn.user", CALLER);
    // The reply's audio is playing at the page: count from the caller's committed turn on.
    const before = await waitForStats(page, "the committed turn", (x) => (x.events["user-transcript.committed"] ?? 0) >= 1);
    await waitForStats(page, "the reply's audio", (x) => x.audioMsReceived > before.audioMsReceived + 600 && (x.events["agent-transcript.updated"] ?? 0) >= 2);

    // "The caller" talks over it: a partial, then a final.
    h.stt.speechStarted();
    h.stt.partial("wait");
    await page.waitForTimeout(150);
    h.stt.final("wait a second", { speechFinal: true });

    const marker = page.locator(".marker.barge-in");
    await marker.waitFor({ timeout: WAIT_MS });
    await expect(marker.textContent()).resolves.toContain("interrupted");
    await page.locator(".turn.agent.interrupted").waitFor({ timeout: WAIT_MS });
    const s = await stats(page);
    expect(s.events["reply.cancelled"]).toBeGreaterThanOrEqual(1);
    expect(s.bargeIns).toBeGreaterThanOrEqual(1);
    expect(s.errors).toEqual([]);
    expect(pageErrors).toEqual([]);
    // The interrupting words become the caller's next turn.
    await see(page, h, ".turn.user", "wait a second");
    await page.mouse.move(0, 0);
    await page.screenshot({ path: `${ARTIFACTS}demo-page-barge-in-phone-dark.png`, fullPage: true });
  }, 120_000);

  it("says when speech recognition is lost, and keeps the text box", async () => {
    const h = (harness = await startHarness());
    h.llm.enqueue(
      { toolCalls: [{ name: "lookup_order", args: { orderId: "A1234" }, id: "call_1" }] },
      { text: "Your order A1234 shipped on Friday." },
    );
    const page = await open(h);
    await page.click("#connect");
    await see(page, h, ".turn.agent.completed", "Welcome to the shop.");
    // The STT vendor goes away for good: the gateway's reconnects fail.
    await h.stt.close();
    await see(page, h, '.notice[data-key="stt"]', "Speech recognition is unavailable.");
    await expect(page.locator("#text-input").isVisible()).resolves.toBe(true);
    const [error, ...more] = (await stats(page)).errors;
    expect(more).toEqual([]);
    expect(error?.message).toMatch(/speech recognition/);
    if (error?.fatal === false) {
      // protocol.md: a non-fatal `stt` error, and the session goes on with typed turns.
      expect(error.code).toBe("stt");
      await expect(page.locator("#status-detail").textContent()).resolves.toContain("type a message");
      await page.fill("#text-input", CALLER);
      await page.press("#text-input", "Enter");
      await see(page, h, ".turn.user", CALLER);
      await see(page, h, ".tool-card .tool-line.start", "Let me check that order.");
      await see(page, h, ".turn.agent.completed", "Your order A1234 shipped on Friday.");
      expect((await stats(page)).connected).toBe(true);
    } else {
      // This build (voice-runner.ts) ends the session instead: a fatal `connection` error. The
      // page says so once (no second "session ended" notice) and offers Connect again.
      expect(error?.code).toBe("connection");
      await see(page, h, '.notice[data-key="stt"]', "connect again");
      await expect(page.locator("#connect").textContent()).resolves.toBe("Connect");
      await expect(page.locator(".notice.error").count()).resolves.toBe(1);
    }
    expect(pageErrors).toEqual([]);
    await page.locator("#connect").blur();
    await page.screenshot({ path: `${ARTIFACTS}demo-page-stt-lost.png`, fullPage: true });
  }, 120_000);

  it("a text-only agent: the page says so, asks for no microphone, and chats", async () => {
    const h = (harness = await startHarness({ text: true }));
    h.llm.enqueue({ text: "Hello! How can I help?" });
    const page = await open(h);
    await expect(page.locator("#mode-badge").textContent()).resolves.toBe("Text only");
    await see(page, h, '.notice[data-key="mode"]', "Text-only");
    await page.click("#connect");
    await see(page, h, ".turn.agent.completed", "Welcome to the shop.");
    await page.fill("#text-input", "hi there");
    await page.click("#send");
    await see(page, h, ".turn.user", "hi there");
    await see(page, h, ".turn.agent.completed", "Hello! How can I help?");
    const s = await stats(page);
    expect(s.mode).toBe("text");
    expect(s.micActive).toBe(false);
    expect(s.framesSent).toBe(0);
    expect(s.errors).toEqual([]);
    expect(pageErrors).toEqual([]);
    await page.locator("#send").blur();
    await page.screenshot({ path: `${ARTIFACTS}demo-page-text.png`, fullPage: true });
  }, 120_000);
});
