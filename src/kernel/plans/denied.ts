import { ErrorCode, RpcError } from "../../protocol/errors.ts";

/** A -32010 refusal with its `reason` (K-PLAN-3, K-APPR-1). */
export function denied(
  reason: string,
  message: string,
  extra: Record<string, unknown> = {},
): RpcError {
  return new RpcError(ErrorCode.LEASH_DENIED, message, { reason, ...extra });
}
