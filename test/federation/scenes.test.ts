import { describe, expect, it } from 'vitest';
import { sceneOf, sceneText } from '../../src/federation/round/scenes.js';
import { details } from './council-event-fixture.js';

describe('the Council of Sisters, from a council_event', () => {
  it('each sister that came back says what she learned or conceded, from the probes; nothing for what did not move', () => {
    const s = sceneOf(details());
    expect(s.title).toBe('The Council of Sisters — round 3');
    const said = (agent: string): string[] => s.lines.filter((l) => l.speaker === agent).map((l) => l.text);
    // A round recorded with margins (before accuracies) has no measure of the player: no "your way".
    expect(said('techne')).toEqual([
      expect.stringMatching(/^The council adapter came back leaning to: guard clauses that return early/),
      expect.stringMatching(
        /^My proposal leaned to: a type annotation on every parameter.*The council leans the other way: no annotations.*I concede it to the council; your bond keeps your taste\.$/,
      ),
    ]);
    expect(sceneText(s)).not.toMatch(/your way|From the other forges|Across the forges/);
    expect(said('hephaestus').join('\n')).toMatch(
      /the council and I now agree on 75% of this forge's routes \(it was 50%\)/,
    );
    expect(s.lines.some((l) => /descriptive|named for what they hold/.test(l.text))).toBe(false);
  });

  it('Cupid does not attend; silence, trust and the noise caveat are told from the figures', () => {
    const s = sceneOf(details());
    expect(s.lines.some((l) => (l.speaker as string) === 'cupid')).toBe(false);
    const text = sceneText(s);
    expect(text).toMatch(/Cupid does not attend/);
    expect(text).toMatch(/Silent this round: aidos \(too little shareable data\)/);
    expect(text).toMatch(/trusts this forge at 0\.85 \(it was 0\.90\)/);
    // Hephaestus's change is mostly noise (0.9 of 1), techne's is not (0.1 of 2): the caveat names him only.
    expect(text).toMatch(/A caveat, verified: for hephaestus, the whisper's noise is about 90% of what changed/);
    expect(text).not.toMatch(/for techne, the whisper/);
  });

  it('the Stoa Falls: this forge exiled, or a sister forge', () => {
    const self = sceneOf(
      details({
        beat: 'stoa_falls',
        exiles: [{ forge: 'athens', round: 3, you: true }],
        trust: { before: 0.5, after: 0.3, exiled: true, exiled_round: 3 },
      }),
    );
    expect(self.title).toBe('The Stoa Falls — round 3');
    expect(sceneText(self)).toMatch(/The council has exiled this forge after round 3/);
    const other = sceneOf(details({ beat: 'stoa_falls', exiles: [{ forge: 'sparta', round: 3, you: false }] }));
    expect(sceneText(other)).toMatch(/The council has exiled the forge sparta after round 3/);
    expect(sceneText(other)).not.toMatch(/exiled this forge/);
  });
});

const probe = (
  preference: string,
  v: { before: number; after: number; mine?: number | null; yours?: number | null; n?: number },
) => ({
  preference,
  measure: 'accuracy' as const,
  n: v.n ?? 96,
  before: v.before,
  after: v.after,
  mine: v.mine ?? null,
  yours: v.yours ?? null,
});
const validation = (
  o: Partial<{
    bond_version: number | null;
    before: number | null;
    bond_only: number;
    both: number;
    council_only: number;
    lean: number;
    after: number;
    passed: boolean;
  }> = {},
) => ({
  bond_version: 2,
  scenes: 4,
  examples: 14,
  before: 0.93,
  bond_only: 0.93,
  both: 0.5,
  council_only: 0.5,
  lean: 0,
  after: 0.93,
  passed: false,
  ...o,
});
const back = (agent: 'techne' | 'hephaestus', used: number, v: ReturnType<typeof validation> | null) => ({
  agent,
  aggregated: true,
  strategy: 'lora-fair',
  updates: used,
  used,
  skipped_reason: null,
  version: 1,
  update_norm: 2941,
  noise_norm: 2941,
  validation: v,
});

describe('scenes that tell the truth (accuracy probes, held-out validation)', () => {
  it('one forge: it says so, never "from the other forges"; what changed is measured on the player\'s held-out scenes', () => {
    const s = sceneText(
      sceneOf(
        details({
          forges: 1,
          came_back: [back('techne', 1, validation())],
          learned: [
            { agent: 'techne', probes: [probe('no-leftovers', { before: 0.5, after: 0.9, mine: 0.95, yours: 0.97 })] },
          ],
        }),
      ),
    );
    expect(s).toMatch(/Only this forge took part in this round/);
    expect(s).not.toMatch(/From the other forges|Across the forges/);
    expect(s).toMatch(/The council adapter came back holding to this craft: .*No other forge was there/);
    expect(s).toMatch(
      /Techne: On 14 held-out examples of yours \(4 scenes\), the council adapter does not help \(50% alone, against 93% without it\)\. I leave it unapplied: your bond answers as before\./,
    );
    expect(s).toMatch(
      /before the round 93% · bond only 93% · both 50% · council only 50% → applied: bond only \(93%\)/,
    );
  });

  it('one forge: a craft the council adapter holds but this forge\'s own update did not is the noise, not "our own lesson"', () => {
    const said = (mine: number | null) =>
      sceneText(
        sceneOf(
          details({
            forges: 1,
            came_back: [back('techne', 1, validation())],
            learned: [
              { agent: 'techne', probes: [probe('no-leftovers', { before: 0.16, after: 0.95, mine, yours: 0.18 })] },
            ],
          }),
        ),
      );
    // What this forge sent held the craft on 0% of fresh pairs: the move came from the noise.
    expect(said(0)).not.toMatch(/our own lesson/);
    expect(said(0)).toMatch(
      /came back holding to this craft: .*my own update did not: with no other forge, that is the whisper's noise/,
    );
    expect(said(null)).not.toMatch(/our own lesson/);
    // What it sent held the craft: then it is the forge's own lesson.
    expect(said(0.97)).toMatch(/No other forge was there: it is our own lesson, returned/);
  });

  it("one forge: a lean the council adapter shows but this forge's own update did not is told as the noise", () => {
    const said = (mine: number | null) =>
      sceneText(
        sceneOf(
          details({
            forges: 1,
            came_back: [back('techne', 1, validation())],
            learned: [
              { agent: 'techne', probes: [probe('descriptive-names', { before: 0.5, after: 0.9, mine, yours: null })] },
            ],
          }),
        ),
      );
    expect(said(0.1)).toMatch(/came back leaning to: locals and parameters named for what they hold/);
    expect(said(0.1)).not.toMatch(/from this forge's own update/);
    expect(said(0.1)).toMatch(/my own update did not lean that way: with no other forge, that is the whisper's noise/);
    expect(said(0.95)).toMatch(/\(from this forge's own update and the noise\)/);
  });

  it('several forges: how many, and what the craft learned from them; a council adapter that helps is applied', () => {
    const s = sceneText(
      sceneOf(
        details({
          forges: 3,
          came_back: [
            back(
              'techne',
              3,
              validation({ before: 0.8, bond_only: 0.8, both: 0.9, after: 0.9, lean: 0.5, passed: true }),
            ),
          ],
          learned: [{ agent: 'techne', probes: [probe('no-leftovers', { before: 0.5, after: 0.9 })] }],
        }),
      ),
    );
    expect(s).toMatch(/3 forges took part in this round/);
    expect(s).toMatch(/From the other forges I learned to hold to this craft/);
    expect(s).toMatch(/the council adapter helps: 80% before the round, 90% now\. I apply it: bond and council\./);
  });

  it('"your way" only on axes where what the player applies shows a preference', () => {
    const lines = (yours: number | null, mine: number | null) =>
      sceneOf(
        details({
          forges: 2,
          came_back: [back('techne', 2, validation())],
          learned: [
            { agent: 'techne', probes: [probe('descriptive-names', { before: 0.5, after: 0.2, mine, yours })] },
          ],
        }),
      )
        .lines.filter((l) => l.speaker === 'techne')
        .map((l) => l.text);
    // The player's adapters rank 97% of fresh pairs toward descriptive names, and so did her proposal.
    expect(lines(0.97, 0.95).join('\n')).toMatch(
      /^I held for your way: locals and parameters named for what they hold.*The council leans the other way: single-letter names/m,
    );
    // Her proposal leaned, the player does not: no claim about the player's way.
    expect(lines(0.55, 0.95).join('\n')).not.toMatch(/your way/i);
    // A lean within chance, or a mild one (68%), or nothing measured: no claim either.
    expect(lines(0.68, 0.95).join('\n')).not.toMatch(/your way/i);
    expect(lines(null, 0.95).join('\n')).not.toMatch(/your way/i);
    expect(lines(0.55, 0.95).join('\n')).toMatch(/the council leans to: single-letter names/);
  });

  it('the Stoa Falls says how many forges took part and what the council adapters do on held-out data', () => {
    const s = sceneText(
      sceneOf(
        details({
          beat: 'stoa_falls',
          forges: 4,
          exiles: [{ forge: 'sparta', round: 3, you: false }],
          came_back: [
            back('techne', 3, validation()),
            back('hephaestus', 3, validation({ passed: true, lean: 0.5, before: 0.7, after: 0.8 })),
          ],
        }),
      ),
    );
    expect(s).toMatch(/4 forges took part in round 3; from the next round, 3 of them remain\./);
    expect(s).toMatch(/On your held-out scenes, this round's council adapters help hephaestus and are applied there\./);
    expect(s).toMatch(/techne: 93% → 93%; hephaestus: 70% → 80%/);
  });
});
