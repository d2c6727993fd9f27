/**
 * The federation simulator (`federate simulate`): real councils, real training, simulated forges.
 *   experiment.ts        what an experiment compares, and its grid of cells
 *   run.ts               runs the grid seed by seed; finished cells are kept and resumed
 *   run-definition.ts    what else defines a run (a digest of the code a cell executes)
 *   cell.ts              one cell: R council rounds, cohorts as the council samples them
 *   aidos.ts             Aidos's slop-detection F1: federated vs a single forge, round by round
 *   slop-f1.ts           confusion counts, precision, recall and F1 (slop the positive class)
 *   forges.ts            a seed's simulated forges, built as a real forge's data is built
 *   forge-ledger.ts      each simulated forge's own Whisper ledger
 *   attacks.ts           the Byzantine attacks, as pure functions
 *   sim-privacy.ts       the real privacy mechanism with seeded noise
 *   council-port.ts      the council a round talks to: in this process, or over HTTP (http-council.ts)
 *   evaluate.ts          held-out evaluation of adapters
 *   cached-model.ts      the frozen base and encoder, each text encoded once
 *   train-pool.ts        a round's trainings side by side (train-worker.ts: one thread)
 *   summary.ts           results over seeds, and the design's claims as targets
 *   report/              the results as terminal text and as one HTML file
 *
 * Nothing is re-exported here: importers name the file they need.
 */
export {};
