/**
 * The telephony SDK peer: the OpenAI Agents SDK's Twilio transport, run as its own process by
 * bench/telephony/run.ts. Per Twilio socket, as the SDK's Twilio guide does it: a
 * `TwilioRealtimeTransportLayer` on the socket and a `RealtimeSession` of one `RealtimeAgent` on
 * that transport, connected to the fake service (`url`, key "test-key"); plus μ-law both ways
 * set explicitly (see SESSION_CONFIG), and once Twilio's `start` came, one `response.create` for
 * the greeting (the gateway and the floor greet too). The transport forwards media, sends a mark
 * after every media frame, and on `speech_started` clears Twilio and truncates at the played
 * position.
 *
 * The SDK is a dev dependency used only here. It is loaded at run time so that a failure to
 * load becomes the reason the bench reports instead of a crash; its tracing is switched off
 * (loopback only).
 */
import type { TwilioRealtimeTransportLayer as TwilioTransport } from "@openai/agents-extensions";
import type { RealtimeAgent as Agent, RealtimeSession as Session } from "@openai/agents-realtime";
import { hostServer, type Bridge } from "./host.js";

interface Sdk {
  readonly TwilioRealtimeTransportLayer: typeof TwilioTransport;
  readonly RealtimeAgent: typeof Agent;
  readonly RealtimeSession: typeof Session;
}

process.env.OPENAI_AGENTS_DISABLE_TRACING ??= "1";

async function loadSdk(): Promise<Sdk> {
  const [extensions, realtime] = await Promise.all([import("@openai/agents-extensions"), import("@openai/agents-realtime")]);
  return { TwilioRealtimeTransportLayer: extensions.TwilioRealtimeTransportLayer, RealtimeAgent: realtime.RealtimeAgent, RealtimeSession: realtime.RealtimeSession };
}

/**
 * μ-law both ways and the gateway's turn detection. Set explicitly: in 0.18.0 the session's own
 * defaults (24 kHz PCM) win over the Twilio transport's μ-law defaults, so the guide's setup
 * asks the service for PCM while the transport hands the bytes to Twilio as μ-law.
 */
const SESSION_CONFIG = {
  audio: {
    input: { format: { type: "audio/pcmu" }, transcription: { model: "gpt-4o-mini-transcribe" }, turnDetection: { type: "server_vad", createResponse: true, interruptResponse: true } },
    output: { format: { type: "audio/pcmu" } },
  },
} as const;

function sdkBridge(sdk: Sdk): Bridge {
  const agent = new sdk.RealtimeAgent({ name: "bench-telephony", instructions: "You answer the bench line." });
  return (twilio, providerUrl, problem) => {
    const transport = new sdk.TwilioRealtimeTransportLayer({ twilioWebSocket: twilio });
    const session = new sdk.RealtimeSession(agent, { transport, model: "gpt-realtime", tracingDisabled: true, config: SESSION_CONFIG });
    session.on("error", (event) => problem(`session error: ${describe(event.error)}`));
    // The greeting waits for Twilio's `start` too: audio before it would go out with no streamSid.
    const started = new Promise<void>((resolve) => {
      const onStart = (data: Buffer): void => {
        if (!data.toString("utf8").includes('"event":"start"')) return;
        twilio.off("message", onStart);
        resolve();
      };
      twilio.on("message", onStart);
    });
    Promise.all([session.connect({ apiKey: "test-key", url: providerUrl }), started])
      .then(() => transport.requestResponse({ instructions: "Say exactly: Welcome to the bench line." }))
      .catch((error: unknown) => problem(`connect failed: ${describe(error)}`));
  };
}

/** An error, or a service `error` event, without its per-event ids (so repeats group). */
function describe(error: unknown): string {
  if (error instanceof Error) return error.message;
  const inner = (error as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
  if (inner !== undefined) return `${String(inner.code)}: ${String(inner.message)}`;
  return (JSON.stringify(error) ?? String(error)).slice(0, 200);
}

let sdk: Sdk | undefined;
let reason: string | undefined;
try {
  sdk = await loadSdk();
} catch (error) {
  reason = `the Agents SDK did not load on Node ${process.version}: ${error instanceof Error ? error.message : String(error)}`;
}
hostServer(sdk === undefined ? () => undefined : sdkBridge(sdk), reason);
