import { invalidParams } from "../../protocol/errors.ts";

/** What every channel name must match (K-EVT-1). */
export const CHANNEL_NAME = /^[A-Za-z0-9._:-]{1,128}$/;

/** Throws `-32602` unless `channel` is a valid channel name (K-EVT-1). */
export function assertChannelName(channel: string): void {
  if (!CHANNEL_NAME.test(channel)) {
    throw invalidParams("invalid channel name: must match ^[A-Za-z0-9._:-]{1,128}$");
  }
}
