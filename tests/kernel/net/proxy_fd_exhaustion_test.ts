/**
 * The proxy outlives a moment without file descriptors (P-NET-1): its accept loop once ended at
 * the first EMFILE, leaving its socket listening with nobody accepting, so every later connection
 * of that sandbox (a curl, an ssh) hung until the sandbox ended. Real NetProxy in this process, a
 * real client process, and prlimit(1) lowering this process's own descriptor limit for a moment.
 */
import assert from "node:assert/strict";
import { NetProxy } from "../../../src/kernel/net/proxy.ts";
import { PROXY_SOCKET } from "../../../src/kernel/net/inside.ts";
import { hostTest, needsLinux } from "../../_support/host.ts";

/**
 * Connects `argv[2]` times to the Unix socket `argv[1]` once told (a line), holds them until told
 * again, then closes them, and on a third line sends a SOCKS5 greeting and prints the reply in
 * hex ("none" when nothing comes within 5 s).
 */
const CLIENT = `
import socket, sys
path, count = sys.argv[1], int(sys.argv[2])
sys.stdin.readline()
held = []
for _ in range(count):
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    held.append(s)
print(len(held), flush=True)
sys.stdin.readline()
for s in held:
    s.close()
print("closed", flush=True)
sys.stdin.readline()
s = socket.socket(socket.AF_UNIX)
s.settimeout(5)
s.connect(path)
s.sendall(b"\\x05\\x01\\x00")
try:
    print(s.recv(2).hex() or "none", flush=True)
except OSError:
    print("none", flush=True)
`;

/** Sets this process's soft descriptor limit to each line it reads: prlimit runs from here. */
const LIMITER = 'while read -r n; do prlimit --pid "$1" --nofile="$n": && echo set; done';

/** Lines of a child's stdout, one by one. */
function lineReader(stream: ReadableStream<Uint8Array>): () => Promise<string> {
  const reader = stream.pipeThrough(new TextDecoderStream()).getReader();
  let pending = "";
  return async () => {
    while (!pending.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`ended before a line: ${pending}`);
      pending += value;
    }
    const line = pending.slice(0, pending.indexOf("\n"));
    pending = pending.slice(line.length + 1);
    return line;
  };
}

hostTest(
  "P-NET-1 the proxy accepts again once descriptors are back: 40 connections meet EMFILE on " +
    "its accept, and the next SOCKS5 greeting after they are freed is answered",
  needsLinux("prlimit and /proc/self/fd"),
  async () => {
    const dir = await Deno.makeTempDir({ prefix: "shoal-proxy-emfile-" });
    const proxy = new NetProxy(dir, () => {});
    const net = { principal: "agent:e", grants: ["example.com:443"], port: 3128, forwards: [] };
    const socket = `${proxy.endpoint("s", net).dir}/${PROXY_SOCKET}`;
    const spawn = (cmd: string, args: string[]) =>
      new Deno.Command(cmd, { args, stdin: "piped", stdout: "piped", stderr: "null" }).spawn();
    const client = spawn("python3", ["-c", CLIENT, socket, "40"]);
    const limiter = spawn("bash", ["-c", LIMITER, "bash", String(Deno.pid)]);
    const say = (child: Deno.ChildProcess) => {
      const writer = child.stdin.getWriter();
      return (line: string) => writer.write(new TextEncoder().encode(`${line}\n`));
    };
    const [toClient, toLimiter] = [say(client), say(limiter)];
    const [fromClient, fromLimiter] = [lineReader(client.stdout), lineReader(limiter.stdout)];
    const limit = Deno.readTextFileSync("/proc/self/limits").split("\n")
      .find((l) => l.startsWith("Max open files"))!.split(/\s+/)[3];
    try {
      const open = [...Deno.readDirSync("/proc/self/fd")].length;
      await toLimiter(String(open + 8));
      assert.equal(await fromLimiter(), "set");
      await toClient("go");
      assert.equal(await fromClient(), "40");
      // the proxy meets EMFILE accepting them (a few are accepted, and wait for a request)
      await new Promise((resolve) => setTimeout(resolve, 500));
      await toClient("close");
      assert.equal(await fromClient(), "closed");
      await toLimiter(limit);
      assert.equal(await fromLimiter(), "set");
      await toClient("again");
      assert.equal(await fromClient(), "0500", "the proxy answers a SOCKS5 greeting again");
    } finally {
      await toLimiter(limit).catch(() => {});
      for (const child of [client, limiter]) {
        await child.stdin.close().catch(() => {});
        try {
          child.kill("SIGKILL");
        } catch {
          // exited
        }
        await child.status;
        await child.stdout.cancel().catch(() => {});
      }
      proxy.closeAll();
      await Deno.remove(dir, { recursive: true });
    }
  },
);
