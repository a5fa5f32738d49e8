/** Linux inotify through FFI: the calls and the event bits the kernel's directory watches use. */

/** The inotify calls of the C library. */
export const INOTIFY_SYMBOLS = {
  inotify_init1: { parameters: ["i32"], result: "i32" },
  inotify_add_watch: { parameters: ["i32", "buffer", "u32"], result: "i32" },
  inotify_rm_watch: { parameters: ["i32", "i32"], result: "i32" },
} as const satisfies Deno.ForeignLibraryInterface;

/** IN_MOVED_FROM, IN_MOVED_TO, IN_CREATE, IN_DELETE, IN_DELETE_SELF, IN_MOVE_SELF. */
export const ENTRY_EVENTS = 0x40 | 0x80 | 0x100 | 0x200 | 0x400 | 0x800;
/** IN_ONLYDIR | IN_DONT_FOLLOW: a path that is no directory now (a symlink) takes no watch. */
export const ONLY_THIS_DIR = 0x01000000 | 0x02000000;
/** IN_Q_OVERFLOW: events were lost. */
export const OVERFLOW = 0x4000;
/** IN_IGNORED: the watch is gone (its directory removed, or the watch taken off). */
export const IGNORED = 0x8000;
