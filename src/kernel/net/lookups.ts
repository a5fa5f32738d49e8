/**
 * The proxy's name lookups (P-NET-1). The host's resolver (`/etc/hosts`, then DNS) runs on the
 * runtime's pool of blocking threads (Deno's: 32, which its file operations share too), and a
 * lookup DNS never answers holds its thread until the resolver gives up, however long after the
 * proxy stopped waiting. So lookups are bounded where they start: one per name at once (later
 * askers share it), at most {@link LOOKUP_SHARE} per principal and {@link LOOKUP_LIMIT} in all,
 * counted until the resolver returns; an agent whose granted name does not resolve can then
 * neither keep another session's lookups waiting nor the kernel's file work.
 */
import { lookup } from "node:dns/promises";
import { within } from "../../protocol/within.ts";

/** Most lookups the proxy has at the resolver at once: well under the blocking pool's 32. */
const LOOKUP_LIMIT = 8;
/** Most lookups of one principal at the resolver at once. */
const LOOKUP_SHARE = 2;

/** Whether a canonical host is an IP literal (`[v6]` or dotted IPv4), not a name. */
export function isLiteral(host: string): boolean {
  return host.startsWith("[") || /^[\d.]+$/.test(host);
}

/** The lookups the proxy has at the resolver. */
export class Lookups {
  /** Each name's lookup at the resolver, shared by whoever asks for it meanwhile. */
  #inFlight = new Map<string, Promise<string[]>>();
  #byPrincipal = new Map<string, number>();
  #total = 0;
  /** Who waits for a lookup to end (a place at the resolver to be free). */
  #waiting = new Set<() => void>();

  /**
   * The addresses canonical `host` stands for, in the resolver's order (IPv6 bare), asked for by
   * `principal`: an IP literal itself, a name what the resolver gives for it within `ms` (the
   * wait for a place at the resolver included), none when it gives none in time.
   */
  async addresses(principal: string, host: string, ms: number): Promise<string[]> {
    if (isLiteral(host)) return [host.startsWith("[") ? host.slice(1, -1) : host];
    const deadline = performance.now() + ms;
    const left = () => Math.max(0, deadline - performance.now());
    while (!this.#inFlight.has(host)) {
      const held = this.#byPrincipal.get(principal) ?? 0;
      if (this.#total < LOOKUP_LIMIT && held < LOOKUP_SHARE) {
        this.#start(principal, host);
        break;
      }
      let wake = () => {};
      const freed = new Promise<boolean>((resolve) => wake = () => resolve(true));
      this.#waiting.add(wake);
      const woken = await within(freed, left()) ?? false;
      this.#waiting.delete(wake);
      if (!woken) return [];
    }
    return await within(this.#inFlight.get(host)!, left()) ?? [];
  }

  #start(principal: string, host: string): void {
    this.#total++;
    this.#byPrincipal.set(principal, (this.#byPrincipal.get(principal) ?? 0) + 1);
    const found = lookup(host, { all: true, verbatim: true }).then(
      (entries) => entries.map((entry) => entry.address),
      () => [],
    ).finally(() => {
      this.#total--;
      const held = this.#byPrincipal.get(principal)! - 1;
      if (held === 0) this.#byPrincipal.delete(principal);
      else this.#byPrincipal.set(principal, held);
      this.#inFlight.delete(host);
      const waiting = [...this.#waiting];
      this.#waiting.clear();
      for (const wake of waiting) wake();
    });
    this.#inFlight.set(host, found);
  }
}
