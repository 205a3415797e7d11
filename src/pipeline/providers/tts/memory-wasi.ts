/**
 * An in-memory WASI (preview1) host for flite's WebAssembly build: argv, a clock, stdio and one
 * preopened directory of byte arrays. Runs inside the local TTS worker (local-worker.ts).
 */
import { concatBytes } from "../../../audio/pcm.js";

/** The slices of WebAssembly's types used here (the project's lib declares no `WebAssembly`). */
export interface WasmInstance {
  readonly exports: Readonly<Record<string, unknown>>;
}
interface WasmMemory {
  readonly buffer: ArrayBuffer;
}

/** WASI errno values used below. */
const ERRNO = { success: 0, badf: 8, inval: 28, noent: 44, spipe: 70 } as const;
/** `proc_exit`: unwinds out of `_start`. */
class WasiExit extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}

/**
 * Just enough WASI (preview1) to run flite, in memory: its 13 imports, argv, a clock, stdio (stderr
 * kept for error messages) and one preopened directory whose files are byte arrays.
 *
 * Not node:wasi: on Node 20 its "fast API" calls crash the process (SIGSEGV, or "Internal field
 * out of bounds") once V8 optimizes flite's code, which happened here after a few long sentences in
 * one thread (nodejs/node#46777, #53087; `--no-turbo-fast-api-calls` avoids it, process-wide). This
 * also needs no temporary files and prints no "experimental" warning.
 */
export class MemoryWasi {
  /** The preopened directory, fd 3 (wasi-libc asks for preopens from fd 3 until EBADF). */
  static readonly DIR = "/out";
  static readonly #DIR_FD = 3;

  readonly #args: Uint8Array[];
  readonly #files = new Map<string, { data: Uint8Array; length: number }>();
  readonly #open = new Map<number, { name: string; position: number }>();
  #nextFd = MemoryWasi.#DIR_FD + 1;
  #memory: WasmMemory | undefined;
  #stderr = "";

  constructor(args: readonly string[]) {
    const encoder = new TextEncoder();
    this.#args = args.map((arg) => encoder.encode(`${arg}\0`));
  }

  /** What flite wrote to stderr (capped). */
  get stderr(): string {
    return this.#stderr;
  }

  /** A file flite wrote in DIR. */
  file(name: string): Uint8Array | undefined {
    const file = this.#files.get(name);
    return file?.data.subarray(0, file.length);
  }

  /** Run the command; its exit code. */
  run(instance: WasmInstance): number {
    this.#memory = instance.exports.memory as WasmMemory;
    try {
      (instance.exports._start as () => void)();
      return 0;
    } catch (error) {
      if (error instanceof WasiExit) return error.code;
      throw error;
    }
  }

  // Memory views are made per call: the buffer is replaced when the memory grows.
  #view(): DataView {
    if (this.#memory === undefined) throw new Error("WASI: no memory yet");
    return new DataView(this.#memory.buffer);
  }

  #bytes(): Uint8Array {
    return new Uint8Array(this.#view().buffer);
  }

  /** The bytes of an iovec list, concatenated. */
  #gather(iovs: number, count: number): Uint8Array {
    const view = this.#view();
    const parts: Uint8Array[] = [];
    for (let i = 0; i < count; i++) {
      const base = view.getUint32(iovs + i * 8, true);
      const length = view.getUint32(iovs + i * 8 + 4, true);
      parts.push(this.#bytes().subarray(base, base + length));
    }
    return concatBytes(parts);
  }

  #write(fd: number, bytes: Uint8Array): number {
    if (fd === 1) return ERRNO.success; // stdout: flite prints nothing useful there
    if (fd === 2) {
      if (this.#stderr.length < 2000) this.#stderr += new TextDecoder().decode(bytes);
      return ERRNO.success;
    }
    const open = this.#open.get(fd);
    const file = open === undefined ? undefined : this.#files.get(open.name);
    if (open === undefined || file === undefined) return ERRNO.badf;
    const end = open.position + bytes.length;
    if (end > file.data.length) {
      const grown = new Uint8Array(Math.max(end, file.data.length * 2, 64 * 1024));
      grown.set(file.data.subarray(0, file.length));
      file.data = grown;
    }
    file.data.set(bytes, open.position);
    open.position = end;
    file.length = Math.max(file.length, end);
    return ERRNO.success;
  }

  readonly imports = {
    args_sizes_get: (countPtr: number, sizePtr: number): number => {
      const view = this.#view();
      view.setUint32(countPtr, this.#args.length, true);
      view.setUint32(sizePtr, this.#args.reduce((n, a) => n + a.length, 0), true);
      return ERRNO.success;
    },
    args_get: (argvPtr: number, bufPtr: number): number => {
      const view = this.#view();
      let at = bufPtr;
      this.#args.forEach((arg, i) => {
        view.setUint32(argvPtr + i * 4, at, true);
        this.#bytes().set(arg, at);
        at += arg.length;
      });
      return ERRNO.success;
    },
    clock_time_get: (_id: number, _precision: bigint, timePtr: number): number => {
      this.#view().setBigUint64(timePtr, BigInt(Date.now()) * 1_000_000n, true);
      return ERRNO.success;
    },
    fd_close: (fd: number): number => {
      this.#open.delete(fd);
      return ERRNO.success;
    },
    fd_fdstat_get: (fd: number, statPtr: number): number => {
      // filetype: 2 character device (stdio), 3 directory, 4 regular file
      const type = fd <= 2 ? 2 : fd === MemoryWasi.#DIR_FD ? 3 : this.#open.has(fd) ? 4 : undefined;
      if (type === undefined) return ERRNO.badf;
      const view = this.#view();
      view.setUint8(statPtr, type);
      view.setUint16(statPtr + 2, 0, true);
      view.setBigUint64(statPtr + 8, 0xffff_ffff_ffff_ffffn, true); // every right
      view.setBigUint64(statPtr + 16, 0xffff_ffff_ffff_ffffn, true);
      return ERRNO.success;
    },
    fd_fdstat_set_flags: (): number => ERRNO.success,
    fd_prestat_get: (fd: number, prestatPtr: number): number => {
      if (fd !== MemoryWasi.#DIR_FD) return ERRNO.badf;
      const view = this.#view();
      view.setUint8(prestatPtr, 0); // a directory
      view.setUint32(prestatPtr + 4, new TextEncoder().encode(MemoryWasi.DIR).length, true);
      return ERRNO.success;
    },
    fd_prestat_dir_name: (fd: number, pathPtr: number, pathLength: number): number => {
      if (fd !== MemoryWasi.#DIR_FD) return ERRNO.badf;
      this.#bytes().set(new TextEncoder().encode(MemoryWasi.DIR).subarray(0, pathLength), pathPtr);
      return ERRNO.success;
    },
    fd_read: (_fd: number, _iovs: number, _count: number, readPtr: number): number => {
      this.#view().setUint32(readPtr, 0, true); // end of input: flite reads none (-t)
      return ERRNO.success;
    },
    fd_seek: (fd: number, offset: bigint, whence: number, positionPtr: number): number => {
      const open = this.#open.get(fd);
      const file = open === undefined ? undefined : this.#files.get(open.name);
      if (open === undefined || file === undefined) return fd <= 2 ? ERRNO.spipe : ERRNO.badf;
      const base = whence === 0 ? 0 : whence === 1 ? open.position : whence === 2 ? file.length : undefined;
      const position = base === undefined ? -1 : base + Number(offset);
      if (position < 0) return ERRNO.inval;
      open.position = position;
      this.#view().setBigUint64(positionPtr, BigInt(position), true);
      return ERRNO.success;
    },
    fd_write: (fd: number, iovs: number, count: number, writtenPtr: number): number => {
      const bytes = this.#gather(iovs, count);
      const errno = this.#write(fd, bytes);
      if (errno === ERRNO.success) this.#view().setUint32(writtenPtr, bytes.length, true);
      return errno;
    },
    path_open: (dirFd: number, _dirFlags: number, pathPtr: number, pathLength: number, openFlags: number, _rights: bigint, _inherited: bigint, _fdFlags: number, fdPtr: number): number => {
      if (dirFd !== MemoryWasi.#DIR_FD) return ERRNO.badf;
      const name = new TextDecoder().decode(this.#bytes().subarray(pathPtr, pathPtr + pathLength));
      // open flags: 1 create, 8 truncate
      let file = this.#files.get(name);
      if (file === undefined) {
        if ((openFlags & 1) === 0) return ERRNO.noent;
        file = { data: new Uint8Array(0), length: 0 };
        this.#files.set(name, file);
      }
      if ((openFlags & 8) !== 0) file.length = 0;
      const fd = this.#nextFd++;
      this.#open.set(fd, { name, position: 0 });
      this.#view().setUint32(fdPtr, fd, true);
      return ERRNO.success;
    },
    proc_exit: (code: number): never => {
      throw new WasiExit(code);
    },
  };
}
