/**
 * The per-OS PTY facts (issue 15): macOS's values checked here on Linux against the headers'
 * numbers, and this host's table against the constants its own Python reads from its C headers
 * (Linux here, macOS in the macOS CI job).
 */
import assert from "node:assert/strict";
import { cLibrary } from "../../../src/kernel/bash/c_library.ts";
import { ptyPlatform } from "../../../src/kernel/pty/platform.ts";

Deno.test("issue 15 macOS: libSystem and __error, BSD open flags, ioctl numbers and EAGAIN 35; arm64 pads the variadic ioctl", () => {
  const arm = ptyPlatform("darwin", "aarch64");
  assert.deepEqual(arm, {
    libc: "/usr/lib/libSystem.B.dylib",
    errnoFn: "__error",
    O_RDWR: 0x2,
    O_NOCTTY: 0x20000,
    O_NONBLOCK: 0x4,
    O_CLOEXEC: 0x1000000,
    TIOCSWINSZ: 0x80087467n,
    TIOCGWINSZ: 0x40087468n,
    EAGAIN: 35,
    EIO: 5,
    EINTR: 4,
    nfds: "u32",
    // x2..x7 filled, so the pointer is the first stack slot, where Apple arm64 reads a variadic one
    ioctlPadding: 6,
  });
  assert.deepEqual(ptyPlatform("darwin", "x86_64"), { ...arm, ioctlPadding: 0 });
});

Deno.test("issue 15 Linux: glibc and __errno_location, its flags, ioctls and EAGAIN 11 on both architectures", () => {
  const x86 = ptyPlatform("linux", "x86_64");
  assert.deepEqual(x86, {
    libc: "libc.so.6",
    errnoFn: "__errno_location",
    O_RDWR: 0o2,
    O_NOCTTY: 0o400,
    O_NONBLOCK: 0o4000,
    O_CLOEXEC: 0o2000000,
    TIOCSWINSZ: 0x5414n,
    TIOCGWINSZ: 0x5413n,
    EAGAIN: 11,
    EIO: 5,
    EINTR: 4,
    nfds: "u64",
    ioctlPadding: 0,
  });
  assert.deepEqual(ptyPlatform("linux", "aarch64"), x86);
});

Deno.test("issue 15: the C library mkfifo and the PTYs load: libSystem's install name on macOS; none for another OS, which has no PTY table either", () => {
  assert.equal(cLibrary("darwin"), "/usr/lib/libSystem.B.dylib");
  assert.equal(cLibrary("linux"), "libc.so.6");
  assert.equal(cLibrary("windows"), null);
  assert.equal(cLibrary("toString"), null);
  assert.throws(
    () => ptyPlatform("windows", "x86_64"),
    /pseudo-terminals are not supported on windows/,
  );
});

Deno.test("issue 15: this host's table agrees with the constants Python reads from its C headers", async () => {
  const script = "import os, termios, errno\n" +
    "print(os.O_RDWR, os.O_NOCTTY, os.O_NONBLOCK, os.O_CLOEXEC, termios.TIOCSWINSZ, " +
    "termios.TIOCGWINSZ, errno.EAGAIN, errno.EIO, errno.EINTR)";
  const out = await new Deno.Command("python3", { args: ["-c", script] }).output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  const host = new TextDecoder().decode(out.stdout).trim().split(" ").map(Number);
  const p = ptyPlatform(Deno.build.os, Deno.build.arch);
  assert.deepEqual(host, [
    p.O_RDWR,
    p.O_NOCTTY,
    p.O_NONBLOCK,
    p.O_CLOEXEC,
    Number(p.TIOCSWINSZ),
    Number(p.TIOCGWINSZ),
    p.EAGAIN,
    p.EIO,
    p.EINTR,
  ]);
});
