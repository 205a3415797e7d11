// A real S3-compatible server on loopback for the recording upload tests: s3rver (a dev
// dependency, so `npm ci` in .ci/run installs it; no binary, no network), in this process, on a
// free port, storing objects in a temp directory. It speaks S3's REST API (PUT/GET object, path
// style) and refuses an access key it does not know (InvalidAccessKeyId, 403); it does not check
// SigV4 signatures themselves.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
// @ts-expect-error s3rver ships no type declarations; the few members used here are typed below.
import S3rver from "s3rver";

/** s3rver's built-in account: the only access key it accepts. */
export const S3RVER_ACCESS_KEY = "S3RVER";
/** Any secret signs (s3rver does not check SigV4 signatures): a distinctive one a test can look for in logs. */
export const S3RVER_SECRET = "test-secret-never-logged-7f3a";

interface S3rverInstance {
  run(): Promise<{ port: number }>;
  close(): Promise<void>;
}
type S3rverConstructor = new (options: Record<string, unknown>) => S3rverInstance;

export interface S3Server {
  /** The endpoint to give the client (path-style addressing). */
  readonly endpoint: string;
  /** Where the objects are stored: `<dir>/<bucket>/<key>._S3rver_object`. */
  readonly dir: string;
  stop(): Promise<void>;
}

export async function startS3(buckets: readonly string[]): Promise<S3Server> {
  const dir = mkdtempSync(join(tmpdir(), "s3rver-"));
  const server = new (S3rver as S3rverConstructor)({ port: 0, address: "127.0.0.1", silent: true, directory: dir, configureBuckets: buckets.map((name) => ({ name })) });
  const { port } = await server.run();
  return {
    endpoint: `http://127.0.0.1:${port}`,
    dir,
    stop: async () => {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
