/**
 * Which destinations a sandboxed principal reaches (P-NET-1): `host:port` grants matched as
 * P-EVAL-1 matches them, IP literals only against grants naming that IP, and the loopback grants
 * whose port is forwarded as raw TCP.
 */

/** What the network of one sandboxed run is: whose it is and the destinations it may reach. */
export interface SandboxNet {
  principal: string;
  /** `hostglob:port` grants (the policy's, plus those an approved plan adds). */
  grants: readonly string[];
  /** The loopback port inside the namespace where the proxy is reached. */
  port: number;
  /** Loopback grants with an explicit port, forwarded as raw TCP to the host's loopback. */
  forwards: readonly LoopbackForward[];
}

/** One forwarded loopback port: listened on at `listen` inside, connected to `host` outside. */
export interface LoopbackForward {
  listen: "127.0.0.1" | "::1";
  port: number;
  host: string;
}

/** The first port tried for the proxy's listener inside the namespace. */
const PROXY_PORT = 3128;

/** The longest DNS name (RFC 1035: 255 octets on the wire), and so the longest host. */
const NAME_LIMIT = 253;

/**
 * A destination host in one form (lower case; an IP literal dotted or bracketed, the WHATWG URL
 * host parser's: `2130706433` and `0x7f.1` are `127.0.0.1`), or null when it is no host (longer
 * than a DNS name can be among them: a refusal names it, and must stay bounded; or holding `*`,
 * unless it is a grant's `glob`).
 */
export function canonicalHost(host: string, glob = false): string | null {
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  if (bare === "" || /[\s/?#@\\%]/.test(bare)) return null;
  // a grant's wildcard is no character of a host: a refusal naming one would read as a grant
  if (!glob && bare.includes("*")) return null;
  try {
    const parsed = new URL(`http://${bare.includes(":") ? `[${bare}]` : bare}/`).hostname;
    return parsed === "" || parsed.replace(/\.$/, "").length > NAME_LIMIT ? null : parsed;
  } catch {
    return null;
  }
}

/** Whether a canonical host is an IP literal. */
function isIpLiteral(host: string): boolean {
  return host.startsWith("[") || /^\d+\.\d+\.\d+\.\d+$/.test(host);
}

/** The host part of a `host:port` grant (as written). */
function grantHost(grant: string): string {
  return grant.slice(0, Math.max(grant.lastIndexOf(":"), 0));
}

/**
 * Whether a grant names `localhost`, written fully qualified (`localhost.`, its root's dot) or not:
 * the same name to the analysis ({@link netGrantMatches}), so to its forward and its loopback too.
 */
function namesLocalhost(grant: string): boolean {
  return canonicalHost(grantHost(grant))?.replace(/\.$/, "") === "localhost";
}

/**
 * Whether `grants` let a connection to `host:port` through (P-NET-1): a name by P-EVAL-1's
 * matcher, an IP literal only by a grant naming that same IP.
 */
export function destinationGranted(grants: readonly string[], host: string, port: number): boolean {
  const canon = canonicalHost(host);
  if (canon === null || !(port >= 1 && port <= 65535)) return false;
  if (!isIpLiteral(canon)) return grants.some((grant) => netGrantMatches(grant, canon, port));
  return grants.some((grant) =>
    canonicalHost(grantHost(grant)) === canon && netGrantMatches(grant, canon, port)
  );
}

/** What stands for the middle of a refused non-host cut to {@link NAME_LIMIT}: an escaped `…`. */
const CUT = "%E2%80%A6";

/**
 * A host as a refusal names it (P-NET-2): canonical, or, when it is no host at all (a SOCKS5 name
 * is any 255 bytes, an HTTP one any 16 KiB), its UTF-8 with every byte but letters, digits, `.`,
 * `-` and `_` percent-escaped, so what a client sent can neither pass for another destination
 * (`github.com:443 …`) nor carry terminal controls into a refusal a person reads; at most
 * {@link NAME_LIMIT} characters either way (a longer escape keeps its start and its end around an
 * escaped `…`), so that 100 of them in an outcome stay far below V-ELIDE-2's 64 KiB.
 */
export function refusedHost(host: string): string {
  const canon = canonicalHost(host);
  if (canon !== null) return canon;
  const pieces = [...new TextEncoder().encode(host)].map((byte) => {
    const char = String.fromCharCode(byte);
    return /[A-Za-z0-9._-]/.test(char)
      ? char
      : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  });
  const text = pieces.join("");
  if (text.length <= NAME_LIMIT) return text;
  const half = Math.floor((NAME_LIMIT - CUT.length) / 2);
  const ends = (from: string[]) => {
    const kept: string[] = [];
    for (let length = 0; length + from[kept.length].length <= half;) {
      length += from[kept.length].length;
      kept.push(from[kept.length]);
    }
    return kept;
  };
  return ends(pieces).join("") + CUT + ends(pieces.toReversed()).toReversed().join("");
}

/** `host:port` as a refusal names it (an IPv6 literal bracketed, {@link refusedHost}). */
export function destinationText(host: string, port: number): string {
  return `${refusedHost(host)}:${port}`;
}

/**
 * Cloud metadata and platform endpoints outside link-local space (sandbox-runtime's list), IPv4
 * dotted and IPv6 canonical; `fd00:ec2::/32` (AWS's IPv6 service block) is matched as a prefix.
 */
const METADATA_V4 = new Set(["100.100.100.200", "168.63.129.16", "192.0.0.192"]);
const METADATA_V6 = new Set([
  "[fd20:ce::254]",
  "[fd00:c1::a9fe:a9fe]",
  "[fd00:42::42]",
  "[fd00:a9fe:a9fe::1]",
  "[fd00:100::100:200]",
]);

/** The eight 16-bit groups of a canonical IPv6 literal (`[64:ff9b::7f00:1]`, all hex). */
function ipv6Groups(canon: string): number[] {
  const [head, tail] = canon.slice(1, -1).split("::");
  const part = (text: string | undefined) => text ? text.split(":") : [];
  const written = [...part(head), ...part(tail)];
  const zeros = tail === undefined ? [] : Array(8 - written.length).fill("0");
  return [...part(head), ...zeros, ...part(tail)].map((group) => parseInt(group, 16));
}

/**
 * The IPv4 address a canonical host reaches: itself when dotted; the one an IPv6 form carries,
 * which whatever translates it delivers to (IPv4-mapped `::ffff:0:0/96`, IPv4-translated
 * `::ffff:0:0:0/96`, IPv4-compatible `::/96`, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`); else null.
 */
function carriedV4(canon: string): string | null {
  if (/^\d+\.\d+\.\d+\.\d+$/.test(canon)) return canon;
  if (!canon.startsWith("[")) return null;
  const g = ipv6Groups(canon);
  const zero = (from: number, to: number) => g.slice(from, to).every((group) => group === 0);
  const quad = (hi: number, lo: number) => [hi >> 8, hi & 255, lo >> 8, lo & 255].join(".");
  if (g[0] === 0x2002) return quad(g[1], g[2]);
  const carried = (zero(0, 5) && (g[5] === 0 || g[5] === 0xffff)) ||
    (zero(0, 4) && g[4] === 0xffff && g[5] === 0) ||
    (g[0] === 0x64 && g[1] === 0xff9b && zero(2, 6));
  return carried ? quad(g[6], g[7]) : null;
}

/**
 * Whether an address a granted name resolved to is one the name may not lead to: loopback,
 * unspecified, link-local (cloud metadata), multicast, broadcast, another cloud metadata endpoint,
 * or one of `own` (the host's own interface addresses, canonical: a server on its 0.0.0.0 is the
 * host's too), or an IPv6 form carrying such an IPv4 address ({@link carriedV4}) — unless that
 * address itself is granted, or the name is `localhost`, the address loopback and a grant names
 * `localhost` (sandbox-runtime's resolved-address guard: whoever controls a granted name's DNS
 * must not reach the host's own services through it).
 */
export function resolvedAddressDenied(
  grants: readonly string[],
  name: string,
  address: string,
  port: number,
  own: ReadonlySet<string> = new Set(),
): boolean {
  const canon = canonicalHost(address);
  if (canon === null) return true;
  if (destinationGranted(grants, canon, port)) return false;
  const v4 = carriedV4(canon);
  let special = canon === "[::1]" || canon === "[::]" || /^\[fe[89ab]/.test(canon) ||
    /^\[ff/.test(canon) || /^\[fd00:ec2:/.test(canon) || METADATA_V6.has(canon) || own.has(canon);
  if (v4 !== null) {
    const [a, b] = v4.split(".").map(Number);
    special ||= a === 127 || a === 0 || (a === 169 && b === 254) || a >= 224 ||
      METADATA_V4.has(v4) || own.has(v4);
  }
  if (!special) return false;
  // the carried form only adds refusals: `localhost` leads to loopback as itself (or mapped)
  const loopback = canon === "[::1]" || /^(\[::ffff:7f|127\.)/.test(canon);
  return !(loopback && canonicalHost(name)?.replace(/\.$/, "") === "localhost" &&
    grants.some((grant) => namesLocalhost(grant) && netGrantMatches(grant, "localhost", port)));
}

/**
 * The loopback grants with an explicit port (P-NET-1's exception), once each per address inside:
 * `localhost` on both, since a client may reach it as either (one resolving it to ::1 first).
 */
function loopbackForwards(grants: readonly string[]): LoopbackForward[] {
  const forwards = new Map<string, LoopbackForward>();
  for (const grant of grants) {
    const port = Number(grant.slice(grant.lastIndexOf(":") + 1));
    if (!/^\d+$/.test(grant.slice(grant.lastIndexOf(":") + 1)) || port < 1 || port > 65535) {
      continue;
    }
    const host = namesLocalhost(grant) ? "localhost" : canonicalHost(grantHost(grant));
    const listens: LoopbackForward["listen"][] = host === "[::1]"
      ? ["::1"]
      : host === "127.0.0.1"
      ? ["127.0.0.1"]
      : host === "localhost"
      ? ["127.0.0.1", "::1"]
      : [];
    for (const listen of listens) {
      const key = `${listen} ${port}`;
      if (!forwards.has(key)) {
        forwards.set(key, { listen, port, host: host === "[::1]" ? "::1" : host! });
      }
    }
  }
  return [...forwards.values()];
}

/**
 * The network of a sandboxed run of `principal` with `grants`: with none it still gets the proxy,
 * which refuses every destination, so a fetch the static layer could not see is refused naming
 * the destination and the grant to add (M-ONB-3: the printed project profile grants none), not
 * failed as an unknown host (npm retried that for 70 s). The proxy's loopback port is the first
 * from {@link PROXY_PORT} that no forward takes and no `net_listen` grant (`listen`, port numbers
 * or `*`) names: those ports stay the principal's.
 */
export function sandboxNet(
  principal: string,
  grants: readonly string[],
  listen: readonly string[] = [],
): SandboxNet {
  const forwards = loopbackForwards(grants);
  let port = PROXY_PORT;
  while (forwards.some((f) => f.port === port) || listen.includes(String(port))) port++;
  return { principal, grants: [...grants], port, forwards };
}

/**
 * A grant's host glob in the form hosts are matched in: an internationalized name (`bücher.example`,
 * `*.bücher.example`) as the URL parser, and so every client and the static analysis, sends it
 * (`xn--bcher-kva.example`); any other glob lower-cased as written.
 */
function globForm(hostGlob: string): string {
  // deno-lint-ignore no-control-regex
  if (/^[\x00-\x7f]*$/.test(hostGlob)) return hostGlob.toLowerCase();
  return canonicalHost(hostGlob, true) ?? hostGlob.toLowerCase();
}

/**
 * A grant's IPv6 literal (`::1`, `[::1]`, `[0:0::1]`) in the one form destinations are named in
 * (`[::1]`), any other text as it is: a grant may be written either way.
 */
function ipv6Form(text: string): string {
  if (!text.includes(":") || text.includes("*")) return text;
  const canonical = canonicalHost(text);
  return canonical?.startsWith("[") ? canonical : text;
}

/**
 * Whether a `hostglob:port` grant matches a connection (P-EVAL-1) to `host`, named as the
 * analysis and the proxy name a destination ({@link canonicalHost}). A name written fully
 * qualified (`granted.example.`, its root's dot) is that name, on either side.
 */
export function netGrantMatches(grant: string, host: string, port: number): boolean {
  const colon = grant.lastIndexOf(":");
  if (colon < 0) return false;
  const hostGlob = ipv6Form(globForm(grant.slice(0, colon))).replace(/([^.])\.$/, "$1");
  const portText = grant.slice(colon + 1);
  // a port as the policy takes it (digits, leading zeros too: `05432`, whose forward is 5432)
  if (portText !== "*" && Number(portText) !== port) return false;
  const parts = hostGlob.split("*").map((part) => part.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&"));
  const name = host.toLowerCase().replace(/([^.])\.$/, "$1");
  return new RegExp(`^${parts.join(".*")}$`, "s").test(name);
}
