/**
 * The kernel's own copy of bwrap, for a bwrap its uid owns (P-SBX-3). Every process inside a
 * sandbox may open bwrap's init's `/proc/1/exe` (same uid, no capabilities), which leads to the
 * file bwrap was run from on the host's mount, writable there whatever the view binds read-only:
 * the owner's chmod or utime through it works, and a root kernel's agent owns `/usr/bin/bwrap`
 * (made not executable, the next kernel finds tier D and runs the agent unconfined). Run from a
 * sealed memfd the kernel holds, only that copy is within reach: no write (sealed), no change of
 * its mode where Linux seals that too (6.3), and nothing left on disk.
 */
import { C_FACTS } from "../bash/c_library.ts";
import type { SandboxHost } from "./probe.ts";

/** memfd_create(2) flags: close-on-exec, sealable, executable (Linux 6.3; EINVAL before). */
const MFD_CLOEXEC = 0x1, MFD_ALLOW_SEALING = 0x2, MFD_EXEC = 0x10;
/** fcntl(2) F_ADD_SEALS and its seals: seal, shrink, grow, write; exec (Linux 6.3). */
const F_ADD_SEALS = 1033, SEALS = 0x1 | 0x2 | 0x4 | 0x8, F_SEAL_EXEC = 0x20;

const symbols = {
  memfd_create: { parameters: ["buffer", "u32"], result: "i32" },
  write: { parameters: ["i32", "buffer", "usize"], result: "i64" },
  fcntl: { parameters: ["i32", "i32", "i32"], result: "i32" },
  close: { parameters: ["i32"], result: "i32" },
} as const satisfies Deno.ForeignLibraryInterface;

/** libc's functions of {@link symbols}. */
function libc() {
  return Deno.dlopen(C_FACTS.linux.libc, symbols).symbols;
}

/** A sealed memfd holding `bytes`, open (close-on-exec) for the kernel's life; null on failure. */
function sealedCopy(bytes: Uint8Array): number | null {
  const c = libc();
  const name = new TextEncoder().encode("bwrap\0");
  let fd = c.memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_EXEC);
  if (fd < 0) fd = c.memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return null;
  for (let at = 0; at < bytes.length;) {
    const n = Number(c.write(fd, bytes.subarray(at), BigInt(bytes.length - at)));
    if (n <= 0) {
      c.close(fd);
      return null;
    }
    at += n;
  }
  if (c.fcntl(fd, F_ADD_SEALS, SEALS | F_SEAL_EXEC) < 0 && c.fcntl(fd, F_ADD_SEALS, SEALS) < 0) {
    c.close(fd);
    return null;
  }
  return fd;
}

/**
 * Starts making the copy of `bwrap` (the one the sandbox probe runs, `probe.ts`; null when there is
 * none) while the probe goes on, and returns what replaces a tier B host's bwrap by the copy once
 * the probe has answered: `host` as it is when the kernel's uid does not own that bwrap, or when
 * the copy cannot be made or run. Its `--version` run had the kernel's start wait 2-7 ms after the
 * probe (issue 33).
 */
export function ownBwrap(
  bwrap: string | null,
): (host: SandboxHost) => Promise<SandboxHost> {
  const copy = bwrap === null || Deno.build.os !== "linux"
    ? Promise.resolve(null)
    : runnableCopy(bwrap);
  return async (host) => {
    const fd = await copy;
    if (fd === null) return host;
    if (host.tier !== "B" || host.bwrap !== bwrap) {
      libc().close(fd); // not used: tier D
      return host;
    }
    return { ...host, bwrap: `/proc/${Deno.pid}/fd/${fd}` };
  };
}

/** A sealed copy of `bwrap` that runs, when the kernel's uid owns it: its descriptor. */
async function runnableCopy(bwrap: string): Promise<number | null> {
  try {
    if (Deno.statSync(bwrap).uid !== Deno.uid()) return null;
    const fd = sealedCopy(Deno.readFileSync(bwrap));
    if (fd === null) return null;
    const run = new Deno.Command(`/proc/${Deno.pid}/fd/${fd}`, {
      args: ["--version"],
      stdout: "null",
      stderr: "null",
    });
    if ((await run.output()).success) return fd;
    libc().close(fd);
    return null;
  } catch {
    return null;
  }
}
