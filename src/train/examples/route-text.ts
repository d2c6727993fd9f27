import { FEDERATING_AGENTS, type Agent } from '../../memoir/format/agents.js';

/** The specialists Hephaestus's routing head chooses between (every federating agent but him). */
export const ROUTE_LABELS: readonly Agent[] = FEDERATING_AGENTS.filter((a) => a !== 'hephaestus');

/**
 * The text the routing head reads: the task description (bond only: it is the player's private
 * words); without one, the task type as a `task type: X` line. The task type never rides along
 * with a description: a line that names the answer would teach the head to read the line and not
 * the words. The routing prior takes the task type instead (route-prior/). Training and inference
 * (`kourai route "…" [--task-type T]`) both build the text here, so they agree.
 */
export function routeText(description: string | null, taskType: string | null): string | null {
  if (description !== null && description.trim() !== '') return description.trim();
  if (taskType !== null && taskType.trim() !== '') return `task type: ${taskType.trim()}`;
  return null;
}

/** `route:<agent>` as Hephaestus writes his routing decision; null when it is not one. */
export function routeTarget(agentProposed: string | null): string | null {
  const m = /^route:([a-z_]+)$/.exec(agentProposed?.trim() ?? '');
  return m ? (m[1] as string) : null;
}
