import { describe, expect, it } from 'vitest';
import { sceneOf, sceneText } from '../../src/federation/round/scenes.js';
import { details } from './council-event-fixture.js';

describe('the Council of Sisters, from a council_event', () => {
  it('each sister that came back says what she learned or conceded, from the probes; nothing for what did not move', () => {
    const s = sceneOf(details());
    expect(s.title).toBe('The Council of Sisters — round 3');
    const said = (agent: string): string[] => s.lines.filter((l) => l.speaker === agent).map((l) => l.text);
    expect(said('techne')).toEqual([
      expect.stringMatching(/^Across the forges, the council leans to: guard clauses that return early/),
      expect.stringMatching(/^I held for your way: a type annotation on every parameter.*The council leans the other way: no annotations.*I concede it to the council; your bond keeps your taste\.$/),
    ]);
    expect(said('hephaestus').join('\n')).toMatch(/the council and I now agree on 75% of this forge's routes \(it was 50%\)/);
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
    const self = sceneOf(details({ beat: 'stoa_falls', exiles: [{ forge: 'athens', round: 3, you: true }], trust: { before: 0.5, after: 0.3, exiled: true, exiled_round: 3 } }));
    expect(self.title).toBe('The Stoa Falls — round 3');
    expect(sceneText(self)).toMatch(/The council has exiled this forge after round 3/);
    const other = sceneOf(details({ beat: 'stoa_falls', exiles: [{ forge: 'sparta', round: 3, you: false }] }));
    expect(sceneText(other)).toMatch(/The council has exiled the forge sparta after round 3/);
    expect(sceneText(other)).not.toMatch(/exiled this forge/);
  });
});
