/** A JSON object, as tests read requests, replies and events. */
export type Rec = Record<string, unknown>;
