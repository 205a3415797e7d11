/**
 * The workflows HTTP API (docs/workflows.md "HTTP API"), everything under `/workflows`:
 * - `GET /workflows`: the agent's workflows (name, description, input JSON Schema, steps);
 * - `POST /workflows/<name>/runs`: start a run, body `{ input, key? }`;
 * - `GET /workflows/runs/<id>[?wait=<s>]`: a run, optionally long-polled until it ends;
 * - `GET /workflows/runs/<id>/events`: its journal as Server-Sent Events (workflow-stream.ts);
 * - `POST /workflows/events/<token>`: deliver an external event to the run waiting for it.
 *
 * Who may call: with auth on, each route takes the API key as `Authorization: Bearer` (as
 * `POST /v1/calls` does: a session token a browser holds does not start runs). With auth off,
 * only the listing answers — it says what `GET /client-config` would; every other route is
 * refused 403, since a stranger could otherwise start runs, read their outputs or resume them.
 * Every request takes one connection from its address's budget; starts are budgeted for the
 * whole deployment (`SWITCHBOARD_WORKFLOW_RUNS_PER_MINUTE`), so a key holder's bug cannot fill
 * the disk with runs.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Clock } from "../clock.js";
import type { LogThrottle, Logger } from "../log.js";
import type { JsonValue } from "../manifest/index.js";
import { WorkflowRequestError, type RequestErrorCode, type RunInfo, type WorkflowEngine } from "../workflows/engine.js";
import { bearer, keyMatches } from "./auth.js";
import type { ConnectionBudget } from "./connection-budget.js";
import type { Coordinator } from "./coordination.js";
import { json, tooMany } from "./json-reply.js";
import { readBody } from "./telephony/http.js";
import { StreamSlots, streamRunEvents } from "./workflow-stream.js";
import { spread } from "../spread.js";

/** The path the API lives under; an agent route may not take it (routes.ts). */
export const WORKFLOWS_PATH = "/workflows";
/** The longest `?wait=` a run read may long-poll (seconds). */
export const MAX_WAIT_S = 30;
/** A start request: `input` (at most the engine's 64 KiB as JSON) and `key`, with room for the JSON around them (bytes). */
export const MAX_START_BODY_BYTES = 72 * 1024;
/** An event's payload as sent (bytes); the engine holds it to its own 64 KiB as JSON. */
export const MAX_EVENT_BODY_BYTES = 64 * 1024;
/** Runs the deployment may start a minute through the API by default (`SWITCHBOARD_WORKFLOW_RUNS_PER_MINUTE`). */
export const DEFAULT_RUNS_PER_MINUTE = 60;
/** Workflow names the API's own paths use (`/workflows/runs/…`, `/workflows/events/…`): refused at load. */
export const RESERVED_WORKFLOW_NAMES: readonly string[] = ["runs", "events"];

const START_FIELDS = ["input", "key"];
const STATUS: Readonly<Record<RequestErrorCode, number>> = { unknown_workflow: 404, invalid: 400, too_large: 413, too_many_runs: 429 };
const ENDED: ReadonlySet<string> = new Set(["completed", "failed", "cancelled"]);

/** `SWITCHBOARD_WORKFLOW_RUNS_PER_MINUTE`: a whole number ≥ 1; throws naming the variable and the fix. */
export function parseRunsPerMinute(value: string | undefined): number {
  if (value === undefined || value.trim() === "") return DEFAULT_RUNS_PER_MINUTE;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) {
    throw new Error(`SWITCHBOARD_WORKFLOW_RUNS_PER_MINUTE: ${JSON.stringify(value)} is not a whole number ≥ 1; set how many workflow runs POST /workflows/<name>/runs may start a minute (default ${DEFAULT_RUNS_PER_MINUTE})`);
  }
  return n;
}

/** `?wait=`: undefined when absent, whole seconds 0–`MAX_WAIT_S`, else the refusal. */
export function parseWait(value: string | null): number | undefined | { readonly error: string } {
  if (value === null) return undefined;
  const n = Number(value);
  if (value.trim() === "" || !Number.isInteger(n) || n < 0 || n > MAX_WAIT_S) return { error: `wait: must be a whole number of seconds from 0 to ${MAX_WAIT_S} (got ${JSON.stringify(value)})` };
  return n;
}

export interface WorkflowRoutesDeps {
  readonly clock: Clock;
  readonly log: Logger;
  /** Refusals strangers can repeat, at most one line per kind every 10 s. */
  readonly throttle: LogThrottle;
  /** The gateway's auth is on when set. */
  readonly apiKey: string | undefined;
  readonly budget: ConnectionBudget;
  /** Holds the deployment's runs-per-minute bucket. */
  readonly coordinator: Coordinator;
  readonly runsPerMinute: number;
  /** The engine, once the gateway has opened it; undefined for an agent without workflows. */
  readonly engine: () => WorkflowEngine | undefined;
  readonly slots?: StreamSlots;
}

export interface WorkflowRoutes {
  /** Answer `req` when its path is under `/workflows` (true), else write nothing (false). */
  handleRequest(req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean>;
}

/** A run as the API answers it. */
function runBody(run: RunInfo): RunInfo & { readonly ended: boolean } {
  return spread(run, { ended: ENDED.has(run.status) });
}

function refuse(res: ServerResponse, error: unknown): void {
  if (!(error instanceof WorkflowRequestError)) throw error;
  json(res, STATUS[error.code], { error: error.message, field: error.field }, error.code === "too_many_runs" ? { "retry-after": "60" } : {});
}

/** The path's segments after `/workflows`, each decoded; undefined when one does not decode. */
function segments(path: string): string[] | undefined {
  try {
    return path
      .slice(WORKFLOWS_PATH.length)
      .split("/")
      .filter((part) => part !== "")
      .map((part) => decodeURIComponent(part));
  } catch {
    return undefined;
  }
}

type Route =
  | { readonly kind: "list" }
  | { readonly kind: "start"; readonly name: string }
  | { readonly kind: "run"; readonly runId: string }
  | { readonly kind: "events"; readonly runId: string }
  | { readonly kind: "deliver"; readonly token: string };

/** Which route a path names, with the method it answers. */
function routeOf(parts: readonly string[]): { readonly route: Route; readonly method: "GET" | "POST" } | undefined {
  const [first, second, third, ...rest] = parts;
  if (rest.length > 0) return undefined;
  if (first === undefined) return { route: { kind: "list" }, method: "GET" };
  if (first === "runs" && second !== undefined && third === undefined) return { route: { kind: "run", runId: second }, method: "GET" };
  if (first === "runs" && second !== undefined && third === "events") return { route: { kind: "events", runId: second }, method: "GET" };
  if (first === "events" && second !== undefined && third === undefined) return { route: { kind: "deliver", token: second }, method: "POST" };
  if (second === "runs" && third === undefined) return { route: { kind: "start", name: first }, method: "POST" };
  return undefined;
}

export function workflowRoutes(deps: WorkflowRoutesDeps): WorkflowRoutes {
  const { clock, log, throttle, apiKey, budget } = deps;
  const slots = deps.slots ?? new StreamSlots();

  async function start(req: IncomingMessage, res: ServerResponse, engine: WorkflowEngine, name: string): Promise<void> {
    const text = await readBody(req, MAX_START_BODY_BYTES);
    if (text === undefined) return json(res, 413, { error: `the request is over ${MAX_START_BODY_BYTES} bytes; send { input, key? } with input at most 64 KiB as JSON` });
    let body: unknown;
    try {
      body = text.trim() === "" ? {} : JSON.parse(text);
    } catch {
      body = undefined;
    }
    if (typeof body !== "object" || body === null || Array.isArray(body)) return json(res, 400, { error: "the body must be a JSON object: { input, key? }" });
    const fields = body as Record<string, unknown>;
    const unknown = Object.keys(fields).filter((field) => !START_FIELDS.includes(field));
    if (unknown.length > 0) return json(res, 400, { error: `${unknown.join(", ")}: not a field of a run request; send { input, key? }`, field: unknown[0] });
    if (!engine.workflows.has(name)) {
      return json(res, 404, { error: `no workflow ${JSON.stringify(name)}; the workflows are ${[...engine.workflows.keys()].join(", ")}`, field: "name" });
    }
    const admitted = await deps.coordinator.admit("workflow runs started", deps.runsPerMinute).catch(() => false);
    if (!admitted) return json(res, 429, { error: `more than ${deps.runsPerMinute} workflow runs started a minute (SWITCHBOARD_WORKFLOW_RUNS_PER_MINUTE); retry later` }, { "retry-after": "60" });
    try {
      const { runId } = await engine.start(name, fields.input, fields.key === undefined ? {} : { key: fields.key as string });
      const path = `${WORKFLOWS_PATH}/runs/${runId}`;
      return json(res, 201, { runId, workflow: name, ...(fields.key === undefined ? {} : { key: fields.key }), run: path, events: `${path}/events` }, { location: path });
    } catch (error) {
      return refuse(res, error);
    }
  }

  /** The run now, or — with `wait` — as soon as it ends, at most `wait` seconds from now. */
  async function read(req: IncomingMessage, res: ServerResponse, engine: WorkflowEngine, runId: string, wait: number | undefined): Promise<void> {
    let ended = false;
    let wake: (() => void) | undefined;
    // Listen before reading, so a run that ends in between is not waited on for nothing.
    const unsubscribe =
      wait === undefined || wait === 0
        ? () => {}
        : engine.onRunEnd((end) => {
            if (end.runId !== runId) return;
            ended = true;
            wake?.();
          });
    try {
      const run = await engine.get(runId);
      if (run === undefined) return json(res, 404, { error: `no run ${JSON.stringify(runId)} (ended runs are kept SWITCHBOARD_WORKFLOWS_RETENTION_DAYS days)`, field: "runId" });
      if (wait === undefined || wait === 0 || ENDED.has(run.status)) return json(res, 200, runBody(run));
      if (!ended) {
        await new Promise<void>((resolve) => {
          const done = (): void => {
            timer.cancel();
            res.off("close", done);
            wake = undefined;
            resolve();
          };
          const timer = clock.setTimeout(done, wait * 1000);
          res.once("close", done);
          wake = done;
        });
      }
      if (res.destroyed || res.writableEnded) return;
      const now = await engine.get(runId);
      return now === undefined ? json(res, 404, { error: `no run ${JSON.stringify(runId)}`, field: "runId" }) : json(res, 200, runBody(now));
    } finally {
      unsubscribe();
    }
  }

  async function deliver(req: IncomingMessage, res: ServerResponse, engine: WorkflowEngine, token: string): Promise<void> {
    const text = await readBody(req, MAX_EVENT_BODY_BYTES);
    if (text === undefined) return json(res, 413, { error: `the event is over ${MAX_EVENT_BODY_BYTES} bytes` });
    let payload: JsonValue;
    try {
      payload = text.trim() === "" ? null : (JSON.parse(text) as JsonValue);
    } catch {
      return json(res, 400, { error: "the body must be JSON (the event's payload), or empty for none" });
    }
    try {
      if (await engine.deliver(token, payload)) return json(res, 202, { delivered: true, token });
      return json(res, 404, { error: `no run is waiting for ${JSON.stringify(token)} now (an event reaches only a run already waiting; it is not kept for later)`, field: "token" });
    } catch (error) {
      return refuse(res, error);
    }
  }

  return {
    async handleRequest(req, res, url) {
      const path = url.pathname;
      if (path !== WORKFLOWS_PATH && !path.startsWith(`${WORKFLOWS_PATH}/`)) return false;
      const method = req.method ?? "GET";
      if (!(await budget.admit(req.socket.remoteAddress))) {
        tooMany(res, budget.refusal);
        return true;
      }
      const parts = segments(path);
      if (parts === undefined) {
        json(res, 400, { error: "the path does not decode (a bad %-escape)" });
        return true;
      }
      const matched = routeOf(parts);
      if (matched === undefined) {
        json(res, 404, { error: `no route ${method} ${path}; the workflows API is GET /workflows, POST /workflows/<name>/runs, GET /workflows/runs/<id>, GET /workflows/runs/<id>/events, POST /workflows/events/<token>` });
        return true;
      }
      const { route } = matched;
      if (method !== matched.method && !(method === "HEAD" && matched.method === "GET" && route.kind !== "events")) {
        json(res, 405, { error: `no route ${method} ${path}: this path answers ${matched.method}` }, { allow: matched.method === "GET" && route.kind !== "events" ? "GET, HEAD" : matched.method });
        return true;
      }
      const engine = deps.engine();
      if (engine === undefined) {
        json(res, 404, { error: "this agent has no workflows: add workflows/<name>.ts to its directory (docs/workflows.md)" });
        return true;
      }
      if (apiKey === undefined && route.kind !== "list") {
        json(res, 403, { error: "the workflows API is off while auth is off (anyone could start runs, read their output or resume them): set SWITCHBOARD_API_KEY" });
        return true;
      }
      if (apiKey !== undefined && !keyMatches(apiKey, bearer(req.headers.authorization))) {
        throttle.warn(log, { remote: req.socket.remoteAddress, route: route.kind }, "workflows API refused: bad api key");
        json(res, 401, { error: "send your API key as Authorization: Bearer <key>" }, { "www-authenticate": "Bearer" });
        return true;
      }
      switch (route.kind) {
        case "list":
          json(res, 200, { workflows: [...engine.workflows].map(([name, summary]) => ({ name, ...summary })) });
          return true;
        case "start":
          await start(req, res, engine, route.name);
          return true;
        case "run": {
          const wait = parseWait(url.searchParams.get("wait"));
          if (typeof wait === "object") json(res, 400, { error: wait.error, field: "wait" });
          else await read(req, res, engine, route.runId, wait);
          return true;
        }
        case "events": {
          if ((await engine.get(route.runId)) === undefined) {
            json(res, 404, { error: `no run ${JSON.stringify(route.runId)}`, field: "runId" });
            return true;
          }
          const release = slots.take(req.socket.remoteAddress ?? "unknown");
          if (typeof release !== "function") {
            json(res, 429, { error: release.refusal }, { "retry-after": "10" });
            return true;
          }
          await streamRunEvents(req, res, route.runId, { engine, clock, log }, release);
          return true;
        }
        case "deliver":
          await deliver(req, res, engine, route.token);
          return true;
      }
    },
  };
}
