import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { basename } from "node:path";
import type * as S3Sdk from "@aws-sdk/client-s3";
import type { Clock } from "../../clock.js";
import type { Logger } from "../../log.js";
import type { RecordingDestination } from "../../manifest/index.js";
import { reconnect, RECONNECT_DELAYS_MS } from "../../providers/reconnect.js";

type S3Destination = Extract<RecordingDestination, { s3: unknown }>["s3"];

/** One PUT may take this long plus `UPLOAD_MS_PER_MIB` for each MiB of the file (ms) before it is aborted and retried. */
export const UPLOAD_BASE_TIMEOUT_MS = 30_000;
export const UPLOAD_MS_PER_MIB = 1_000;
/** The region when neither the config nor AWS_REGION names one. */
const DEFAULT_REGION = "us-east-1";

const CONTENT_TYPES: Readonly<Record<string, string>> = { ".json": "application/json", ".wav": "audio/wav" };

/** S3 statuses a retry cannot cure: a bad request, a refused key, no such bucket (timeouts and throttling are retried). */
function retryable(sdk: typeof S3Sdk, error: Error): boolean {
  const status = error instanceof sdk.S3ServiceException ? error.$metadata.httpStatusCode : undefined;
  return status === undefined || status === 408 || status === 429 || status >= 500;
}

/** The AWS SDK, loaded the first time a session uploads (a gateway that never records never loads it: several MB of code). */
let sdkLoading: Promise<typeof S3Sdk> | undefined;
function loadSdk(): Promise<typeof S3Sdk> {
  sdkLoading ??= import("@aws-sdk/client-s3");
  return sdkLoading;
}

/**
 * The call record's files PUT to an S3 bucket (or an S3-compatible service at `endpoint`) with
 * the AWS SDK, as `<prefix><folder>/<file>`. Credentials come from the SDK's default chain
 * (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, a profile, an instance role), never from the
 * config, and never reach the record or the logs. Each file is retried on the provider links'
 * schedule (`RECONNECT_DELAYS_MS`), every attempt held to a deadline by its size.
 */
export async function uploadToS3(options: {
  readonly s3: S3Destination;
  readonly folder: string;
  readonly files: readonly string[];
  readonly clock: Clock;
  readonly log: Logger;
  readonly signal: AbortSignal;
}): Promise<string> {
  const { s3, clock, log } = options;
  const sdk = await loadSdk();
  const { PutObjectCommand } = sdk;
  const client = new sdk.S3Client({
    region: s3.region ?? process.env.AWS_REGION ?? DEFAULT_REGION,
    ...(s3.endpoint === undefined ? {} : { endpoint: s3.endpoint }),
    ...(s3.forcePathStyle === undefined ? {} : { forcePathStyle: s3.forcePathStyle }),
    // The retries are ours (a file body is re-opened for each attempt).
    maxAttempts: 1,
    // No default CRC checksum: it sends a stream as aws-chunked with a trailer, which S3-compatible
    // services (and older MinIO) store as framing instead of decoding; the length is known instead.
    requestChecksumCalculation: "WHEN_REQUIRED",
  });
  const prefix = `${s3.prefix ?? ""}${options.folder}/`;
  try {
    for (const path of options.files) {
      const key = `${prefix}${basename(path)}`;
      const size = (await stat(path)).size;
      const timeoutMs = UPLOAD_BASE_TIMEOUT_MS + Math.ceil(size / (1024 * 1024)) * UPLOAD_MS_PER_MIB;
      const outcome = await reconnect({
        clock,
        delaysMs: RECONNECT_DELAYS_MS,
        immediately: true,
        signal: options.signal,
        retryable: (error) => retryable(sdk, error),
        failed: (error, attempt, retry) => log.warn({ bucket: s3.bucket, objectKey: key, attempt, retry, err: error.message }, "recording upload failed"),
        attempt: async () => {
          const deadline = new AbortController();
          const timer = clock.setTimeout(() => deadline.abort(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
          const body = createReadStream(path);
          try {
            await client.send(
              new PutObjectCommand({ Bucket: s3.bucket, Key: key, Body: body, ContentLength: size, ContentType: CONTENT_TYPES[key.slice(key.lastIndexOf("."))] ?? "application/octet-stream" }),
              { abortSignal: AbortSignal.any([deadline.signal, options.signal]) },
            );
          } finally {
            timer.cancel();
            body.destroy();
          }
        },
      });
      if (outcome.kind === "stopped") throw new Error("the upload was stopped");
      if (outcome.kind === "refused") throw new Error(`S3 refused ${key}: ${outcome.error.message}`);
      if (outcome.kind === "exhausted") throw new Error(`S3 upload of ${key} failed ${outcome.attempts} times: ${outcome.last?.message ?? "no attempt"}`);
    }
  } finally {
    client.destroy();
  }
  return `s3://${s3.bucket}/${prefix}`;
}
