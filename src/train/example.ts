// The trainer's examples are the data views' (src/train/examples/types.ts, landed by learndata);
// this re-export keeps the trainer's imports working until learn points them there directly.
export type { Example, ExampleKind } from './examples/types.js';
