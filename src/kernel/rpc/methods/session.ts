import { createHash } from "node:crypto";
import { z } from "zod";
import { ErrorCode, RpcError } from "../../../protocol/errors.ts";
import { ELIDE_DEFAULTS, ELIDE_HARD_CAP } from "../../../protocol/limits.ts";
import { SESSION_NAME } from "../../../protocol/socket_path.ts";
import { VERSION } from "../../../protocol/version.ts";
import type { Attachment } from "../../session/attachment.ts";
import type { ClientConnection } from "../client_connection.ts";
import type { BusEvent } from "../../events/bus_event.ts";
import type { KernelServices } from "../kernel_services.ts";
import { attached, type MethodSpec, unattached } from "../method.ts";
import { pathObject } from "../../values/path_object.ts";
import { cwdBytesOf } from "../../bash/shell_state.ts";
import { resolveGrants } from "../../policy/grants.ts";

const attachParams = z.object({
  session: z.string().regex(SESSION_NAME, "invalid session name").nullish(),
  token: z.string().nullish(),
  client: z.object({
    kind: z.string().default(""),
    tty: z.boolean().default(false),
  }).nullish(),
});

/** `sha256:` of the exported environment as sorted `NAME=VALUE\0` pairs (K-ATTACH-4). */
function envHash(env: Map<string, string>): string {
  const hash = createHash("sha256");
  for (const name of [...env.keys()].sort()) hash.update(`${name}=${env.get(name)}\0`);
  return `sha256:${hash.digest("hex")}`;
}

/**
 * Which bus events this connection may see (K-EVT-8): without `journal_read`, its principal's
 * `journal` events and its session's `render` and `session.transcript` events. A connection whose token lapsed sees
 * nothing and loses its subscriptions at the next event, without waiting for a request (T-TOK-4).
 */
function visibility(
  kernel: Pick<KernelServices, "tokenLapsed">,
  conn: ClientConnection,
  a: Attachment,
): (e: BusEvent) => boolean {
  const journalRead = a.grants.canReadJournal;
  const approver = a.grants.isApprover;
  return (e) => {
    if (kernel.tokenLapsed(conn)) return false;
    const owner = (e.payload as { principal?: unknown } | null)?.principal;
    if (e.channel === "journal" && !journalRead) {
      return owner === undefined || owner === a.principal;
    }
    if ((e.channel === "render" || e.channel === "session.transcript") && !journalRead) {
      return (e.payload as { session?: unknown } | null)?.session === a.session.name;
    }
    if (e.channel === "approval" && !approver) return owner === undefined || owner === a.principal;
    return true;
  };
}

/** What releases each connection's hold on its attached session (E-3). */
const releases = new WeakMap<ClientConnection, () => void>();

/**
 * Keeps `session` from being reclaimed while `conn` is attached to it (E-3): until the
 * connection closes or attaches again.
 */
function holdSession(
  kernel: Pick<KernelServices, "sessions">,
  conn: ClientConnection,
  session: Attachment["session"],
): void {
  releases.get(conn)?.();
  const release = kernel.sessions.hold(session);
  const unregister = conn.onClose(release);
  releases.set(conn, () => {
    unregister();
    release();
  });
}

/** `session.attach` and the session views (K-ATTACH-*, K-SESS-*). */
export const SESSION_METHODS: MethodSpec[] = [
  unattached("session.attach", attachParams, ({ kernel, conn }, p) => {
    let principal = kernel.config.localHuman;
    let profile = "local-human";
    let tokenCaps: string[] = [];
    if (p.token) {
      const identity = kernel.tokens.validate(p.token);
      if (!identity) {
        throw new RpcError(ErrorCode.AUTH_FAILED, "token is unknown, expired or revoked");
      }
      ({ principal, profile } = identity);
      tokenCaps = identity.caps;
    }
    const session = kernel.sessions.open(p.session ?? "default");
    holdSession(kernel, conn, session);
    const attachment: Attachment = {
      session,
      principal,
      grants: resolveGrants(kernel.config, principal),
      profile,
      tty: p.client?.tty ?? false,
      clientKind: p.client?.kind ?? "",
      token: p.token ?? null,
    };
    conn.attachment = attachment;
    setTimeout(() => kernel.warm.prepare(attachment), 0);
    conn.visible = visibility(kernel, conn, attachment);
    const caps = attachment.grants.caps(profile, tokenCaps, attachment.token !== null);
    return {
      session: session.name,
      principal,
      caps,
      cwd: pathObject(cwdBytesOf(session.state)),
      env_hash: envHash(session.state.env),
      ast_version: 1,
      ast_lang: "bash",
      caps_enforced: caps.enforced,
      elide_defaults: { ...ELIDE_DEFAULTS, hard_cap: ELIDE_HARD_CAP },
      channels: ["session.transcript", "journal", "approval", "render"],
      kernel: { name: "shoal-kernel", version: VERSION },
    };
  }),
  attached("session.env", z.object({}), ({ attachment }) => {
    const env = attachment.session.state.env;
    const names = [...env.keys()].sort();
    const granted = attachment.grants.envReadGranted(names);
    return granted
      ? { granted, names, env: Object.fromEntries(names.map((n) => [n, env.get(n)])) }
      : { granted, names };
  }),
  attached("session.cwd", z.object({}), ({ attachment }) => ({
    cwd: pathObject(cwdBytesOf(attachment.session.state)),
  })),
  attached("session.reef", z.object({}), () => ({ active_scope: null, bindings: [] })),
];
