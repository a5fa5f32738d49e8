import type { ScratchPool } from "../bash/scratch_pool.ts";
import type { EventBus } from "../events/bus.ts";
import type { Journal } from "../journal/journal.ts";
import type { NetProxy } from "../net/proxy.ts";
import type { Residents } from "../sandbox/residents.ts";
import type { Cas } from "../store/cas.ts";
import type { TaskRegistry } from "../tasks/registry.ts";
import type { WarmShells } from "./warm_shells.ts";
import type { Attachment } from "../session/attachment.ts";

/** The kernel services one run uses; `daemon/kernel.ts`'s `Kernel` provides them. */
export interface RunServices {
  readonly config: {
    readonly bash: string;
    /** Variables the bash binary defines by itself, never session state. */
    readonly bashVariables: ReadonlySet<string>;
  };
  readonly cas: Cas;
  readonly journal: Journal;
  readonly bus: EventBus;
  readonly tasks: TaskRegistry;
  readonly scratch: ScratchPool;
  readonly warm: WarmShells;
  /** The resident sandboxes sandboxed runs enter (P-SBX-4). */
  readonly residents: Residents;
  /** The proxy of sandboxed runs with a network: whose refusals a run collects (P-NET-2). */
  readonly net: NetProxy;
  /** Writes a diagnostic line to the kernel's log. */
  log(line: string): void;
  /** Makes the state directory's `tmp/` again when it was removed, and what lived in it afresh. */
  checkTmp(): void;
  /** Whether the attachment's token no longer validates: revoked, expired or unknown (T-TOK-4). */
  attachmentLapsed(attachment: Attachment): boolean;
}
