// Test fixture: tries TCP to the given loopback ports and two kinds of DNS look-up, and prints
// one JSON object mapping each attempt to "refused" (a permission denial) or what happened.
import { promises as dns } from "node:dns";

const [port4, port6] = Deno.args.map(Number);
const attempts: Record<string, () => Promise<unknown>> = {
  "tcp 127.0.0.1": () => Deno.connect({ hostname: "127.0.0.1", port: port4 }),
  "tcp ::1": () => Deno.connect({ hostname: "::1", port: port6 }),
  "tcp ::": () => Deno.connect({ hostname: "::", port: port6 }),
  "tcp localhost": () => Deno.connect({ hostname: "localhost", port: port4 }),
  "Deno.resolveDns": () => Deno.resolveDns("localhost", "A"),
  "node:dns lookup": () => dns.lookup("localhost"),
};
const seen: Record<string, string> = {};
for (const [name, attempt] of Object.entries(attempts)) {
  try {
    const result = await attempt();
    if (name.startsWith("tcp ")) (result as Deno.Conn).close();
    seen[name] = "allowed";
  } catch (e) {
    const denied = e instanceof Deno.errors.NotCapable || /EPERM/.test(String(e));
    seen[name] = denied ? "refused" : `failed: ${e}`;
  }
}
console.log(JSON.stringify(seen));
