import { FEDERATING_AGENTS, type Agent } from '../../memoir/format/agents.js';

/** The specialists Hephaestus's routing head chooses between (every federating agent but him). */
export const ROUTE_LABELS: readonly Agent[] = FEDERATING_AGENTS.filter((a) => a !== 'hephaestus');

/**
 * The text the routing head reads: the task description (bond only: it is the player's private
 * words) and the task type. Training and inference (`kourai route "…" [--task-type T]`) both
 * build it here, so they agree.
 */
export function routeText(description: string | null, taskType: string | null): string | null {
  const parts: string[] = [];
  if (description !== null && description.trim() !== '') parts.push(description.trim());
  if (taskType !== null && taskType.trim() !== '') parts.push(`task type: ${taskType.trim()}`);
  return parts.length > 0 ? parts.join('\n') : null;
}

/** `route:<agent>` as Hephaestus writes his routing decision; null when it is not one. */
export function routeTarget(agentProposed: string | null): string | null {
  const m = /^route:([a-z_]+)$/.exec(agentProposed?.trim() ?? '');
  return m ? (m[1] as string) : null;
}
