/**
 * The files the kernel was started with beyond stdin, stdout and stderr (an MCP client's or a
 * terminal's that lacked close-on-exec) kept from every process it starts: a run entering a
 * sandbox through nsenter would otherwise hold, say, an open directory outside its view.
 */
import { markCloseOnExec } from "../bash/fd_calls.ts";

/** Marks every open fd from 3 up close-on-exec. */
export function keepInheritedFromChildren(): void {
  let listed: number[];
  try {
    // /proc/self/fd on Linux, the fdesc file system on macOS
    listed = [...Deno.readDirSync("/dev/fd")].map((e) => Number(e.name)).filter((fd) => fd > 2);
  } catch {
    return;
  }
  for (const fd of listed) markCloseOnExec(fd);
}
