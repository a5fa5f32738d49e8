import { journalQueryParams } from "../../journal/query_params.ts";
import { attached, type MethodSpec } from "../method.ts";

/** `journal.query` (K-JQ-1..4): attachment required and rows scoped to the caller (D-FIX-1). */
export const JOURNAL_METHODS: MethodSpec[] = [
  attached(
    "journal.query",
    journalQueryParams,
    ({ kernel, attachment }, p) =>
      kernel.journal.query(p, {
        principal: attachment.principal,
        journalRead: attachment.grants.canReadJournal,
      }),
  ),
];
