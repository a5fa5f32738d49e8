import type { z } from "zod";

/** A one-line description of why params failed their schema. */
export function zodMessage(error: z.ZodError): string {
  return error.issues
    .map((i) => (i.path.length ? `${i.path.join(".")}: ` : "") + i.message)
    .join("; ");
}
