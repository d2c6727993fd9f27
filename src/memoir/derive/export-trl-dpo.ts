import type { Agent } from '../format/agents.js';

/**
 * TRL's DPO format: one JSON object per line, `{"prompt","chosen","rejected"}` (read with
 * `datasets.load_dataset("json", data_files=...)` and given to `DPOTrainer`). Two forms:
 * - standard (`trl-dpo`): all three strings;
 * - conversational (`trl-dpo-chat`, for instruct models): lists of {"role","content"} messages —
 *   the prompt a system message (whose output this is) and a user message (the task), each
 *   completion one assistant message; TRL applies the model's chat template.
 * The prompt says whose output this is and the task type; the player's task description is added
 * only when the caller was allowed to include private text.
 */

/** What each agent is asked to write, as the first line of a prompt. */
export const AGENT_ROLE: Readonly<Record<Agent, string>> = {
  hephaestus: 'You are Hephaestus, who routes each task of a Kourai forge to the right specialist.',
  metis: 'You are Metis, the planner of a Kourai forge. Write the plan.',
  techne: 'You are Techne, the coder of a Kourai forge. Write the code.',
  dokimasia: 'You are Dokimasia, the tester of a Kourai forge. Write the test.',
  kallos: 'You are Kallos, the style reviewer of a Kourai forge. Give your review.',
  mneme: 'You are Mneme, the memory of a Kourai forge. Write the commit message.',
  aidos: 'You are Aidos, who calls out slop in a Kourai forge. Give your call.',
  aletheia: 'You are Aletheia, who checks facts and citations in a Kourai forge. Give your correction.',
  cupid: 'You are Cupid, who looks after the player of a Kourai forge.',
  puck: 'You are Puck, the trickster of a Kourai forge.',
};

export interface DpoInput {
  agent: Agent;
  taskType: string | null;
  /** The scene's task description: private, so only when private text may be exported. */
  description: string | null;
  chosen: string;
  rejected: string;
}

export interface DpoRecord {
  prompt: string;
  chosen: string;
  rejected: string;
}

/** The prompt: the agent's role, the task type, and (when given) the task. Ends with a newline, so the completion starts on its own line. */
export function dpoPrompt(agent: Agent, taskType: string | null, description: string | null): string {
  const lines = [AGENT_ROLE[agent]];
  if (taskType !== null && taskType.trim() !== '') lines.push(`Task type: ${taskType.trim()}`);
  if (description !== null && description.trim() !== '') lines.push(`Task: ${description.trim()}`);
  return `${lines.join('\n')}\n`;
}

export function dpoRecord(x: DpoInput): DpoRecord {
  return { prompt: dpoPrompt(x.agent, x.taskType, x.description), chosen: x.chosen, rejected: x.rejected };
}

/** One JSONL line (no newline). Key order fixed: prompt, chosen, rejected. */
export function encodeDpoRecord(r: DpoRecord): string {
  return JSON.stringify({ prompt: r.prompt, chosen: r.chosen, rejected: r.rejected });
}

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface DpoChatRecord {
  prompt: ChatMessage[];
  chosen: ChatMessage[];
  rejected: ChatMessage[];
}

/** The user's turn when the memoir holds neither a task type nor (exportable) task text. */
export const NO_TASK = 'Your turn.';

export function dpoChatRecord(x: DpoInput): DpoChatRecord {
  const task: string[] = [];
  if (x.taskType !== null && x.taskType.trim() !== '') task.push(`Task type: ${x.taskType.trim()}`);
  if (x.description !== null && x.description.trim() !== '') task.push(`Task: ${x.description.trim()}`);
  return {
    prompt: [
      { role: 'system', content: AGENT_ROLE[x.agent] },
      { role: 'user', content: task.length ? task.join('\n') : NO_TASK },
    ],
    chosen: [{ role: 'assistant', content: x.chosen }],
    rejected: [{ role: 'assistant', content: x.rejected }],
  };
}

/** One JSONL line of the conversational form (no newline); keys in a fixed order. */
export function encodeDpoChatRecord(r: DpoChatRecord): string {
  const m = (xs: readonly ChatMessage[]): ChatMessage[] => xs.map(({ role, content }) => ({ role, content }));
  return JSON.stringify({ prompt: m(r.prompt), chosen: m(r.chosen), rejected: m(r.rejected) });
}

/** TRL's datasets loader reads UTF-8 through Arrow: a lone surrogate in a JS string would not survive. */
export function isWellFormed(s: string): boolean {
  return !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(s);
}
