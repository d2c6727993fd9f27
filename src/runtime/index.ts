/**
 * Process-level helpers every layer may use:
 *   atomic-write.ts   a whole file written so a crash leaves the old file or the new one, never a mix
 *   cancel.ts         cooperative cancellation checkpoints for long synchronous loops (Ctrl-C)
 *   clock.ts          time passed in: the wall clock, or a virtual one for simulations and tests
 *   gc.ts             a full garbage collection on demand, for long streaming jobs
 *   node-version.ts   the oldest Node kourai runs on, read from package.json
 *   private-file.ts   files only the user can read (secrets), refused when others can
 *   process-alive.ts  whether a process id still runs
 *   seeded-random.ts  mulberry32, the seeded PRNG for randomness privacy does not depend on
 *   worker-start.ts   the one place worker threads are started, with the node flags they get
 *   worker-url.ts     where a worker thread's built script is, from sources or from dist/
 *
 * Nothing is re-exported here: importers name the file they need.
 */
export {};
