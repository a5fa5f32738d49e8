import { fileIdentity } from "../store/file_identity.ts";

/**
 * `<state>/kernel.log` (G-STATE-2), where a user is sent to read why: appended to, mode 0600,
 * and made again when it was removed under the kernel (its state directory cleared to start
 * afresh): the lines written after went to the removed file, read by nobody.
 */
export class KernelLog {
  #file: Deno.FsFile | null = null;
  /** The (device, inode) of the open file. */
  #identity: string | null = null;

  constructor(private readonly path: string) {
    this.#open();
  }

  /** Appends `bytes`, to a new file when the open one is no longer at the path. */
  write(bytes: Uint8Array): void {
    try {
      if (fileIdentity(this.path) !== this.#identity) this.#open();
      this.#file?.writeSync(bytes);
    } catch {
      // the state directory is unwritable: stderr has the line
    }
  }

  close(): void {
    this.#file?.close();
    this.#file = null;
  }

  #open(): void {
    this.close();
    this.#file = Deno.openSync(this.path, { create: true, append: true, mode: 0o600 });
    this.#identity = fileIdentity(this.path);
  }
}
