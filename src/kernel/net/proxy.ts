/**
 * The kernel's filtering proxy (P-NET-1, P-NET-2): one Unix socket per (session, principal,
 * grants), made on first need and closed when the last sandbox holding it ends, speaking HTTP
 * (absolute-URI requests and `CONNECT`) and SOCKS5 (no authentication, `CONNECT` with a name or
 * an IP). It connects only to granted destinations; every refusal is published on
 * `net.<session>` and handed to the runs watching it. Hand-written parsing: the protocols'
 * handshakes are a few bounded fields, and Deno has no std here.
 */
import { nowNs } from "../events/now_ns.ts";
import type { Audience } from "../events/bus_event.ts";
import {
  canonicalHost,
  destinationGranted,
  destinationText,
  refusedHost,
  resolvedAddressDenied,
  type SandboxNet,
} from "./destinations.ts";
import { CONNECT_SCRIPT } from "./connect_script.ts";
import { CONNECT_FILE, PROXY_SOCKET } from "./inside.ts";
import { CONNECT_MS, CONNECT_TOTAL_MS, connectFirst, type Unreachable } from "./dial.ts";
import { listenIn } from "./listen_in.ts";
import { isLiteral, Lookups } from "./lookups.ts";
import { madeIn } from "./made_in.ts";
import { rejectSocks4 } from "./socks4.ts";
import {
  bytesOf,
  byteText,
  closeQuietly,
  Head,
  HEAD_LIMIT,
  headEnd,
  linger,
  relay,
  writeAll,
} from "./relay.ts";

/** Most connections the proxy relays at once, over all its sockets. */
const CONNECTION_LIMIT = 512;
/**
 * Most connections one principal holds at once (over its sessions): an agent that opens and holds
 * hundreds (and reopens each one the handshake timeout closes) keeps the proxy to itself.
 */
const PRINCIPAL_LIMIT = 128;
/**
 * Most connections past a limit the proxy answers at once, each with a refusal naming that limit
 * (HTTP 503, SOCKS5 reply 1) once its request is read: beyond them, it closes them unanswered.
 */
const TURN_AWAY_LIMIT = 16;
/** Longest wait for the request head of a connection past a limit. */
const TURN_AWAY_MS = 5_000;
/** How long the proxy waits after a failed accept (no descriptor free) before trying again. */
const ACCEPT_RETRY_MS = 100;
/** Longest wait for a client's request head. */
const HANDSHAKE_MS = 30_000;
/** What a client speaking no protocol of the proxy's is told. */
const NOT_PROXIED = "shoal proxy: speaks HTTP (absolute http:// URLs and CONNECT) and SOCKS5\n";
/** Most distinct refusals one run's outcome lists (P-NET-2). */
const REFUSED_LIMIT = 100;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Publishes an event for its audience (the kernel's bus). */
export type Publish = (channel: string, payload: unknown, audience: Audience) => void;

interface Endpoint {
  session: string;
  net: SandboxNet;
  dir: string;
  listener: Deno.Listener;
  /** The sandboxes (residents, PTYs) holding it: at none, it is closed. */
  users: number;
  /**
   * Closes the connections it is serving, each its client and upstream: once it is closed no
   * sandbox is left to use them, while an upstream that says nothing would hold one open until
   * the idle limit, counted against its principal's share (a client's end reads as a half-close).
   */
  serving: Set<() => void>;
}

/** One sandbox's hold on a proxy socket: the directory bound into it, given back when it ends. */
export interface EndpointLease {
  dir: string;
  /** Gives the hold back (again: nothing). */
  release(): void;
}

/**
 * The `host`, `port` of an authority `host:port` or `[v6]:port` (`host` canonical), or null when
 * it names no port; `host` null when what stands before its port is no host (a control byte, a
 * zone id, past a DNS name's length): a destination still, which the proxy refuses visibly
 * (P-NET-2) as it does a SOCKS5 name that is no host.
 */
function authority(
  text: string,
  defaultPort: number | null,
): { host: string | null; name: string; port: number } | null {
  const m = /^(\[[^\]]*\]|[^:\[\]]*)(?::(\d{1,5}))?$/.exec(text) ??
    /^(.+):(\d{1,5})$/s.exec(text);
  if (m === null || m[1] === "") return null;
  const port = m[2] === undefined ? defaultPort : Number(m[2]);
  if (port === null || port < 1 || port > 65535) return null;
  // the loose form (`::1:443`, `a[b:443`) is never a host: an IPv6 literal is bracketed
  const strict = !m[1].includes(":") || m[1].startsWith("[");
  return { host: strict ? canonicalHost(m[1]) : null, name: m[1], port };
}

/** The host's own interface addresses, canonical (as {@link resolvedAddressDenied} takes them). */
function ownAddresses(): Set<string> {
  const own = new Set<string>();
  for (const { address } of Deno.networkInterfaces()) {
    const canon = canonicalHost(address);
    if (canon !== null) own.add(canon);
  }
  return own;
}

/**
 * An HTTP response with a plain-text body that closes the connection. A refusal's (`said`) body is
 * its reason phrase too (`403 Forbidden (shoal: … is not in the net_connect grants of …)`, in
 * printable ASCII): python, pip, wget, npm and Go print a refused answer's status line, not its
 * body (P-NET-2: every refusal is visible, to whoever reads the client's error as well).
 */
function response(status: string, body: string, said = false): Uint8Array {
  const bytes = encoder.encode(body);
  const phrase = said ? ` (${body.trim().replace(/[^ -~]/g, "?")})` : "";
  return encoder.encode(
    `HTTP/1.1 ${status}${phrase}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${bytes.length}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/**
 * Headers the proxy consumes or replaces before forwarding a request: `Host` becomes the URI's
 * authority, so a server hosting many names (a CDN) serves the granted one, never another named
 * only in the header; `Connection` says close, or stays as sent when it asks for an upgrade.
 */
const HOP_HEADERS = /^(proxy-connection|proxy-authorization|connection|keep-alive|host):/i;

/**
 * Why the proxy refused a destination: no grant matches it (`deniedAddress` null), or a granted
 * name leads only to addresses it may not, the first of them `deniedAddress`.
 */
interface Refusal {
  deniedAddress: string | null;
}

/**
 * What one client's connection has become: its upstream as soon as it is connected (so that it
 * is closed with the client, also when the client is gone before the proxy's answer reaches it),
 * and whether its request was forwarded (for {@link relay}).
 */
interface Flow {
  upstream: Deno.Conn | null;
  forwarded: boolean;
  /** Closes the client unless its request has come in time (cleared once it has). */
  handshake?: ReturnType<typeof setTimeout>;
  /** Why the connection is past a limit and its request is refused unconnected, else null. */
  busy: string | null;
}

/** A request refused because its connection is past a limit: why. */
interface Busy {
  busy: string;
}

/** The kernel's proxy: its sockets, and who watches for refusals. */
export class NetProxy {
  #endpoints = new Map<string, Endpoint>();
  /** The refusals each watching run collects, by (session, principal). */
  #watchers = new Map<string, Set<Set<string>>>();
  #connections = 0;
  #lookups = new Lookups();
  /** Connections past a limit being answered so. */
  #turningAway = 0;
  /** Connections being served, by principal. */
  #byPrincipal = new Map<string, number>();
  #closed = false;

  constructor(
    /** A private directory of the kernel, where each socket's own directory is made. */
    private readonly parent: string,
    private readonly publish: Publish,
  ) {}

  /**
   * A hold on the host directory holding the Unix socket of the proxy for `net` in `session`
   * (bound into a sandbox); its listener starts on the first hold and closes when the last is
   * given back, so each approved plan's run (its grants plus what was approved) leaves no
   * socket behind: a session of many such runs would hold a listener and a directory for each.
   */
  endpoint(session: string, net: SandboxNet): EndpointLease {
    if (this.#closed) throw new Error("the kernel is shutting down");
    const key = JSON.stringify([session, net.principal, net.grants]);
    let endpoint = this.#endpoints.get(key);
    if (endpoint === undefined) {
      const dir = madeIn(this.parent, `net-${Deno.pid}-`, "the proxy's socket directory");
      let listener: Deno.Listener;
      try {
        // 0600 whatever the kernel's umask (G-STATE-4): the sandbox's user is the kernel's
        Deno.writeTextFileSync(`${dir}/${CONNECT_FILE}`, CONNECT_SCRIPT, { mode: 0o600 });
        listener = listenIn(dir, PROXY_SOCKET);
        Deno.chmodSync(`${dir}/${PROXY_SOCKET}`, 0o600);
      } catch (e) {
        Deno.removeSync(dir, { recursive: true });
        throw e;
      }
      endpoint = { session, net, dir, listener, users: 0, serving: new Set() };
      this.#endpoints.set(key, endpoint);
      this.#accept(endpoint);
    }
    const held = endpoint;
    held.users++;
    let released = false;
    return {
      dir: held.dir,
      release: () => {
        if (released) return;
        released = true;
        if (--held.users === 0 && this.#endpoints.get(key) === held) this.#close(key, held);
      },
    };
  }

  /**
   * Starts collecting the refusals of `principal` in `session`; the returned function stops and
   * gives the distinct `host:port`s refused meanwhile (at most 100).
   */
  watch(session: string, principal: string): () => string[] {
    const key = JSON.stringify([session, principal]);
    const refused = new Set<string>();
    let set = this.#watchers.get(key);
    if (set === undefined) this.#watchers.set(key, set = new Set());
    set.add(refused);
    return () => {
      set!.delete(refused);
      if (set!.size === 0) this.#watchers.delete(key);
      return [...refused];
    };
  }

  /** Closes the session's sockets (its sandboxes are gone). */
  drop(session: string): void {
    for (const [key, endpoint] of this.#endpoints) {
      if (endpoint.session === session) this.#close(key, endpoint);
    }
  }

  /**
   * Closes every socket, whose directories went with the state directory's `tmp/`: the next
   * sandbox gets new ones instead of binding a directory that is gone.
   */
  restartAll(): void {
    for (const [key, endpoint] of this.#endpoints) this.#close(key, endpoint);
  }

  /** Closes every socket; no new one is made. */
  closeAll(): void {
    this.#closed = true;
    for (const [key, endpoint] of this.#endpoints) this.#close(key, endpoint);
  }

  #close(key: string, endpoint: Endpoint): void {
    this.#endpoints.delete(key);
    try {
      endpoint.listener.close();
    } catch {
      // closed already
    }
    for (const close of endpoint.serving) close();
    endpoint.serving.clear();
    try {
      Deno.removeSync(endpoint.dir, { recursive: true });
    } catch {
      // gone already
    }
  }

  async #accept(endpoint: Endpoint): Promise<void> {
    const { principal } = endpoint.net;
    const open = () => [...this.#endpoints.values()].includes(endpoint);
    while (true) {
      let conn: Deno.Conn;
      try {
        conn = await endpoint.listener.accept();
      } catch (e) {
        if (e instanceof Deno.errors.BadResource || e instanceof Deno.errors.Interrupted) return;
        // Out of file descriptors and the like: accepting again once some are back, instead of
        // leaving the socket listening with nobody accepting (every later connect would hang).
        await new Promise((resolve) => setTimeout(resolve, ACCEPT_RETRY_MS));
        if (!open()) return;
        continue;
      }
      const held = this.#byPrincipal.get(principal) ?? 0;
      if (this.#connections >= CONNECTION_LIMIT || held >= PRINCIPAL_LIMIT) {
        this.#turnAway(endpoint, conn, held >= PRINCIPAL_LIMIT);
        continue;
      }
      this.#connections++;
      this.#byPrincipal.set(principal, held + 1);
      this.#serve(endpoint, conn).finally(() => {
        this.#connections--;
        const left = this.#byPrincipal.get(principal)! - 1;
        if (left === 0) this.#byPrincipal.delete(principal);
        else this.#byPrincipal.set(principal, left);
      });
    }
  }

  /**
   * Answers a connection past its principal's share (`own`) or the proxy's limit with a refusal
   * saying so, a bounded number at once (P-NET-2: a client cut off unanswered cannot tell it from
   * a broken proxy or destination); closes it unanswered beyond that.
   */
  #turnAway(endpoint: Endpoint, conn: Deno.Conn, own: boolean): void {
    if (this.#turningAway >= TURN_AWAY_LIMIT) {
      closeQuietly(conn);
      return;
    }
    this.#turningAway++;
    const busy = own
      ? `${endpoint.net.principal} holds ${PRINCIPAL_LIMIT} proxy connections at once, its limit`
      : `the proxy relays ${CONNECTION_LIMIT} connections at once, its limit`;
    this.#serve(endpoint, conn, busy).finally(() => this.#turningAway--);
  }

  /**
   * Serves one client: its protocol told by its first byte (5: SOCKS5, 4: SOCKS4, which is
   * refused, a letter: HTTP); its request refused as `busy` says when that is not null.
   */
  async #serve(endpoint: Endpoint, client: Deno.Conn, busy: string | null = null): Promise<void> {
    const head = new Head(client);
    const flow: Flow = { upstream: null, forwarded: false, busy };
    const timer = flow.handshake = setTimeout(
      () => closeQuietly(client),
      busy === null ? HANDSHAKE_MS : TURN_AWAY_MS,
    );
    let closed = false;
    const close = () => {
      closed = true;
      closeQuietly(client);
      closeQuietly(flow.upstream);
    };
    endpoint.serving.add(close);
    try {
      if (!(await head.fill(1))) return;
      const first = head.buf[0];
      let upstream: Deno.Conn | null = null;
      if (first === 5) upstream = await this.#socks(endpoint, client, head, flow);
      else if (first === 4) await rejectSocks4(client, head);
      // an HTTP request starts with its method's letter; what does not (TLS sent to the proxy's
      // port) waits for no head
      else if (/[A-Za-z]/.test(String.fromCharCode(first))) {
        upstream = await this.#http(endpoint, client, head, flow);
      } else await writeAll(client, response("400 Bad Request", NOT_PROXIED));
      clearTimeout(timer);
      // not when its endpoint closed while the upstream was being connected
      if (upstream !== null && !closed) await relay(client, upstream, flow.forwarded);
      else if (upstream === null && !closed) await linger(client);
    } catch {
      // the client went away or sent what no protocol allows
    } finally {
      clearTimeout(timer);
      endpoint.serving.delete(close);
      closeQuietly(client);
      closeQuietly(flow.upstream);
    }
  }

  /**
   * A connection to `host:port` when it is granted, made only to addresses that a name may lead
   * to ({@link resolvedAddressDenied}, judged before any connection: a refused one never reaches
   * the host's service, and does not tell an open port from a closed one); a {@link Refusal}
   * (published and collected) when not granted or every address it resolves to is denied; an
   * {@link Unreachable} when the destination cannot be reached. A connection made is `flow`'s
   * upstream. The request has come: the handshake limit no longer applies, connecting has its own.
   */
  async #connect(
    endpoint: Endpoint,
    host: string,
    port: number,
    flow: Flow,
  ): Promise<Deno.Conn | Refusal | Busy | Unreachable> {
    if (flow.busy !== null) return { busy: flow.busy };
    clearTimeout(flow.handshake);
    const deadline = performance.now() + CONNECT_TOTAL_MS;
    const { grants } = endpoint.net;
    const canon = canonicalHost(host);
    if (canon === null || !destinationGranted(grants, canon, port)) {
      return this.#refuse(endpoint, host, port);
    }
    const addresses = await this.#lookups.addresses(endpoint.net.principal, canon, CONNECT_MS);
    const own = isLiteral(canon) ? new Set<string>() : ownAddresses();
    const allowed = isLiteral(canon)
      ? addresses
      : addresses.filter((address) => !resolvedAddressDenied(grants, canon, address, port, own));
    if (addresses.length > 0 && allowed.length === 0) {
      this.#refuse(endpoint, host, port);
      return { deniedAddress: canonicalHost(addresses[0]) ?? addresses[0] };
    }
    if (addresses.length === 0) {
      const why = `found no address for ${canon} (its lookup failed or took over ` +
        `${CONNECT_MS / 1000} s)`;
      return { unreachable: why, refused: false };
    }
    const conn = await connectFirst(allowed, port, deadline);
    return "unreachable" in conn ? conn : flow.upstream = conn;
  }

  /**
   * Publishes a refusal of `host:port` on `net.<session>` and hands it to the runs watching; what
   * a destination no grant matches is refused with.
   */
  #refuse(endpoint: Endpoint, host: string, port: number): Refusal {
    const { session, net } = endpoint;
    this.publish(`net.${session}`, {
      principal: net.principal,
      host: refusedHost(host),
      port,
      at: nowNs(),
    }, { session, principal: net.principal });
    const text = destinationText(host, port);
    for (const refused of this.#watchers.get(JSON.stringify([session, net.principal])) ?? []) {
      if (refused.size < REFUSED_LIMIT) refused.add(text);
    }
    return { deniedAddress: null };
  }

  /** SOCKS5 (RFC 1928) without authentication: the upstream once connected, else null. */
  async #socks(
    endpoint: Endpoint,
    client: Deno.Conn,
    head: Head,
    flow: Flow,
  ): Promise<Deno.Conn | null> {
    if (!(await head.fill(2)) || !(await head.fill(2 + head.buf[1]))) return null;
    const methods = head.take(2 + head.buf[1]).subarray(2);
    if (!methods.includes(0)) {
      await writeAll(client, new Uint8Array([5, 0xff]));
      return null;
    }
    await writeAll(client, new Uint8Array([5, 0]));
    if (!(await head.fill(5))) return null;
    const [version, command, , type] = head.buf;
    const addressLength = type === 1 ? 4 : type === 4 ? 16 : type === 3 ? 1 + head.buf[4] : -1;
    const reply = (code: number) =>
      writeAll(client, new Uint8Array([5, code, 0, 1, 0, 0, 0, 0, 0, 0]));
    if (version !== 5 || addressLength < 0) {
      await reply(8); // address type not supported
      return null;
    }
    if (!(await head.fill(4 + addressLength + 2))) return null;
    const request = head.take(4 + addressLength + 2);
    const address = request.subarray(4, 4 + addressLength);
    const port = (request[4 + addressLength] << 8) | request[5 + addressLength];
    let host: string;
    if (type === 1) host = address.join(".");
    else if (type === 3) host = decoder.decode(address.subarray(1));
    else {
      const groups = [];
      for (let i = 0; i < 16; i += 2) {
        groups.push(((address[i] << 8) | address[i + 1]).toString(16));
      }
      host = `[${groups.join(":")}]`;
    }
    if (command !== 1) {
      await reply(7); // command not supported
      return null;
    }
    const upstream = await this.#connect(endpoint, host, port, flow);
    if (upstream !== null && "busy" in upstream) {
      await reply(1); // general SOCKS server failure
      return null;
    }
    if (upstream !== null && "deniedAddress" in upstream) {
      await reply(2); // connection not allowed by ruleset
      return null;
    }
    if ("unreachable" in upstream) {
      await reply(upstream.refused ? 5 : 4); // connection refused, host unreachable
      return null;
    }
    await reply(0);
    if (head.buf.length > 0) await writeAll(upstream, head.take(head.buf.length));
    return upstream;
  }

  /**
   * HTTP proxying: `CONNECT host:port` tunnels, `http://` absolute URIs are forwarded (`flow`
   * says so, for {@link relay}).
   */
  async #http(
    endpoint: Endpoint,
    client: Deno.Conn,
    head: Head,
    flow: Flow,
  ): Promise<Deno.Conn | null> {
    let end = -1;
    for (let n = 1, scanned = 0; end < 0; n = head.buf.length + 1) {
      if (!(await head.fill(n))) {
        if (head.buf.length >= HEAD_LIMIT) {
          await writeAll(client, response("431 Request Header Fields Too Large", "too long\n"));
        }
        return null;
      }
      end = headEnd(head.buf, scanned - 3);
      scanned = head.buf.length;
    }
    // one character per byte: what is forwarded keeps the bytes sent; a host is read as UTF-8
    const [requestLine, ...headers] = byteText(head.take(end + 4).subarray(0, end)).split("\r\n");
    const utf8 = (text: string) => decoder.decode(bytesOf(text));
    const [method, target, version] = requestLine.split(" ");
    const bad = async (why: string) => {
      await writeAll(client, response("400 Bad Request", `shoal proxy: ${why}\n`));
      return null;
    };
    if (version === undefined || !/^HTTP\/1\.[01]$/.test(version)) return await bad("not HTTP/1.x");
    let destination: { host: string | null; name: string; port: number } | null;
    let forwarded: string | null = null;
    if (method === "CONNECT") {
      destination = authority(utf8(target), null);
      if (destination === null) return await bad("CONNECT needs host:port");
    } else {
      const m = /^http:\/\/([^/?#]*)(.*)$/i.exec(target);
      if (m === null) return await bad("only http:// URLs and CONNECT are proxied");
      destination = authority(utf8(m[1].slice(m[1].lastIndexOf("@") + 1)), 80);
      if (destination === null) return await bad("no host in the URL");
      const kept = headers.filter((line) => !HOP_HEADERS.test(line));
      const path = m[2].startsWith("/") ? m[2] : `/${m[2]}`;
      const host = `Host: ${m[1].slice(m[1].lastIndexOf("@") + 1)}`;
      // an upgrade asked for (a WebSocket over ws://) is still asked for: a 101 gives the
      // connection to that protocol with this destination; another answer says close (relay.ts)
      const upgrade = headers.some((line) => /^upgrade:/i.test(line))
        ? headers.find((line) => /^connection:.*\bupgrade\b/i.test(line))
        : undefined;
      const connection = upgrade ?? "Connection: close";
      forwarded = [`${method} ${path} ${version}`, host, ...kept, connection, "", ""].join("\r\n");
    }
    const { host, name, port } = destination;
    const upstream = host === null
      ? this.#refuse(endpoint, name, port)
      : await this.#connect(endpoint, host, port, flow);
    if (upstream !== null && "busy" in upstream) {
      const why = `shoal: ${upstream.busy}; close some and try again\n`;
      await writeAll(client, response("503 Service Unavailable", why, true));
      return null;
    }
    if (upstream !== null && "deniedAddress" in upstream) {
      const named = destinationText(host ?? name, port);
      const { principal } = endpoint.net;
      const why = upstream.deniedAddress === null
        ? `is not in the net_connect grants of ${principal}`
        : `resolves to ${upstream.deniedAddress}, which a name may lead to only when a ` +
          `net_connect grant of ${principal} names that address`;
      await writeAll(client, response("403 Forbidden", `shoal: ${named} ${why}\n`, true));
      return null;
    }
    if ("unreachable" in upstream) {
      const why = `shoal: cannot connect to ${
        destinationText(host!, port)
      }: ${upstream.unreachable}\n`;
      await writeAll(client, response("502 Bad Gateway", why, true));
      return null;
    }
    if (forwarded === null) {
      await writeAll(client, encoder.encode("HTTP/1.1 200 Connection Established\r\n\r\n"));
    } else {
      await writeAll(upstream, bytesOf(forwarded));
      flow.forwarded = true;
    }
    if (head.buf.length > 0) await writeAll(upstream, head.take(head.buf.length));
    return upstream;
  }
}
