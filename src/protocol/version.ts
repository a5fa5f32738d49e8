/** The version of both programs: `--version`, `initialize`'s serverInfo and `session.attach`'s kernel info. */
export const VERSION = "0.1.0";
