// Test fixture: tries TCP to the given loopback ports and to a global IPv6 address, and two
// kinds of DNS look-up, and prints one JSON object mapping each attempt to "refused" (a
// permission denial) or what happened. A permission denial comes at once; an attempt the
// permissions let through is given up after a few seconds (an unrouted address may never answer).
import { promises as dns } from "node:dns";

/** A global unicast IPv6 address (documentation prefix 2001:db8::/32: nothing answers it). */
const GLOBAL_V6 = "2001:db8::1";
const GIVE_UP_MS = 3000;

const [port4, port6] = Deno.args.map(Number);
const attempts: Record<string, () => Promise<unknown>> = {
  "tcp 127.0.0.1": () => Deno.connect({ hostname: "127.0.0.1", port: port4 }),
  "tcp ::1": () => Deno.connect({ hostname: "::1", port: port6 }),
  "tcp ::": () => Deno.connect({ hostname: "::", port: port6 }),
  "tcp localhost": () => Deno.connect({ hostname: "localhost", port: port4 }),
  [`tcp ${GLOBAL_V6}`]: () => Deno.connect({ hostname: GLOBAL_V6, port: 443 }),
  "Deno.resolveDns": () => Deno.resolveDns("localhost", "A"),
  "node:dns lookup": () => dns.lookup("localhost"),
};
const seen: Record<string, string> = {};
for (const [name, attempt] of Object.entries(attempts)) {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const result = await Promise.race([
      attempt(),
      new Promise((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`no answer within ${GIVE_UP_MS} ms`)),
          GIVE_UP_MS,
        );
      }),
    ]);
    if (name.startsWith("tcp ")) (result as Deno.Conn).close();
    seen[name] = "allowed";
  } catch (e) {
    const denied = e instanceof Deno.errors.NotCapable || /EPERM/.test(String(e));
    seen[name] = denied ? "refused" : `failed: ${e}`;
  } finally {
    clearTimeout(timer);
  }
}
console.log(JSON.stringify(seen));
// A connect given up on may still be pending.
Deno.exit(0);
