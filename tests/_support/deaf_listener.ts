/**
 * Listeners that never accept: on one port at each of some loopback addresses, with a backlog
 * they fill themselves, so every further connect waits unanswered (a destination that drops
 * packets), for the proxy's dialing tests (Linux: the accept queue is read in /proc/net/tcp).
 */
import assert from "node:assert/strict";

// Linux queues one connection more than a listener's backlog (0 here) and drops every further
// SYN; the queue's length is a listening socket's rx_queue in /proc/net/tcp. One connect per
// address fills it, seen there: not waiting out a connect that hangs, 0.5 s an address.
const DEAF = String.raw`
import socket, struct, sys, time
def queued(address, port):
    local = "%08X:%04X" % (struct.unpack("=I", socket.inet_aton(address))[0], port)
    for line in open("/proc/net/tcp").read().splitlines()[1:]:
        f = line.split()
        if f[1] == local and f[3] == "0A":
            return int(f[4].split(":")[1], 16)
    return 0
port = 0
held = []
for address in sys.argv[1:]:
    s = socket.socket()
    s.bind((address, port))
    s.listen(0)
    port = s.getsockname()[1]
    held.append(s)
    c = socket.socket()
    c.settimeout(10)
    c.connect((address, port))
    held.append(c)
    deadline = time.monotonic() + 10
    while queued(address, port) < 1:
        if time.monotonic() > deadline:
            sys.exit("the accept queue of %s:%d stayed empty" % (address, port))
        time.sleep(0.005)
print(port, flush=True)
sys.stdin.read()
`;

/** Deaf listeners on `addresses` (a python3 process), their port, and what stops them. */
export async function deafListeners(
  addresses: readonly string[],
): Promise<{ port: number; stop: () => Promise<void> }> {
  const deaf = new Deno.Command("python3", {
    args: ["-c", DEAF, ...addresses],
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const stop = async () => {
    deaf.kill("SIGKILL");
    await deaf.status;
    await deaf.stdout.cancel().catch(() => {});
    await deaf.stdin.close().catch(() => {});
  };
  const line = await deaf.stdout.pipeThrough(new TextDecoderStream()).getReader().read();
  const port = Number(line.value?.trim());
  if (!(port > 0)) await stop();
  assert.ok(port > 0, line.value);
  return { port, stop };
}
