import { readFileSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { z } from 'zod';
import { nextTier, tierOf, TIER_NAMES } from '../affinity/affinity.js';
import { decideGate, requiredCooldown, type GateDecision } from '../affinity/gating.js';
import { gatingPolicy } from '../feedback/config.js';
import { kouraiHome, type Ctx } from '../context.js';
import { CancelledError, fsError, NotFoundError, UsageError } from '../errors.js';
import {
  isRating,
  MAX_COMMENT,
  MAX_TEXT_BYTES,
  RATING_LABEL,
  type FeedbackAnswer,
  type FeedbackSubject,
  type Rating,
} from '../feedback/entry.js';
import { feedbackHistory } from '../feedback/history.js';
import { writeFeedback } from '../feedback/write.js';
import { AgentSchema, type MemoirEntry } from '../memoir/format/schema.js';
import { describeLocation, oneMemoir, resolveMemoirs } from '../memoir/file/discover.js';
import { loadEntryAt } from '../memoir/file/reader.js';
import { RESPONSE_KINDS, type ResponseKind } from '../memoir/format/sources.js';
import { colors } from '../output/color.js';
import { affinity as fmtAffinity, signedAffinity } from '../format.js';
import { FeedbackPrompts } from '../store/feedback-prompts.js';
import { openStateDb, openStateDbReadOnly } from '../store/state-db.js';
import type { DB } from '../store/db.js';
import { StoryIndex } from '../memoir-index/story-queries.js';
import { assertTerminalFits, MIN_SIZE } from '../ui/terminal.js';
import { indexFeedback } from '../output/index-feedback.js';
import { openIndexed } from '../memoir-index/indexed.js';
import { defineCommand } from './types.js';
import { optionsSchema } from './spec-schema.js';
import { feedbackCommand as spec } from './top-level.js';

const ANSWER_FLAGS = `--rating 1-5 --kind ${RESPONSE_KINDS.join('|')}`;

const options = optionsSchema(spec, {
  agent: z.string({ error: 'required: the agent whose proposal is rated, e.g. --agent techne' }).pipe(AgentSchema),
  scene: z
    .string({ error: 'required: the scene the proposal belongs to, e.g. --scene session-1a2b3c4d.turn-3' })
    .min(1, { error: 'must not be empty' }),
  rating: z
    .string()
    .optional()
    .transform((s, c) => {
      if (s === undefined) return undefined;
      // A digit and nothing else: Number() would also take ' 4', '1e0' and '0x4'.
      const n = /^[1-5]$/.test(s) ? Number(s) : Number.NaN;
      if (!isRating(n)) {
        c.addIssue({
          code: 'custom',
          message: `"${s}" is not a rating: use a whole number from 1 (way off) to 5 (exactly right)`,
        });
        return z.NEVER;
      }
      return n;
    }),
  kind: z
    .enum(RESPONSE_KINDS, {
      error: (iss) => `"${String(iss.input)}" is not a response kind; expected one of: ${RESPONSE_KINDS.join(', ')}`,
    })
    .optional(),
  comment: z
    .string()
    .max(MAX_COMMENT, { error: `at most ${MAX_COMMENT} characters` })
    .optional(),
  minTier: z.enum(TIER_NAMES, { error: `expected one of: ${TIER_NAMES.join(', ')}` }).optional(),
  cooldown: z.coerce.number().int().min(0).max(10_000).optional(),
});

type Options = z.output<typeof options>;

export interface FeedbackResult {
  /** A prompt was shown, or an answer given by flags was taken. */
  asked: boolean;
  answered: boolean;
  skipped: boolean;
  /** Why it did or did not ask: ready, forced, affinity_below_tier, cooldown, check_only. */
  reason: GateDecision['reason'] | 'check_only';
  message: string;
  /** Whether the gate would let it ask (what --check reports). */
  would_ask: boolean;
  gate: GateDecision;
  memoir: string;
  entry_id: string | null;
  entry: MemoirEntry | null;
}

function readText(ctx: Ctx, file: string, flag: string): string {
  let buf: Buffer;
  try {
    if (file === '-') {
      if (ctx.interactive)
        throw new UsageError(
          `${flag} -: stdin is the terminal here; pass a file, or pipe the text in a non-interactive session`,
        );
      buf = readFileSync(0);
    } else {
      const path = resolve(ctx.cwd, file);
      if (statSync(path).size > MAX_TEXT_BYTES)
        throw new UsageError(
          `${flag} ${file}: larger than ${MAX_TEXT_BYTES / 1048576} MiB; a proposal is text, not an artefact`,
        );
      buf = readFileSync(path);
    }
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw fsError(err, flag, file);
  }
  if (buf.length > MAX_TEXT_BYTES) throw new UsageError(`${flag}: larger than ${MAX_TEXT_BYTES / 1048576} MiB`);
  if (buf.includes(0))
    throw new UsageError(`${flag} ${file}: looks binary (it contains NUL bytes); give the text of the proposal`);
  // One trailing newline is how files end, not part of the text.
  return buf.toString('utf8').replace(/\r?\n$/, '');
}

function proposalText(ctx: Ctx, o: Options): { proposed: string; revised: string | null } {
  if ((o.proposed === undefined) === (o.proposedFile === undefined)) {
    throw new UsageError('give the proposal with exactly one of --proposed TEXT or --proposed-file FILE');
  }
  const proposed = o.proposed ?? readText(ctx, o.proposedFile as string, '--proposed-file');
  if (proposed.trim() === '')
    throw new UsageError(
      `the proposal is empty (${o.proposed !== undefined ? '--proposed' : `--proposed-file ${o.proposedFile}`}); there is nothing to rate`,
    );
  if (proposed.includes('\u0000')) throw new UsageError('--proposed contains a NUL character');
  let revised: string | null = null;
  if (o.revisedFile !== undefined) {
    revised = readText(ctx, o.revisedFile, '--revised-file');
    if (revised.trim() === '')
      throw new UsageError(
        `--revised-file ${o.revisedFile} is empty; leave it out when the player did not revise the proposal`,
      );
    if (revised === proposed)
      throw new UsageError(
        `--revised-file ${o.revisedFile} is the proposal unchanged; leave it out (a preference pair needs two different texts)`,
      );
  }
  return { proposed, revised };
}

/** The memoir file feedback goes to: `--memoir FILE`, or a session directory holding memoir.jsonl. It must exist. */
function targetMemoir(ctx: Ctx, memoir: readonly string[]): string {
  return oneMemoir(memoir, ctx.cwd, {
    command: 'feedback',
    needs: ': the memoir of the session the proposal belongs to',
    mustExist: true,
  });
}

/** The memoirs whose affinity counts: every session of the same forge, or the memoir alone. */
function scopeOf(target: string, home: string, cwd: string): { key: string; paths: string[] } {
  const loc = describeLocation(target);
  if (loc.player && loc.project) {
    const forges = dirname(dirname(target));
    return { key: dirname(dirname(forges)), paths: resolveMemoirs([forges], home, cwd) };
  }
  return { key: target, paths: [target] };
}

export default defineCommand({
  options,
  async run(opts, ctx: Ctx): Promise<FeedbackResult> {
    const policy = gatingPolicy(kouraiHome(ctx), ctx.env, opts);
    const target = targetMemoir(ctx, opts.memoir);
    const { proposed, revised } = proposalText(ctx, opts);
    if (opts.comment !== undefined && /[\u0000]/.test(opts.comment))
      throw new UsageError('--comment contains a NUL character');
    const home = kouraiHome(ctx);
    const scope = scopeOf(target, home, ctx.cwd);
    const { index, fileIds } = await openIndexed(
      ctx,
      scope.paths.includes(target) ? scope.paths : [...scope.paths, target],
      { feedback: indexFeedback(ctx, true) },
    );
    let stateDb: DB | undefined;
    try {
      const q = new StoryIndex(index, fileIds);
      const session = q.sessions.find((s) => s.path === target);
      if (!session) throw new NotFoundError(`${target} is not a memoir kourai can read`);
      const sceneRows = q.sceneRows(session.rank, opts.scene, 50);
      if (sceneRows.length === 0) {
        const recent = q.recentScenes(session.rank, 3);
        throw new NotFoundError(
          `scene "${opts.scene}" is not in ${target}`,
          recent.length
            ? `its latest scenes: ${recent.join(', ')} (list them all with \`kourai memoir inspect --memoir ${target}\`)`
            : 'the memoir has no entries yet',
        );
      }
      const own = sceneRows.find((r) => r.agent === opts.agent) ?? sceneRows[0];
      const context = own ? (loadEntryAt(session.path, own.offset, own.length, own.entry_id).context ?? null) : null;
      const subject: FeedbackSubject = { agent: opts.agent, scene_id: opts.scene, proposed, revised, context };

      stateDb = opts.check ? openStateDbReadOnly(home) : openStateDb(home);
      const prompts = new FeedbackPrompts(stateDb);
      const skip = prompts.skips(scope.key, opts.agent);
      const history = feedbackHistory(q, opts.agent, policy, skip);
      const gate = decideGate(opts.agent, policy, history, opts.force);
      const result = (
        r: Partial<FeedbackResult> & Pick<FeedbackResult, 'asked' | 'reason' | 'message'>,
      ): FeedbackResult => ({
        asked: r.asked,
        answered: r.answered ?? false,
        skipped: r.skipped ?? false,
        reason: r.reason,
        message: r.message,
        would_ask: gate.ask,
        entry_id: r.entry_id ?? null,
        memoir: target,
        gate,
        entry: r.entry ?? null,
      });
      if (opts.check)
        return result({ asked: false, reason: 'check_only', message: gate.message.replace(/^asking/, 'would ask') });
      // The gate decides whether to *ask*; an answer the host already has (both flags) is recorded.
      const byFlags = opts.rating !== undefined && opts.kind !== undefined;
      if (!byFlags && !gate.ask) return result({ asked: false, reason: gate.reason, message: gate.message });

      let answer: FeedbackAnswer;
      if (byFlags) {
        answer = { rating: opts.rating as Rating, kind: opts.kind as ResponseKind, comment: opts.comment ?? null };
      } else {
        if (!ctx.interactive) {
          const missing = [
            opts.rating === undefined ? '--rating 1-5' : null,
            opts.kind === undefined ? `--kind ${RESPONSE_KINDS.join('|')}` : null,
          ]
            .filter(Boolean)
            .join(' and ');
          throw new UsageError(
            `this session cannot show the feedback prompt (no terminal, CI or --no-input): pass ${missing}`,
            `e.g. kourai feedback … ${ANSWER_FLAGS} --json`,
          );
        }
        const size = assertTerminalFits(
          ctx,
          MIN_SIZE.feedback,
          'feedback prompt',
          `answer with flags: ${ANSWER_FLAGS}`,
        );
        const [{ showFeedbackPrompt }, { initialFeedbackState }] = await Promise.all([
          import('../ui/feedback/screen.js'),
          import('../ui/feedback/use-feedback-state.js'),
        ]);
        const initial = initialFeedbackState({
          rating: opts.rating as Rating | undefined,
          kind: opts.kind as ResponseKind | undefined,
          comment: opts.comment,
          revised: revised !== null,
        });
        const outcome = await showFeedbackPrompt(
          ctx,
          {
            agent: opts.agent,
            scene_id: opts.scene,
            proposed,
            revised,
            affinity: history.affinity,
            tier: tierOf(history.affinity),
          },
          initial,
          size,
        );
        if (outcome.type === 'cancelled')
          throw new CancelledError(`feedback cancelled${outcome.why ? `: ${outcome.why}` : ''}; nothing was written`);
        if (outcome.type === 'skipped') {
          const rec = prompts.recordSkip(scope.key, opts.agent, history.newestEntryId, ctx.now());
          const wait = requiredCooldown(policy, rec.count);
          return result({
            asked: true,
            skipped: true,
            reason: gate.reason,
            message: `skipped: nothing was written; the next prompt for ${opts.agent} waits for ${wait} more of its entries`,
          });
        }
        answer = outcome.answer;
      }
      // Everything is known: one validated entry, one append.
      const prepared = writeFeedback(target, subject, answer, ctx);
      prompts.recordAnswer(scope.key, opts.agent, prepared.entry.entry_id, ctx.now());
      const after = history.affinity + prepared.entry.affinity_delta;
      return result({
        asked: true,
        answered: true,
        reason: gate.reason,
        message: `recorded: ${opts.agent} rated ${answer.rating}/5 (${RATING_LABEL[answer.rating]}), ${answer.kind}; affinity ${signedAffinity(prepared.entry.affinity_delta)} → ${fmtAffinity(after)} ${tierOf(after)}${gate.ask ? '' : ` (given by flags; the gate would not have asked: ${gate.message.replace(/^not asking: /, '')})`}`,
        entry_id: prepared.entry.entry_id,
        entry: prepared.entry,
      });
    } finally {
      stateDb?.close();
      index.close();
    }
  },
  render(r, ctx) {
    const c = colors(ctx.colorLevel);
    if (r.answered && r.entry_id) {
      const next = nextTier(r.gate.affinity + (r.entry?.affinity_delta ?? 0));
      return [
        `${c.green('✓')} ${r.message}`,
        `  entry   ${r.entry_id}${r.entry && !r.entry.split.shared_eligible ? c.dim(' (private)') : ''}`,
        `  memoir  ${r.memoir}`,
        next ? c.dim(`  ${next.name} in ${fmtAffinity(next.missing)}`) : '',
        c.dim(`  see it: kourai memoir show ${r.entry_id}`),
      ]
        .filter(Boolean)
        .join('\n');
    }
    if (r.skipped) return c.dim(r.message);
    if (r.reason === 'check_only') return r.message;
    return `${r.message}\n${c.dim('  nothing was written; pass --force to ask anyway, or give the answer with --rating and --kind')}`;
  },
});
