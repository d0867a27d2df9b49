/**
 * One `redis-server` child process: finding the binary, picking a free port, starting it with no
 * disk (or AOF with `appendfsync always`), waiting until it accepts connections, signalling it.
 *
 * @module
 */

import { type ChildProcess, spawn } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { createServer } from "node:net";
import { delimiter, isAbsolute, join } from "node:path";
import { DevClusterError, RedisServerNotFoundError } from "./errors";

/** How long a redis-server may take to print "Ready to accept connections". */
const READY_TIMEOUT_MS = 15_000;
/** Kept tail of the server's log, for error messages. */
const LOG_TAIL_BYTES = 4_096;
/** Attempts with a fresh ephemeral port when another process grabbed the one we picked. */
const PORT_ATTEMPTS = 8;

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Resolves the redis-server binary: an explicit path (or bare name looked up on PATH), else
 * `redis-server` on PATH. Throws {@link RedisServerNotFoundError} with install hints.
 */
export function findRedisServer(binary = "redis-server"): string {
  if (isAbsolute(binary) || binary.includes("/")) {
    if (isExecutable(binary)) return binary;
    throw new RedisServerNotFoundError(binary);
  }
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (dir === "") continue;
    const candidate = join(dir, binary);
    if (isExecutable(candidate)) return candidate;
  }
  throw new RedisServerNotFoundError(binary);
}

/** A port that was free a moment ago on `host` (bind port 0, read it, release it). */
export function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once("error", reject);
    server.listen(0, host, () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Where and how to run one redis-server. */
export interface RedisProcessSpec {
  binary: string;
  host: string;
  port: number;
  /** Working directory: AOF files live here; nothing else is written with persistence "none". */
  dir: string;
  persistence: "none" | "aof";
}

class PortInUseError extends DevClusterError {
  override name = "PortInUseError";
}

function serverArgs(spec: RedisProcessSpec): string[] {
  const aof = spec.persistence === "aof";
  return [
    "--port",
    String(spec.port),
    "--bind",
    spec.host,
    "--dir",
    spec.dir,
    "--save",
    "",
    "--appendonly",
    aof ? "yes" : "no",
    "--appendfsync",
    "always",
    "--daemonize",
    "no",
    "--logfile",
    "",
    "--loglevel",
    "notice",
  ];
}

/** A started redis-server; {@link RedisProcess.exited} settles once the OS reaped it. */
export class RedisProcess {
  readonly pid: number;
  readonly port: number;
  /** Resolves when the process is gone (any cause). */
  readonly exited: Promise<void>;
  #alive = true;

  private constructor(child: ChildProcess, pid: number, port: number, exited: Promise<void>) {
    this.pid = pid;
    this.port = port;
    this.exited = exited.then(() => {
      this.#alive = false;
    });
    // Keep draining the log pipes after startup: a full pipe would block redis-server on write.
    child.stdout?.resume();
    child.stderr?.resume();
  }

  /** Whether the process has not exited yet. */
  get alive(): boolean {
    return this.#alive;
  }

  /** Sends a signal; a process that already exited is ignored. */
  signal(signal: NodeJS.Signals): void {
    if (!this.#alive) return;
    try {
      process.kill(this.pid, signal);
    } catch {
      // ESRCH: it exited between the check and the kill.
    }
  }

  /** SIGKILLs the process and waits until it is reaped. */
  async kill(): Promise<void> {
    this.signal("SIGKILL");
    await this.exited;
  }

  /** Starts a redis-server on exactly `spec.port` and waits until it accepts connections. */
  static start(spec: RedisProcessSpec): Promise<RedisProcess> {
    return new Promise((resolve, reject) => {
      // Own process group: a Ctrl-C meant for the terminal's job (npx, tsx, node) must not reach
      // redis-server directly; this process stops it, or the watchdog does if this process died.
      const child = spawn(spec.binary, serverArgs(spec), {
        stdio: ["ignore", "pipe", "pipe"],
        detached: true,
      });
      let log = "";
      let ready = false;
      const exited = new Promise<void>((done) => child.once("exit", () => done()));
      const fail = (error: Error) => {
        clearTimeout(timer);
        child.kill("SIGKILL");
        reject(error);
      };
      const timer = setTimeout(
        () =>
          fail(
            new DevClusterError(`redis-server on port ${spec.port} not ready after 15 s:\n${log}`),
          ),
        READY_TIMEOUT_MS,
      );
      const onData = (chunk: Buffer) => {
        if (ready) return;
        log = (log + chunk.toString("utf8")).slice(-LOG_TAIL_BYTES);
        if (log.includes("Ready to accept connections")) {
          ready = true;
          clearTimeout(timer);
          resolve(new RedisProcess(child, child.pid ?? 0, spec.port, exited));
        }
      };
      child.stdout?.on("data", onData);
      child.stderr?.on("data", onData);
      child.once("error", (error: NodeJS.ErrnoException) => {
        fail(
          error.code === "ENOENT"
            ? new RedisServerNotFoundError(spec.binary, { cause: error })
            : new DevClusterError(`cannot start redis-server: ${error.message}`, { cause: error }),
        );
      });
      child.once("exit", (code, signal) => {
        if (ready) return;
        clearTimeout(timer);
        const why = `redis-server on ${spec.host}:${spec.port} exited (${signal ?? code}) before it was ready`;
        reject(
          log.includes("Address already in use")
            ? new PortInUseError(`${why}: port in use`)
            : new DevClusterError(`${why}:\n${log}`),
        );
      });
    });
  }

  /** Starts a redis-server on a free ephemeral port, retrying when the port was taken meanwhile. */
  static async startOnFreePort(spec: Omit<RedisProcessSpec, "port">): Promise<RedisProcess> {
    for (let attempt = 1; ; attempt++) {
      const port = await freePort(spec.host);
      try {
        return await RedisProcess.start({ ...spec, port });
      } catch (error) {
        if (!(error instanceof PortInUseError) || attempt >= PORT_ATTEMPTS) throw error;
      }
    }
  }
}
