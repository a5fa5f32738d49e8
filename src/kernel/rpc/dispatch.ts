import { ErrorCode, RpcError, type RpcErrorObject } from "../../protocol/errors.ts";
import type { RpcId } from "../../protocol/rpc.ts";
import { CallerFault } from "../../protocol/caller_fault.ts";
import type { ClientConnection } from "./client_connection.ts";
import type { KernelServices } from "./kernel_services.ts";
import type { AttachedContext, CallContext, MethodSpec } from "./method.ts";
import { METHODS } from "./table.ts";
import { zodMessage } from "./zod_message.ts";

/** Turns anything thrown by a handler into a JSON-RPC error object (SPEC §10). */
export function toErrorObject(e: unknown): RpcErrorObject {
  if (e instanceof RpcError) return e.toObject();
  const message = e instanceof Error ? e.message : String(e);
  return { code: ErrorCode.INTERNAL_ERROR, message: `internal error: ${message}` };
}

/** Runs one request through the method table: lookup, attachment, token, params, handler. */
export function dispatch(
  kernel: KernelServices,
  client: ClientConnection,
  id: RpcId,
  name: string,
  params: Record<string, unknown>,
): void {
  let pending: unknown;
  try {
    const spec: MethodSpec | undefined = METHODS.get(name);
    if (!spec) {
      throw new RpcError(ErrorCode.METHOD_NOT_FOUND, `method not found: ${name}`, {
        method: name,
      });
    }
    const ctx: CallContext = { kernel, conn: client, attachment: client.attachment };
    if (spec.attach) {
      if (!ctx.attachment) {
        throw new RpcError(ErrorCode.NOT_ATTACHED, `${name} requires session.attach first`);
      }
      kernel.revalidate(client);
    }
    const parsed = spec.params.safeParse(params);
    if (!parsed.success) {
      throw new RpcError(
        ErrorCode.INVALID_PARAMS,
        `invalid params for ${name}: ${zodMessage(parsed.error)}`,
      );
    }
    pending = spec.attach
      ? spec.handler(ctx as AttachedContext, parsed.data as never)
      : spec.handler(ctx, parsed.data as never);
  } catch (e) {
    client.fail(id, toErrorObject(e));
    return;
  }
  Promise.resolve(pending).then(
    (result) => client.respond(id, result),
    (e) => {
      const error = toErrorObject(e);
      const fault = error.code === ErrorCode.INTERNAL_ERROR && !(e instanceof CallerFault);
      if (fault) kernel.log(`${name}: ${error.message}`);
      return client.fail(id, error);
    },
  );
}
