import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../../src/runtime/seeded-random.js';
import type { HeadName } from '../../src/train/base-model.js';
import type { Example } from '../../src/train/examples/types.js';
import { loraWeights, type LoraWeights } from '../../src/train/lora.js';
import { Network, type Applied } from '../../src/train/network.js';
import { prepare, Run } from '../../src/train/trainer.js';
import { smallBase } from './helpers.js';

/**
 * Every objective's gradient, with respect to every factor of the trained adapter, against central
 * finite differences of the same loss — with a frozen adapter applied beside it (bond training
 * over a council adapter) and mixing weights other than 1 (the lean).
 */
const RANK = 3;

function randomLora(dims: { inDim: number; hidden: number; out: number; rank: number }, seed: number): LoraWeights {
  const w = loraWeights(dims);
  const r = mulberry32(seed);
  for (let i = 0; i < w.all.length; i++) w.all[i] = (r() * 2 - 1) * 0.6;
  return w;
}

const common = { agent: 'metis' as const, entryId: 'e', scene: 's1', taskType: null };
const cases: { name: string; head: HeadName; example: Example }[] = [
  {
    name: 'pair (Bradley–Terry)',
    head: 'score',
    example: {
      ...common,
      kind: 'pair',
      chosenBy: 'revision',
      weight: 1.5,
      chosen: 'if (!ok) return;\nrun(x);',
      rejected: 'if (ok) {\n  run(x);\n}',
    },
  },
  {
    name: 'binary (accept/reject)',
    head: 'score',
    example: { ...common, kind: 'binary', weight: 0.5, text: 'feat: stream the verify pass', label: 1 },
  },
  {
    name: 'binary, label 0',
    head: 'score',
    example: { ...common, kind: 'binary', weight: 2, text: 'x = compute()  # TODO', label: 0 },
  },
  {
    name: 'graded (Likert, affinity gain)',
    head: 'score',
    example: { ...common, kind: 'graded', weight: 1, text: 'You kept going when the tests were red.', target: 0.75 },
  },
  {
    name: 'route (softmax cross-entropy)',
    head: 'route',
    example: {
      ...common,
      agent: 'hephaestus',
      kind: 'route',
      weight: 1.25,
      text: 'write tests for the snapshot parser test',
      label: 'aletheia',
    },
  }, // against the prior: its gradient does not vanish
];

describe('gradients match finite differences', () => {
  for (const c of cases) {
    for (const weights of [
      [1, 1],
      [0.5, 1.5],
    ] as const) {
      it(`${c.name}, λ = ${weights.join('/')}`, () => {
        const { base, encode } = smallBase();
        const net = new Network(base, c.head);
        const dims = { inDim: base.inDim, hidden: base.hidden, out: net.out, rank: RANK };
        const frozen = randomLora(dims, 11);
        const trained = randomLora(dims, 12);
        // different ranks and α for the two adapters, as a council and a bond may have
        const frozen2 = randomLora({ ...dims, rank: RANK + 1 }, 13);
        const applied: Applied[] = [
          { lora: frozen, scale: 6 / RANK, weight: weights[0] },
          { lora: frozen2, scale: 4 / (RANK + 1), weight: 1 },
          { lora: trained, scale: 6 / RANK, weight: weights[1] },
        ];
        const { items, texts } = prepare(base, encode, [c.example], c.head);
        expect(items).toHaveLength(1);
        const run = new Run(net, applied, texts, items);
        const grad = loraWeights(dims);
        run.accumulate(0, grad);
        const scratch = loraWeights(dims);
        const loss = (): number => run.accumulate(0, scratch);
        const h = 1e-6;
        let checked = 0;
        let nonzero = 0;
        for (let k = 0; k < trained.all.length; k++) {
          const keep = trained.all[k] as number;
          trained.all[k] = keep + h;
          const up = loss();
          trained.all[k] = keep - h;
          const down = loss();
          trained.all[k] = keep;
          const fd = (up - down) / (2 * h);
          const an = grad.all[k] as number;
          expect(Math.abs(an - fd)).toBeLessThanOrEqual(1e-6 + 1e-5 * Math.abs(fd));
          checked++;
          if (Math.abs(fd) > 1e-4) nonzero++;
        }
        expect(checked).toBe(trained.all.length);
        // Every factor carries gradient somewhere: the check is not comparing zeros with zeros.
        for (const part of ['denseAt', 'denseB', 'headA', 'headB', 'directAt', 'directB'] as const)
          expect(
            grad[part].some((g) => Math.abs(g) > 1e-4),
            part,
          ).toBe(true);
        expect(nonzero).toBeGreaterThan(20);
      });
    }
  }

  it('the frozen adapter gets no gradient and is not changed', () => {
    const { base, encode } = smallBase();
    const net = new Network(base, 'score');
    const dims = { inDim: base.inDim, hidden: base.hidden, out: 1, rank: RANK };
    const frozen = randomLora(dims, 1);
    const before = Float64Array.from(frozen.all);
    const { items, texts } = prepare(base, encode, [cases[0]!.example], 'score');
    const run = new Run(
      net,
      [
        { lora: frozen, scale: 2, weight: 1 },
        { lora: randomLora(dims, 2), scale: 2, weight: 1 },
      ],
      texts,
      items,
    );
    run.accumulate(0, loraWeights(dims));
    expect(frozen.all).toEqual(before);
  });
});
