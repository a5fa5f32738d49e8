/** What the kernel knows about a captured stream stored in the CAS. */
export interface BlobInfo {
  /** `sha256:<64 hex>` of the stored bytes. */
  hash: string;
  /** Stored byte length. */
  len: number;
  /** Whether the stored bytes are valid UTF-8. */
  utf8: boolean;
  /** Unicode scalars in the stored bytes when `utf8`, else 0. */
  scalars: number;
  /** Number of `\n` bytes. */
  lines: number;
  /** Whether bytes beyond the capture cap were discarded (K-BASH-12). */
  truncated: boolean;
}

/** A finished capture: its blob, plus the bytes themselves when they are at most 16 MiB. */
export interface Captured {
  blob: BlobInfo;
  bytes: Uint8Array | null;
}
