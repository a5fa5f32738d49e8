/**
 * Spawning a process-group leader with glibc's `posix_spawn` through Deno FFI (Linux): the child
 * leads a new session under its own pid (`POSIX_SPAWN_SETSID`, glibc 2.26), enters its working
 * directory (`posix_spawn_file_actions_addchdir_np`, glibc 2.29), reads /dev/null and writes
 * pipes this kernel reads; the kernel reaps it itself when its pidfd shows its exit (Linux 5.3).
 * Pipes and pidfds are waited for on one worker thread (`fd_waiter.ts`). One exec (no setsid(1)
 * in between); glibc's clone(CLONE_VFORK) blocks the event loop until the child has exec'd.
 */
import { resolve } from "node:path";
import type { BashChild } from "./bash_child.ts";
import { C_FACTS } from "./c_library.ts";
import { closeFd, cString, EINTR, errno } from "./fd_calls.ts";
import { fdReadable } from "./fd_stream.ts";
import { ownPipes } from "./pipe_holders.ts";
import { dropFd, fdWaiterAvailable, waitFd } from "./fd_waiter.ts";
import { commandStatus } from "./wait_status.ts";

/** glibc's flags (spawn.h), fcntl(2) and open(2) values, the same on x86_64 and aarch64. */
const POSIX_SPAWN_SETSIGDEF = 0x04;
const POSIX_SPAWN_SETSIGMASK = 0x08;
const POSIX_SPAWN_SETSID = 0x80;
const O_RDONLY = 0;
const { O_NONBLOCK, O_CLOEXEC } = C_FACTS.linux;
const F_GETFL = 3;
const F_SETFL = 4;
const WNOHANG = 1;
const SIGPIPE = 13;
/** pidfd_open's number, the same on every Linux architecture. */
const SYS_PIDFD_OPEN = 434n;
const ENOENT = 2;
/** Sizes of glibc's opaque structs on 64-bit Linux (80, 336 and 128 bytes), rounded up. */
const FILE_ACTIONS_SIZE = 128;
const ATTR_SIZE = 512;
const SIGSET_SIZE = 128;

const symbols = {
  pipe2: { parameters: ["buffer", "i32"], result: "i32" },
  fcntl: { parameters: ["i32", "i32", "i32"], result: "i32" },
  posix_spawn_file_actions_init: { parameters: ["buffer"], result: "i32" },
  posix_spawn_file_actions_destroy: { parameters: ["buffer"], result: "i32" },
  posix_spawn_file_actions_addopen: {
    parameters: ["buffer", "i32", "buffer", "i32", "u32"],
    result: "i32",
  },
  posix_spawn_file_actions_adddup2: { parameters: ["buffer", "i32", "i32"], result: "i32" },
  posix_spawn_file_actions_addchdir_np: {
    parameters: ["buffer", "buffer"],
    result: "i32",
    optional: true,
  },
  posix_spawnattr_init: { parameters: ["buffer"], result: "i32" },
  posix_spawnattr_setflags: { parameters: ["buffer", "i16"], result: "i32" },
  posix_spawnattr_setsigmask: { parameters: ["buffer", "buffer"], result: "i32" },
  posix_spawnattr_setsigdefault: { parameters: ["buffer", "buffer"], result: "i32" },
  sigemptyset: { parameters: ["buffer"], result: "i32" },
  sigaddset: { parameters: ["buffer", "i32"], result: "i32" },
  posix_spawn: {
    parameters: ["buffer", "buffer", "buffer", "buffer", "buffer", "buffer"],
    result: "i32",
  },
  waitpid: { parameters: ["i32", "buffer", "i32"], result: "i32" },
  /** For pidfd_open(2) (Linux 5.3), which glibc wraps only from 2.36 on. */
  syscall: { parameters: ["i64", "i64", "i64"], result: "i64" },
} as const satisfies Deno.ForeignLibraryInterface;

type Libc = Deno.DynamicLibrary<typeof symbols>["symbols"];

let lib: Libc | null | undefined;

/**
 * glibc's spawn calls, or null when this is not Linux, its glibc lacks one (before 2.29), the
 * Linux kernel has no pidfds (before 5.3) or fds cannot be waited for ({@link fdWaiterAvailable}).
 */
function libc(): Libc | null {
  if (lib === undefined) {
    lib = null;
    if (Deno.build.os === "linux" && fdWaiterAvailable()) {
      try {
        const loaded = Deno.dlopen(C_FACTS.linux.libc, symbols).symbols;
        const own = pidfd(loaded, Deno.pid);
        if (own >= 0) closeFd(own);
        if (loaded.posix_spawn_file_actions_addchdir_np !== null && own >= 0) lib = loaded;
      } catch {
        // not glibc, or too old for these calls
      }
    }
  }
  return lib;
}

/** A pidfd (close-on-exec) of `pid`, readable once it has exited; negative on failure. */
function pidfd(c: Libc, pid: number): number {
  return Number(c.syscall(SYS_PIDFD_OPEN, BigInt(pid), 0n));
}

/** Whether {@link posixSpawn} can spawn on this host. */
export function posixSpawnAvailable(): boolean {
  return libc() !== null;
}

const encoder = new TextEncoder();

/** NUL-terminated C strings in one off-heap buffer, and the NULL-ended array of their addresses. */
function cStrings(strings: readonly string[]): { bytes: Uint8Array; pointers: Uint8Array } {
  const encoded = strings.map((s) => encoder.encode(s));
  const bytes = new Uint8Array(
    new ArrayBuffer(encoded.reduce((sum, e) => sum + e.length + 1, 0)),
  );
  const base = Deno.UnsafePointer.value(Deno.UnsafePointer.of(bytes));
  const pointers = new BigUint64Array(strings.length + 1);
  let at = 0;
  encoded.forEach((e, i) => {
    bytes.set(e, at);
    pointers[i] = BigInt(base) + BigInt(at);
    at += e.length + 1;
  });
  return { bytes, pointers: new Uint8Array(pointers.buffer) };
}

/** A pipe as [read end, write end], both close-on-exec; the read end non-blocking. */
function pipe(c: Libc): [number, number] {
  const fds = new Int32Array(2);
  if (c.pipe2(new Uint8Array(fds.buffer), O_CLOEXEC) !== 0) {
    throw new Error(`pipe2 failed (errno ${errno()})`);
  }
  const flags = c.fcntl(fds[0], F_GETFL, 0);
  if (flags < 0 || c.fcntl(fds[0], F_SETFL, flags | O_NONBLOCK) !== 0) {
    const e = errno();
    closeFd(fds[0]);
    closeFd(fds[1]);
    throw new Error(`fcntl(O_NONBLOCK) failed (errno ${e})`);
  }
  return [fds[0], fds[1]];
}

let attributes: Uint8Array | null = null;

/**
 * The spawn attributes every spawn shares, made once: a new session, no signal blocked, SIGPIPE
 * (which the kernel ignores) default.
 */
function spawnAttributes(c: Libc): Uint8Array {
  if (attributes === null) {
    const attr = new Uint8Array(ATTR_SIZE);
    check(c.posix_spawnattr_init(attr), "posix_spawnattr_init");
    const empty = new Uint8Array(SIGSET_SIZE);
    const pipeOnly = new Uint8Array(SIGSET_SIZE);
    c.sigemptyset(empty);
    c.sigemptyset(pipeOnly);
    c.sigaddset(pipeOnly, SIGPIPE);
    check(c.posix_spawnattr_setsigmask(attr, empty), "setsigmask");
    check(c.posix_spawnattr_setsigdefault(attr, pipeOnly), "setsigdefault");
    const flags = POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
    check(c.posix_spawnattr_setflags(attr, flags), "setflags");
    attributes = attr;
  }
  return attributes;
}

/** Throws for a non-zero error number `err` of `what`. */
function check(err: number, what: string): void {
  if (err !== 0) throw new Error(`${what} failed (errno ${err})`);
}

/**
 * Reaps `pid` once its pidfd `fd` (which this closes) shows it exited, without taking any other
 * child's status.
 */
async function reap(c: Libc, pid: number, fd: number): Promise<Deno.CommandStatus> {
  const status = new Int32Array(1);
  const buf = new Uint8Array(status.buffer);
  try {
    while (true) {
      const now = c.waitpid(pid, buf, WNOHANG);
      if (now === pid) return commandStatus(status[0]);
      const failure = now < 0 ? errno() : 0;
      if (failure !== 0 && failure !== EINTR) {
        throw new Error(`waitpid(${pid}) failed (errno ${failure})`);
      }
      if (now === 0) await waitFd(fd);
    }
  } finally {
    dropFd(fd);
  }
}

/** What {@link posixSpawn} starts: the program's argv, its working directory, its whole environment. */
export interface SpawnSpec {
  argv: readonly string[];
  cwd: string;
  env: ReadonlyMap<string, string>;
}

/**
 * Spawns `argv` (its program a path; relative ones are taken from the kernel's cwd) as the leader
 * of a new session and process group, in `cwd` with exactly `env`, stdin /dev/null, stdout and
 * stderr on fresh pipes; no other descriptor of the kernel is inherited (all are close-on-exec),
 * and SIGPIPE, which the kernel ignores, is default again. The child carries its pipes'
 * identities, read from the kernel's ends. Throws Deno.errors.NotFound when the program or `cwd`
 * does not exist.
 */
export function posixSpawn({ argv, cwd, env }: SpawnSpec): BashChild {
  const c = libc();
  if (c === null) throw new Error("posix_spawn is not available on this host");
  const program = resolve(argv[0]);
  const [outRead, outWrite] = pipe(c);
  let errPipe: [number, number];
  try {
    errPipe = pipe(c);
  } catch (e) {
    closeFd(outRead);
    closeFd(outWrite);
    throw e;
  }
  const [errRead, errWrite] = errPipe;
  const actions = new Uint8Array(FILE_ACTIONS_SIZE);
  check(c.posix_spawn_file_actions_init(actions), "posix_spawn_file_actions_init");
  let pid = 0;
  let pidFd = -1;
  try {
    check(
      c.posix_spawn_file_actions_addopen(actions, 0, cString("/dev/null"), O_RDONLY, 0),
      "addopen",
    );
    check(c.posix_spawn_file_actions_adddup2(actions, outWrite, 1), "adddup2");
    check(c.posix_spawn_file_actions_adddup2(actions, errWrite, 2), "adddup2");
    check(c.posix_spawn_file_actions_addchdir_np!(actions, cString(cwd)), "addchdir_np");
    const args = cStrings(argv);
    const envp = cStrings([...env].map(([k, v]) => `${k}=${v}`));
    const out = new Int32Array(1);
    const err = c.posix_spawn(
      new Uint8Array(out.buffer),
      cString(program),
      actions,
      spawnAttributes(c),
      args.pointers,
      envp.pointers,
    );
    // The strings stay referenced until the call returned.
    void [args.bytes, envp.bytes];
    if (err === ENOENT) throw new Deno.errors.NotFound(`spawn ${program} in ${cwd}: not found`);
    check(err, `posix_spawn ${program}`);
    pid = out[0];
    pidFd = pidfd(c, pid);
    if (pidFd < 0) {
      const e = errno();
      Deno.kill(pid, "SIGKILL");
      c.waitpid(pid, new Uint8Array(4), 0); // SIGKILLed: reaped at once
      throw new Error(`pidfd_open failed (errno ${e})`);
    }
  } catch (e) {
    for (const fd of [outRead, errRead]) closeFd(fd);
    throw e;
  } finally {
    for (const fd of [outWrite, errWrite]) closeFd(fd);
    c.posix_spawn_file_actions_destroy(actions);
  }
  const status = reap(c, pid, pidFd);
  const pipes = ownPipes([outRead, errRead]);
  return { pid, stdout: fdReadable(outRead), stderr: fdReadable(errRead), status, pipes };
}
