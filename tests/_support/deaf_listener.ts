/**
 * Listeners that never accept: on one port at each of some loopback addresses, with a backlog
 * they fill themselves, so every further connect waits unanswered (a destination that drops
 * packets), for the proxy's dialing tests.
 */
import assert from "node:assert/strict";

const DEAF = String.raw`
import socket, sys
port = 0
held = []
for address in sys.argv[1:]:
    s = socket.socket()
    s.bind((address, port))
    s.listen(0)
    port = s.getsockname()[1]
    held.append(s)
    while True:
        c = socket.socket()
        c.settimeout(0.5)
        try:
            c.connect((address, port))
            held.append(c)
        except socket.timeout:
            break
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
