import type { Agent } from '../../memoir/format/agents.js';

/**
 * Labelled examples: what the trainer learns from, built from memoir entries by the data views
 * (`bondView`, `councilView`). The contract with the trainer is LEARNING-DESIGN.md §1.
 */

export type ExampleKind = 'pair' | 'binary' | 'graded' | 'route';

interface ExampleBase {
  /** Whose adapter this trains. */
  agent: Agent;
  /** kourai entry_id or derived py_ id (for tracing and dedup). */
  entryId: string;
  /** scene_id: validation splits by scene, never straddling. */
  scene: string;
  /** training_label.weight (default 1), > 0. */
  weight: number;
  /** context.task_type when present. */
  taskType: string | null;
  /** What the text answers (the scene's task description, bond view only); absent: not known. */
  prompt?: string | null;
}

/**
 * How the chosen side of a pair came to be chosen:
 * - `revision`: the player rewrote the rejected text into the chosen one (player text);
 * - `choice`: the player picked one of two texts agents wrote (two candidates, or a side in a
 *   Kallos–Aidos disagreement). "Always prefer the revision" has nothing to prefer here.
 */
export type ChosenBy = 'revision' | 'choice';

export type PairExample = ExampleBase & { kind: 'pair'; chosen: string; rejected: string; chosenBy: ChosenBy };
/** Accept/reject, pass/fail: 1 = the outcome the agent wants (accepted, the flag was taken). */
export type BinaryExample = ExampleBase & { kind: 'binary'; text: string; label: 0 | 1 };
/** A target in [0, 1]: a Likert rating (r − 1) / 4, scene acceptance, affinity gain. */
export type GradedExample = ExampleBase & { kind: 'graded'; text: string; target: number };
/**
 * Hephaestus's routing head: the specialist the task went to. `text` is what the head reads: the
 * task description, or (without one, as in the council view) a `task type: X` line. The routing
 * prior reads `description` (absent: `text`) and `taskType` (route-prior/); the head learns what
 * the prior leaves.
 */
export type RouteExample = ExampleBase & { kind: 'route'; text: string; description?: string | null; label: Agent };

export type Example = PairExample | BinaryExample | GradedExample | RouteExample;

export interface DataView {
  view: 'bond' | 'council';
  agent: Agent;
  examples: Example[];
  /** Entries looked at but not used, by reason (superseded, no_label, private, ...). */
  skipped: Record<string, number>;
}
