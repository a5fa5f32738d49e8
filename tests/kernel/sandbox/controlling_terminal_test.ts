/**
 * A kernel started from a terminal (`shoal-kernel` run in one to watch it, as the README says)
 * has that terminal as its controlling terminal; nothing in an agent's sandbox may have it, or a
 * process of the agent's that reaches such a process writes to it and types into it: commands
 * the human's shell there runs unconfined (SPEC §7.8 P-SBX-3).
 */
import assert from "node:assert/strict";
import { exec } from "../../_support/exec.ts";
import { launchKernel } from "../../_support/kernel.ts";
import { hostTest, NEEDS_TIER_B } from "../../_support/host.ts";
import { createToken, PROJECT_AGENT, writePolicy } from "../../_support/principals.ts";
import type { Rec } from "../../_support/rec.ts";
import { KERNEL_BIN, sandbox } from "../../_support/sandbox.ts";
import { delay } from "../../_support/wait.ts";

/**
 * Runs argv[2:] as the leader of a new session whose controlling terminal is a fresh PTY, as a
 * program started from a terminal has one, and logs what is written to that terminal (`OUT:`)
 * and typed into it (`IN:`) to argv[1].
 */
const ON_TERMINAL = String.raw`
import fcntl, os, pty, select, signal, sys, termios
log = open(sys.argv[1], "ab", buffering=0)
master, slave = pty.openpty()
pid = os.fork()
if pid == 0:
    os.setsid()
    fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
    os.close(master)
    os.execvp(sys.argv[2], sys.argv[2:])
signal.signal(signal.SIGTERM, lambda *_: os.kill(pid, signal.SIGTERM))
os.set_blocking(slave, False)
attrs = termios.tcgetattr(slave)
attrs[3] &= ~(termios.ICANON | termios.ECHO)
termios.tcsetattr(slave, termios.TCSANOW, attrs)
while os.waitpid(pid, os.WNOHANG)[0] == 0:
    for fd in select.select([master, slave], [], [], 0.1)[0]:
        try:
            log.write((b"OUT:" if fd == master else b"IN:") + os.read(fd, 4096) + b"\n")
        except OSError:
            pass
`;

/**
 * Run inside the sandbox on x86_64: attaches to the process argv[1] (same uid, not pid 1), makes
 * it open /dev/tty, write a line there and type another (TIOCSTI), then lets it go on.
 */
const TYPE_INTO_TERMINAL = String.raw`
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.restype = ctypes.c_long
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
class Regs(ctypes.Structure):
    _fields_ = [(n, ctypes.c_ulonglong) for n in ("r15 r14 r13 r12 rbp rbx r11 r10 r9 r8 rax rcx "
        "rdx rsi rdi orig_rax rip cs eflags rsp ss fs_base gs_base ds es fs gs").split()]
pid = int(sys.argv[1])
if libc.ptrace(16, pid, None, None) != 0:
    sys.exit("attach: " + os.strerror(ctypes.get_errno()))
os.waitpid(pid, 0)
saved = Regs()
libc.ptrace(12, pid, None, ctypes.byref(saved))
def poke(addr, data):
    data += b"\0" * (-len(data) % 8)
    for i in range(0, len(data), 8):
        word = int.from_bytes(data[i:i + 8], "little")
        libc.ptrace(5, pid, ctypes.c_void_p(addr + i), ctypes.c_void_p(word))
def call(nr, a=0, b=0, c=0):
    r = Regs()
    ctypes.memmove(ctypes.byref(r), ctypes.byref(saved), ctypes.sizeof(r))
    # the syscall instruction it stopped after, run again with these registers, no restart
    r.rax, r.rdi, r.rsi, r.rdx, r.orig_rax, r.rip = nr, a, b, c, 2**64 - 1, saved.rip - 2
    libc.ptrace(13, pid, None, ctypes.byref(r))
    libc.ptrace(9, pid, None, None)
    os.waitpid(pid, 0)
    out = Regs()
    libc.ptrace(12, pid, None, ctypes.byref(out))
    return ctypes.c_longlong(out.rax).value
buf = (saved.rsp - 4096) & ~15
poke(buf, b"/dev/tty\0")
fd = call(2, buf, 2)
poke(buf + 64, b"agent-wrote-here\n")
call(1, fd, buf + 64, 17)
for ch in b"agent-typed-here\n":
    poke(buf + 128, bytes([ch]))
    call(16, fd, 0x5412, buf + 128)
call(3, fd)
libc.ptrace(13, pid, None, ctypes.byref(saved))
libc.ptrace(17, pid, None, None)
print("open /dev/tty:", fd)
`;

hostTest(
  "P-SBX-3 nothing in an agent's sandbox has the terminal the kernel was started from: the agent's exec attached to the sandbox's launcher, which had it, and wrote to and typed into it (TIOCSTI), where the human's shell would run what it typed unconfined",
  NEEDS_TIER_B ?? (Deno.build.arch === "x86_64" ? null : "needs x86_64 for its ptrace injection"),
  async () => {
    const box = await sandbox();
    const proj = `${box.dir}/home/proj`;
    await Deno.mkdir(proj);
    const log = `${box.dir}/terminal.log`;
    await Deno.writeTextFile(`${box.dir}/on_terminal.py`, ON_TERMINAL);
    await Deno.writeTextFile(`${proj}/type.py`, TYPE_INTO_TERMINAL);
    const secret = (await createToken(box, "agent:a", "agent:a")).secret;
    const policy = await writePolicy(box, { "agent:a": PROJECT_AGENT });
    const socket = box.socket();
    const args = ["--socket", socket, "--policy", policy];
    const onTerminal = ["python3", `${box.dir}/on_terminal.py`, log, KERNEL_BIN];
    const k = await launchKernel(box, args, socket, {}, onTerminal);
    try {
      const human = await k.attach("work");
      await exec(human, `cd ${proj}`);
      const agent = await k.attach("work", secret);
      const ran = await exec(
        agent,
        [
          // field 7 of /proc/PID/stat: the controlling terminal's device, 0 for none
          'for s in /proc/[0-9]*/stat; do read -r -a f < "$s" && [ "${f[6]}" = 0 ] || echo "$s"; done',
          "python3 type.py $(pgrep -o -x launcher)",
        ].join("\n"),
        { position: "value" },
      );
      const out = ((ran.value as Rec).out as Rec).v as string;
      await delay(300);
      const terminal = await Deno.readTextFile(log).catch(() => "");
      assert.doesNotMatch(terminal, /agent-wrote|IN:a/, `the agent reached the terminal:\n${out}`);
      assert.doesNotMatch(out, /\/stat/, "a process in the sandbox has a controlling terminal");
      assert.match(
        out,
        /^open \/dev\/tty: -6$/m,
        "no process of the sandbox has a terminal (ENXIO)",
      );
    } finally {
      await k.cleanup();
    }
  },
);
