/**
 * `kourai adapters …`: adapter versions:
 *   commands.ts  the group's declarations
 *   shared.ts    the arguments the group shares, and the registry opened
 *   list.ts      `adapters list`: every version, the current ones marked
 *   show.ts      `adapters show`: one version in detail, checked whole
 *   diff.ts      `adapters diff`: how two versions differ
 *   export.ts    `adapters export`: a version copied in PEFT's file layout
 *   rollback.ts  `adapters rollback`: an earlier version made current again
 *   prune.ts     `adapters prune`: the files of old versions deleted, history kept
 *
 * Nothing is re-exported here: importers name the file they need.
 */
export {};
