import type { Agent } from '../memoir/agents.js';

// TEMPORARY: the shape of `Example` from LEARNING-DESIGN.md §1 until learndata lands
// src/train/examples/types.ts; then this file is deleted and the trainer imports theirs.
export type ExampleKind = 'pair' | 'binary' | 'graded' | 'route';
interface ExampleBase {
  agent: Agent;
  entryId: string;
  scene: string;
  weight: number;
  taskType: string | null;
}
export type Example =
  | (ExampleBase & { kind: 'pair'; chosen: string; rejected: string; chosenBy: 'revision' | 'choice' })
  | (ExampleBase & { kind: 'binary'; text: string; label: 0 | 1 })
  | (ExampleBase & { kind: 'graded'; text: string; target: number })
  | (ExampleBase & { kind: 'route'; text: string; label: Agent });
