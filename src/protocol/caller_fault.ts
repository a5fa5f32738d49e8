import { ErrorCode, RpcError } from "./errors.ts";

/**
 * A `-32603` the SPEC answers for a condition of the caller's own making, not a failure of the
 * kernel (K-PTY-2: input for a PTY whose program has ended). It is answered like any other but
 * not written to stderr and kernel.log as a diagnostic: a client repeating the call grew the log
 * by a line per call, without end (G-STATE-2).
 */
export class CallerFault extends RpcError {
  constructor(message: string, data?: unknown) {
    super(ErrorCode.INTERNAL_ERROR, message, data);
  }
}
