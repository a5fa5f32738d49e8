/** Test support: the error a request is expected to fail with. */
import { RpcError } from "../../src/protocol/errors.ts";

/** The error of class `type` that `p` rejects with; other errors are rethrown, a success fails. */
export async function rejection<E>(
  p: Promise<unknown>,
  type: new (...args: never[]) => E,
): Promise<E> {
  try {
    await p;
  } catch (e) {
    if (e instanceof type) return e;
    throw e;
  }
  throw new Error(`expected a ${type.name}`);
}

/** The RpcError a kernel request fails with; a success fails the test. */
export function rpcError(p: Promise<unknown>): Promise<RpcError> {
  return rejection(p, RpcError);
}
