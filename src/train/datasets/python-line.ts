/**
 * Memoir lines as a Python host writes them: the upstream pydantic model's `model_dump_json()`,
 * standard keys in declaration order, `split` filled in by the upstream split rule, floats with a
 * decimal point, non-ASCII raw. Only what the dataset converters need: no interrupts, no extras.
 */
export interface PyEntry {
  scene_id: string;
  agent: string;
  source: 'specialist_proposed' | 'task_description' | 'disagreement_resolution';
  context: Record<string, string> | null;
  narrative_beat?: string | null;
  agent_proposed: string | null;
  player_response?: {
    kind: 'accepted' | 'modified' | 'rejected' | 'deferred';
    delta: string | null;
    felt: 'right' | 'off' | 'unsure' | null;
  } | null;
  training_label?: { preference_pair: { text: string; score: 0 | 1 }[] | null; weight: number } | null;
}

function pyFloat(x: number): string {
  if (!Number.isFinite(x)) throw new RangeError(`${x} has no JSON form`);
  return Number.isInteger(x) ? `${x}.0` : String(x);
}

const s = (v: string | null | undefined): string => (v === null || v === undefined ? 'null' : JSON.stringify(v));

export function pyLine(e: PyEntry): string {
  const ctx =
    e.context === null
      ? 'null'
      : `{${Object.entries(e.context)
          .map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`)
          .join(',')}}`;
  const pr = e.player_response
    ? `{"kind":${s(e.player_response.kind)},"delta":${s(e.player_response.delta)},"felt":${s(e.player_response.felt)}}`
    : 'null';
  const tl = e.training_label
    ? `{"preference_pair":${e.training_label.preference_pair ? `[${e.training_label.preference_pair.map((p) => `{"text":${s(p.text)},"score":${p.score}}`).join(',')}]` : 'null'},"weight":${pyFloat(e.training_label.weight)}}`
    : 'null';
  const shared = e.source !== 'task_description';
  return `{"scene_id":${s(e.scene_id)},"agent":${s(e.agent)},"source":${s(e.source)},"context":${ctx},"narrative_beat":${s(e.narrative_beat)},"agent_proposed":${s(e.agent_proposed)},"player_response":${pr},"affinity_delta":0.0,"training_label":${tl},"split":{"shared_eligible":${shared},"private_only":${!shared}}}`;
}
