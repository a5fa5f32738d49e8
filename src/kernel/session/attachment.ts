import type { Grants } from "../policy/grants.ts";
import type { Session } from "./registry.ts";
import type { TranscriptValue } from "../values/spilled_outcome.ts";

/** Who a connection acts as, and in which session (K-ATTACH-*). */
export interface Attachment {
  session: Session<TranscriptValue>;
  principal: string;
  /**
   * The principal's grants, resolved at attach and again before each request and event when
   * the policy file changed (`KernelServices.refreshGrants`, M-ONB-1).
   */
  grants: Grants;
  profile: string;
  /** Renders keep ANSI escapes only for tty clients (V-RENDER-2). */
  tty: boolean;
  clientKind: string;
  /** The token's secret when attached with one, re-validated on every request (T-TOK-4). */
  token: string | null;
}
