import type { z } from "zod";
import type { Attachment } from "../session/attachment.ts";
import type { ClientConnection } from "./client_connection.ts";
import type { KernelServices } from "./kernel_services.ts";

/** What every handler receives about its caller (G-TRUST-5). */
export interface CallContext {
  kernel: KernelServices;
  conn: ClientConnection;
  attachment: Attachment | null;
}

/** The caller of a method that requires attachment. */
export interface AttachedContext extends CallContext {
  attachment: Attachment;
}

/** One row of the kernel's method table: name, attachment rule, params schema, handler. */
export type MethodSpec =
  | {
    name: string;
    attach: true;
    params: z.ZodTypeAny;
    handler: (ctx: AttachedContext, params: never) => unknown;
  }
  | {
    name: string;
    attach: false;
    params: z.ZodTypeAny;
    handler: (ctx: CallContext, params: never) => unknown;
  };

/** A row for a method that requires attachment, with params typed by its schema. */
export function attached<S extends z.ZodTypeAny>(
  name: string,
  params: S,
  handler: (ctx: AttachedContext, params: z.infer<S>) => unknown,
): MethodSpec {
  return { name, attach: true, params, handler };
}

/** A row for a method that works without attachment (`session.attach`, `parse`, `complete`). */
export function unattached<S extends z.ZodTypeAny>(
  name: string,
  params: S,
  handler: (ctx: CallContext, params: z.infer<S>) => unknown,
): MethodSpec {
  return { name, attach: false, params, handler };
}
