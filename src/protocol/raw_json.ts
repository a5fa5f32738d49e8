/** A JSON text embedded verbatim by `JSON.stringify` (TC39 JSON.parse source text access). */
export interface RawJSON {
  readonly rawJSON: string;
}

declare global {
  interface JSON {
    /** Wraps a JSON text so `JSON.stringify` emits it unchanged. */
    rawJSON(text: string): RawJSON;
    /** Whether a value was made by `JSON.rawJSON`. */
    isRawJSON(value: unknown): value is RawJSON;
  }
}
