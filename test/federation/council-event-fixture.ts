import { CouncilEventDetailsSchema, type CouncilEventDetails } from '../../src/memoir/derive/council-event.js';

/** A round where techne spoke and came back changed; metis spoke; aidos stayed silent (too little data). */
export function details(over: Partial<CouncilEventDetails> = {}): CouncilEventDetails {
  return CouncilEventDetailsSchema.parse({
    format: 'kourai.council-event/1',
    beat: 'council_of_sisters',
    council: 'c0123456789abcde',
    forge: 'athens',
    round: 3,
    round_key: 'c0123456789abcde#3',
    spoke: [
      {
        agent: 'techne',
        epsilon_cost: 0.2,
        epsilon_after: 0.9,
        receipt_digest: 'sha256:aa',
        used: true,
        resumed: false,
      },
      {
        agent: 'hephaestus',
        epsilon_cost: 0.2,
        epsilon_after: 0.9,
        receipt_digest: 'sha256:bb',
        used: true,
        resumed: false,
      },
    ],
    silent: [{ agent: 'aidos', reason: 'too_little_data', detail: '4 council examples (needs at least 8)' }],
    came_back: [
      {
        agent: 'techne',
        aggregated: true,
        strategy: 'fedavg',
        updates: 2,
        used: 2,
        skipped_reason: null,
        version: 4,
        update_norm: 2,
        noise_norm: 0.1,
      },
      {
        agent: 'hephaestus',
        aggregated: true,
        strategy: 'fedavg',
        updates: 2,
        used: 2,
        skipped_reason: null,
        version: 4,
        update_norm: 1,
        noise_norm: 0.9,
      },
    ],
    learned: [
      {
        agent: 'techne',
        probes: [
          // The council learned early returns (before 0 → after 0.4), her own adapter agreed.
          { preference: 'early-returns', before: 0, after: 0.4, mine: 0.5 },
          // She held for typed signatures; the council leans the other way: she concedes.
          { preference: 'typed-signatures', before: 0, after: -0.3, mine: 0.6 },
          // Nothing moved on names: she says nothing about it.
          { preference: 'descriptive-names', before: 0.01, after: 0.02, mine: 0.03 },
        ],
      },
      { agent: 'hephaestus', probes: [{ preference: 'routing', before: 0.5, after: 0.75, mine: 0.7 }] },
    ],
    trust: { before: 0.9, after: 0.85, exiled: false, exiled_round: null },
    exiles: [],
    ledger_head: { releases: 6, hash: 'sha256:cc' },
    ...over,
  });
}
