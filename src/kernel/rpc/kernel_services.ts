import type { TokenStore } from "../auth/tokens.ts";
import type { RunServices } from "../exec/run_services.ts";
import type { PlanServices } from "../plans/plan_services.ts";
import type { Grants, GrantSource } from "../policy/grants.ts";
import type { PtyRegistry } from "../pty/registry.ts";
import type { SessionRegistry } from "../session/registry.ts";
import type { Attachment } from "../session/attachment.ts";
import type { TranscriptValue } from "../values/spilled_outcome.ts";
import type { ClientConnection } from "./client_connection.ts";

/**
 * The kernel services the method handlers reach through their call context;
 * `daemon/kernel.ts`'s `Kernel` implements them.
 */
export interface KernelServices extends RunServices, PlanServices {
  readonly config: RunServices["config"] & PlanServices["config"] & GrantSource;
  readonly sessions: SessionRegistry<TranscriptValue>;
  readonly tokens: TokenStore;
  readonly ptys: PtyRegistry;
  /** Whether a token-attached connection's token lapsed; its subscriptions end then (T-TOK-4). */
  tokenLapsed(conn: ClientConnection): boolean;
  /**
   * Re-checks an attached connection before a request: a lapsed token is -32030 (T-TOK-4); its
   * grants follow an edited policy.
   */
  revalidate(conn: ClientConnection): void;
  /** The attachment's grants under the policy in force now, kept in it (M-ONB-1). */
  refreshGrants(attachment: Attachment): Grants;
}
