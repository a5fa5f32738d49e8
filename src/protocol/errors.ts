/** JSON-RPC and shoal error codes (SPEC §10). */
export const ErrorCode = {
  RPC_PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  NOT_ATTACHED: -32000,
  PARSE_ERROR: -32001,
  RAISED: -32002,
  UNKNOWN_REF: -32004,
  BAD_PATH_OR_SLICE: -32005,
  LEASH_DENIED: -32010,
  APPROVAL_REQUIRED: -32011,
  UNKNOWN_PLAN: -32012,
  TASK_CONTROL_UNAVAILABLE: -32020,
  UNKNOWN_TASK: -32021,
  UNKNOWN_PTY: -32022,
  PTY_SPAWN_FAILED: -32023,
  AUTH_FAILED: -32030,
  QUOTA_EXCEEDED: -32040,
} as const;

/** One of the numeric codes in {@link ErrorCode}, or any code a peer sent. */
export type ErrorCodeValue = number;

/** The JSON-RPC error object carried on the wire. */
export interface RpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

/** An error that becomes a JSON-RPC error response with a SPEC code. */
export class RpcError extends Error {
  constructor(
    readonly code: ErrorCodeValue,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = "RpcError";
  }

  /** The wire form of this error (no `data` member when there is none). */
  toObject(): RpcErrorObject {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }
}

/** A `-32602` error for params of the wrong shape, type or range. */
export function invalidParams(message: string, data?: unknown): RpcError {
  return new RpcError(ErrorCode.INVALID_PARAMS, message, data);
}

/** The `-32030` error of a token that is unknown, expired or revoked (K-ATTACH-2, T-TOK-4). */
export function tokenRejected(): RpcError {
  return new RpcError(ErrorCode.AUTH_FAILED, "token is unknown, expired or revoked");
}

/** A `-32040` error naming the quota that was hit (E-2). */
export function quotaExceeded(quota: string, limit: number): RpcError {
  return new RpcError(ErrorCode.QUOTA_EXCEEDED, `quota exceeded: ${quota}`, {
    quota,
    limit,
  });
}
