/**
 * Local learning: the frozen base, LoRA adapters, training and inference:
 *   base-spec.ts               the published specification of the frozen base every forge shares
 *   base-model.ts              the frozen base generated from its specification
 *   counter-random.ts          the counter-based generator the base weights come from
 *   fingerprint.ts             the built-in base's published fingerprint
 *   configured-base.ts         the configured base without contacting an endpoint
 *   text-encoder.ts            the configured encoder and the base over it
 *   text-encoder-endpoint.ts   the endpoint encoder: embeddings fetched on the main thread, through the cache
 *   run-encoder.ts             the encoder a training run uses
 *   features.ts                an encoded text: sparse, ordered, L2-normalised
 *   network.ts                 one agent's network: base plus weighted adapters, forward and backward
 *   lora.ts                    a LoRA adapter's factors in the trainer's internal layout
 *   direct-path.ts             the direct path as one matrix, and back as LoRA factors
 *   linear-fit.ts              the direct path's fit: a regularised linear model on the sparse inputs
 *   objectives.ts              the objectives as loss and gradient of the network's outputs
 *   adamw.ts                   AdamW with global-norm gradient clipping
 *   trainer.ts                 one training run of an agent's adapter: settings, epochs, early stopping
 *   train-worker.ts            the training worker thread
 *   train-in-worker.ts         the training worker seen from the main thread
 *   worker-protocol.ts         messages between the main thread and the training worker
 *   scene-split.ts             held-out turns, by scene
 *   metrics.ts                 validation metrics per example kind, beside trivial baselines
 *   calibration.ts             a temperature fitted on a calibration split, and its figures
 *   validation.ts              the player's held-out examples and a judge over them
 *   lean-choice.ts             how far a council adapter is applied for this player
 *   applied-lean.ts            which adapters an answer uses, how far, and why
 *   learn-config.ts            local learning settings (defaults < file < environment < flags)
 *   inference.ts               inference with an agent's adapters
 *   scorer.ts                  what hosts call: rank candidates, or route a task
 *   bond-source.ts             the bond data of a forge: memoirs, index and per-agent bond views
 *   train-bond.ts              `kourai train bond` as a service
 *   council-training.ts        the federation round's local step: an agent's council adapter
 *   adapter-layout.ts          the head an agent's adapter trains (routing or scoring)
 *   adapter-files.ts           adapters on disk in PEFT's layout
 *   adapter-store.ts           adapter versions: files and registry together
 *   adapter-errors.ts          the error for a stored adapter that is truncated, corrupt or wrong
 *   adapter-delta.ts           Frobenius norms of effective LoRA updates without forming them
 *   datasets/                  public human-preference datasets converted to memoir lines
 *   encoder/                   the text encoders: hashed n-grams, structure, embeddings
 *   examples/                  memoir entries to labelled examples (the data views)
 *   route-prior/               the routing head's prior from the specialists' roles
 *
 * Nothing is re-exported here: importers name the file they need.
 */
export {};
