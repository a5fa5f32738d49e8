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

/** A sealed memfd holding `bytes`, open (close-on-exec) for the kernel's life; null on failure. */
function sealedCopy(bytes: Uint8Array): number | null {
  const c = Deno.dlopen(C_FACTS.linux.libc, symbols).symbols;
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
 * `host` with its bwrap replaced by a sealed copy the kernel holds (named by its path under
 * `/proc`) when the kernel's uid owns it; `host` as it is otherwise, or when the copy cannot be
 * made or run.
 */
export function ownBwrap(host: SandboxHost): SandboxHost {
  if (host.tier !== "B" || Deno.build.os !== "linux") return host;
  try {
    if (Deno.statSync(host.bwrap).uid !== Deno.uid()) return host;
    const fd = sealedCopy(Deno.readFileSync(host.bwrap));
    if (fd === null) return host;
    const copy = `/proc/${Deno.pid}/fd/${fd}`;
    const runs = new Deno.Command(copy, { args: ["--version"], stdout: "null", stderr: "null" })
      .outputSync().success;
    return runs ? { ...host, bwrap: copy } : host;
  } catch {
    return host;
  }
}
