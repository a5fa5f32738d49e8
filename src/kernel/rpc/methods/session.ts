import { createHash } from "node:crypto";
import { z } from "zod";
import { ErrorCode, invalidParams, RpcError, tokenRejected } from "../../../protocol/errors.ts";
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
import { type Grants, resolveGrants } from "../../policy/grants.ts";
import { guardedName } from "../../session/guarded_names.ts";
import { moveSession } from "../../session/removed_cwd.ts";
import type { ComputedSandbox } from "../../exec/warm_shells.ts";

const attachParams = z.object({
  session: z.string().regex(SESSION_NAME, "invalid session name").nullish(),
  token: z.string().nullish(),
  client: z.object({
    kind: z.string().default(""),
    tty: z.boolean().default(false),
  }).nullish(),
  /** Where the session's shell is to be: the agent's project (M-ONB-1). */
  cwd: z.string().nullish(),
});

/**
 * Moves `session` into `dir` for an attach that asks for it (M-ONB-1), as a `cd` there would:
 * only for a principal allowed to change the session (`session_write`, else -32010), and for a
 * sandboxed one only into a directory its sandbox could be in (its real path, symlinks resolved;
 * else -32010 `cwd_outside_sandbox`): the session's cwd is where the human's next exec runs
 * (P-SBX-7); anything but an absolute path to an existing directory is -32602. Returns the
 * sandbox a sandboxed principal's run gets there, as just computed for that check.
 */
function enterDir(
  session: Attachment["session"],
  principal: string,
  grants: Grants,
  dir: string,
): ComputedSandbox | undefined {
  if (!grants.canWriteSession) {
    throw new RpcError(ErrorCode.LEASH_DENIED, "cwd on attach needs session_write", {
      reason: "session_write",
    });
  }
  let real: string | null = null;
  try {
    if (dir.startsWith("/") && Deno.statSync(dir).isDirectory) real = Deno.realPathSync(dir);
  } catch { /* judged below */ }
  if (real === null) throw invalidParams(`cwd is not an absolute path to a directory: ${dir}`);
  const sandbox = grants.sandboxed ? grants.sandboxFor(real) : null;
  if (grants.sandboxed && sandbox === null) {
    throw new RpcError(ErrorCode.LEASH_DENIED, "cwd on attach is outside the sandbox", {
      reason: "cwd_outside_sandbox",
      cwd: dir,
    });
  }
  moveSession({ session, principal }, dir);
  return sandbox === null ? undefined : { cwd: dir, sandbox };
}

/** `sha256:` of the exported environment as sorted `NAME=VALUE\0` pairs (K-ATTACH-4). */
function envHash(env: Map<string, string>): string {
  const hash = createHash("sha256");
  for (const name of [...env.keys()].sort()) hash.update(`${name}=${env.get(name)}\0`);
  return `sha256:${hash.digest("hex")}`;
}

/**
 * Which bus events this connection may see (K-EVT-8): without `journal_read`, its principal's
 * `journal` events and its session's `render` and `session.transcript` events, judged by its
 * grants under the policy in force. A connection whose token lapsed sees nothing and loses its
 * subscriptions at the next event, without waiting for a request (T-TOK-4). Token and policy
 * files are looked at once per turn of the event loop, not once per event: a read of the
 * durable journal judges each of its events, up to every one ever stored.
 */
function visibility(
  kernel: Pick<KernelServices, "tokenLapsed" | "bus" | "refreshGrants">,
  conn: ClientConnection,
  a: Attachment,
): (e: BusEvent) => boolean {
  let now: Grants | null | undefined; // null: the token lapsed; undefined: not looked at yet
  const current = (): Grants | null => {
    if (now === undefined) {
      now = kernel.tokenLapsed(conn) ? null : kernel.refreshGrants(a);
      queueMicrotask(() => now = undefined);
    }
    return now;
  };
  return (e) => {
    const grants = current();
    if (grants === null) return false;
    const journalRead = grants.canReadJournal;
    const approver = grants.isApprover;
    const owner = (e.payload as { principal?: unknown } | null)?.principal;
    if (e.channel === "journal" && !journalRead) {
      return owner === undefined || owner === a.principal;
    }
    if ((e.channel === "render" || e.channel === "session.transcript") && !journalRead) {
      return (e.payload as { session?: unknown } | null)?.session === a.session.name;
    }
    if (e.channel === "approval" && !approver) return owner === undefined || owner === a.principal;
    const audience = kernel.bus.audienceOf(e);
    if (audience && !journalRead) {
      return audience.session === a.session.name &&
        (audience.principal === undefined || audience.principal === a.principal ||
          a.principal === a.session.shell.owner);
    }
    return true;
  };
}

/**
 * The one owner whose stored events of a durable channel this connection may see (K-EVT-8), so
 * that its reads find them in storage without going through everyone's: without `journal_read`,
 * its principal's `journal` events and its session's `session.transcript` events.
 */
function storedOwner(
  kernel: Pick<KernelServices, "refreshGrants">,
  a: Attachment,
): (channel: string) => string | undefined {
  return (channel) => {
    if (kernel.refreshGrants(a).canReadJournal) return undefined;
    if (channel === "journal") return a.principal;
    return channel === "session.transcript" ? a.session.name : undefined;
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
        throw tokenRejected();
      }
      ({ principal, profile } = identity);
      tokenCaps = identity.caps;
    }
    const session = kernel.sessions.open(p.session ?? "default");
    const grants = resolveGrants(kernel.config, principal);
    const computed = p.cwd ? enterDir(session, principal, grants, p.cwd) : undefined;
    holdSession(kernel, conn, session);
    const attachment: Attachment = {
      session,
      principal,
      grants,
      profile,
      tty: p.client?.tty ?? false,
      clientKind: p.client?.kind ?? "",
      token: p.token ?? null,
    };
    conn.attachment = attachment;
    // the sandbox just computed for the project serves the warm shell's too: not computed again
    // (a sandboxed agent's first exec waited ~1.5 ms longer for its sandbox to start, issue 33)
    setTimeout(() => kernel.warm.prepare(attachment, computed), 0);
    conn.visible = visibility(kernel, conn, attachment);
    conn.storedOnly = storedOwner(kernel, attachment);
    const state = session.shell.view(principal);
    const caps = {
      ...attachment.grants.caps(profile, tokenCaps, attachment.token !== null),
      changed_config_env: session.shell.changedEnv(principal).filter(guardedName),
    };
    return {
      session: session.name,
      principal,
      caps,
      cwd: pathObject(cwdBytesOf(state)),
      env_hash: envHash(state.env),
      ast_version: 1,
      ast_lang: "bash",
      caps_enforced: caps.enforced,
      elide_defaults: { ...ELIDE_DEFAULTS, hard_cap: ELIDE_HARD_CAP },
      channels: ["session.transcript", "journal", "approval", "render"],
      kernel: { name: "shoal-kernel", version: VERSION },
    };
  }),
  attached("session.env", z.object({}), ({ attachment }) => {
    const env = attachment.session.shell.view(attachment.principal).env;
    const names = [...env.keys()].sort();
    const granted = attachment.grants.envReadGranted(names);
    return granted
      ? { granted, names, env: Object.fromEntries(names.map((n) => [n, env.get(n)])) }
      : { granted, names };
  }),
  attached("session.cwd", z.object({}), ({ attachment }) => ({
    cwd: pathObject(cwdBytesOf(attachment.session.shell.view(attachment.principal))),
  })),
  attached("session.reef", z.object({}), () => ({ active_scope: null, bindings: [] })),
];
