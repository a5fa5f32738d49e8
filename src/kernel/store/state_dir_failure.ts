import { ErrorCode, RpcError } from "../../protocol/errors.ts";

/**
 * The `-32603` error of a run whose output or journal row could not be written to the state
 * directory (a full disk, a read-only mount): it names the directory, so the fix is plain.
 */
export function stateDirFailure(stateDir: string, what: string, cause: unknown): RpcError {
  const reason = cause instanceof Error ? cause.message : String(cause);
  return new RpcError(
    ErrorCode.INTERNAL_ERROR,
    `cannot write ${what} to the state directory ${stateDir}: ${reason}`,
  );
}
