/**
 * The memoir file: reading it, appending to it, and putting it right after a crash.
 *   reader.ts          streaming reads in bounded memory (records, line views, one line at an offset)
 *   row-loader.ts      many entries at known offsets, one descriptor per file
 *   memoir.ts          `Memoir`, the API for Node hosts (append and read)
 *   append.ts          validate a batch, then one O_APPEND write under the lock
 *   lock.ts            the writer lock (shared with Python hosts); lock-holder.ts names who holds it
 *   journal.ts         the append journal: what an interrupted batch wrote
 *   journal-status.ts  whether a journal is live or left over
 *   recover.ts         rolling an interrupted batch back; settling a torn last line
 *   repair.ts          `memoir repair`
 *   cut.ts             taking a byte range out of a memoir (into the quarantine)
 *   quarantine.ts      where bytes that leave a memoir are kept
 *   durable.ts         no-symlink opens, full writes, directory fsync
 *   discover.ts        where a forge's memoirs are, and which one a command means
 *   identify.ts        is this file a memoir
 *
 * Nothing is re-exported here: importers name the file they need, so a command loads only that.
 */
export {};
