// Planted bugs in the modules the README's guarantees rest on: the split rule, the accountant (and
// the budget that uses it), the Krum family, append and ingest. `npm run mutants` applies each one
// alone, in a copy of the tree, and expects the tests to fail. `find` must occur exactly once in
// `file`: when a change elsewhere makes it disappear, the mutant is reported STALE (and the check
// fails) instead of being skipped. `tests` are the tests expected to catch it (with --whole-suite,
// a mutant they miss also faces the whole suite).
// Bugs planted by a review (rather than found in the code's history) are marked `planted`.

const SPLIT_TESTS = ['test/memoir', 'test/memoir-index/memoir-index.test.ts', 'test/commands', 'test/privacy', 'test/train/examples'];
const ACCOUNTANT_TESTS = ['test/privacy'];
const KRUM_TESTS = ['test/aggregation'];
const APPEND_TESTS = ['test/memoir', 'test/memoir-index/memoir-index.test.ts', 'test/commands/memoir.test.ts', 'test/commands/memoir'];
const INGEST_TESTS = ['test/council', 'test/commands/federate'];
const SCAN_TESTS = ['test/memoir/format/scan', 'test/memoir/verify'];
const HOSTILE_TESTS = ['test/federation/hostile-council.test.ts'];
const BINDING_TESTS = ['test/council/round-binding.test.ts'];

export const MUTANTS = [
  // the split rule
  { id: 'split-bond-only-agent', file: 'src/memoir/format/split-rule.ts', find: "if (isBondOnly(e.agent)) return 'bond_only_agent';", replace: '', bug: 'Cupid and Puck entries are judged like any other agent', tests: SPLIT_TESTS },
  { id: 'split-player-revision', file: 'src/memoir/format/split-rule.ts', find: "  player_revision: 'instance',", replace: "  player_revision: 'pattern',", bug: "the player's own revisions may leave the forge", tests: SPLIT_TESTS },
  { id: 'split-council-event', file: 'src/memoir/format/split-rule.ts', find: "  council_event: 'instance',", replace: "  council_event: 'pattern',", bug: 'council events (the forge’s own choices) may leave', tests: SPLIT_TESTS },
  { id: 'split-interrupt-target', file: 'src/memoir/format/split-rule.ts', find: 'if (isBondOnly(e.interrupt.interrupting_agent) || isBondOnly(e.interrupt.target_agent))', replace: 'if (isBondOnly(e.interrupt.interrupting_agent))', bug: 'an interrupt aimed at Cupid or Puck may leave', tests: SPLIT_TESTS },
  { id: 'split-private-interrupt', file: 'src/memoir/format/split-rule.ts', find: "if (e.interrupt.visibility === 'private') return 'private_interrupt';", replace: "if (e.interrupt.visibility === 'silent') return 'private_interrupt';", bug: 'private interrupts may leave (silent ones may not)', tests: SPLIT_TESTS },
  // (ignoring private_only alone is an equivalent mutant: the schema refuses a split with both flags set)
  { id: 'split-task-description', file: 'src/memoir/format/split-rule.ts', find: "  task_description: 'instance',", replace: "  task_description: 'pattern',", bug: "the player's task descriptions (free text) may leave", tests: SPLIT_TESTS },
  { id: 'split-line-narrowing-ignored', file: 'src/memoir/format/split-rule.ts', find: "if (!claimsShared) return { shareable: false, reason: 'marked_private', lenient: false };", replace: '', bug: 'a line that says private is shared anyway', tests: SPLIT_TESTS },
  { id: 'split-revision-widens', file: 'src/memoir-index/index-build.ts', find: 'ORDER BY o.seq LIMIT 1) = 0`', replace: 'ORDER BY o.seq LIMIT 1) = 2`', bug: 'a revision of a private entry becomes shareable', tests: SPLIT_TESTS },

  // the accountant
  { id: 'rdp-sigma-for-sigma2-int', planted: true, file: 'src/privacy/rdp-accountant.ts', find: 'const s = logCoef + (i * i - i) / (2 * sigma * sigma);', replace: 'const s = logCoef + (i * i - i) / (2 * sigma);', bug: 'σ where σ² belongs (subsampled, integer orders)', tests: ACCOUNTANT_TESTS },
  { id: 'rdp-sigma-for-sigma2-frac', planted: true, file: 'src/privacy/rdp-accountant.ts', find: 'const s2 = 2 * sigma * sigma;', replace: 'const s2 = 2 * sigma;', bug: 'σ where σ² belongs (subsampled, fractional orders)', tests: ACCOUNTANT_TESTS },
  { id: 'rdp-z0', file: 'src/privacy/rdp-accountant.ts', find: 'const z0 = sigma * sigma * Math.log(1 / q - 1) + 0.5;', replace: 'const z0 = sigma * Math.log(1 / q - 1) + 0.5;', bug: 'the series split point uses σ for σ²', tests: ACCOUNTANT_TESTS },
  { id: 'rdp-full-batch', file: 'src/privacy/rdp-accountant.ts', find: 'if (q === 1) return alpha / (2 * sigma * sigma);', replace: 'if (q === 1) return alpha / (2 * sigma);', bug: 'q = 1 (every federation round) uses σ for σ²', tests: ACCOUNTANT_TESTS },
  { id: 'rdp-composition', file: 'src/privacy/rdp-accountant.ts', find: 'rdpOfStep(p.sampleRate, p.noiseMultiplier, a) * p.steps', replace: 'rdpOfStep(p.sampleRate, p.noiseMultiplier, a) * Math.sqrt(p.steps)', bug: 'rounds compose as √steps instead of adding up', tests: ACCOUNTANT_TESTS },
  { id: 'rdp-conversion', file: 'src/privacy/rdp-accountant.ts', find: ' + Math.log((a - 1) / a);', replace: ';', bug: 'the RDP → (ε, δ) conversion drops its last term', tests: ACCOUNTANT_TESTS },
  { id: 'rdp-series-truncated', file: 'src/privacy/rdp-accountant.ts', find: 'if (Math.max(logS0, logS1) < -30) break;', replace: 'if (Math.max(logS0, logS1) < -3) break;', bug: 'the fractional-order series stops early', tests: ACCOUNTANT_TESTS },
  { id: 'budget-most-spoken-first', file: 'src/privacy/budget.ts', find: 'sort((a, b) => accOf(a).steps - accOf(b).steps', replace: 'sort((a, b) => accOf(b).steps - accOf(a).steps', bug: 'agents that spoke most go first', tests: ACCOUNTANT_TESTS },
  { id: 'budget-forge-check-before', file: 'src/privacy/budget.ts', find: 'const forgeFits = forgeAfter <= config.forgeEpsilon;', replace: 'const forgeFits = forgeBefore <= config.forgeEpsilon;', bug: 'the plan checks the forge budget before the release, not after', tests: ACCOUNTANT_TESTS },
  { id: 'budget-agent-check', file: 'src/privacy/budget.ts', find: 'if (epsilonAgent > config.agentEpsilon) return', replace: 'if (epsilonAgent > 2 * config.agentEpsilon) return', bug: "the ledger's hard check lets an agent spend twice its budget", tests: ACCOUNTANT_TESTS },

  // the Krum family
  { id: 'krum-tie-last', planted: true, file: 'src/aggregation/krum.ts', find: 'if (best === -1 || (s[a] as number) < (scores[best] as number)) best = i;', replace: 'if (best === -1 || (s[a] as number) <= (scores[best] as number)) best = i;', bug: 'Krum takes the last of tied updates, not the first (Flower)', tests: KRUM_TESTS },
  { id: 'krum-neighbours', file: 'src/aggregation/krum.ts', find: 'return Math.max(1, n - f - 2);', replace: 'return Math.max(1, n - f - 1);', bug: 'scores sum n − f − 1 neighbours', tests: KRUM_TESTS },
  { id: 'krum-sum-one-more', file: 'src/aggregation/krum.ts', find: 'for (let t = 0; t < Math.min(k, c); t++) s += row[t] as number;', replace: 'for (let t = 0; t < Math.min(k + 1, c); t++) s += row[t] as number;', bug: 'each score sums one neighbour too many', tests: KRUM_TESTS },
  { id: 'multikrum-tie-order', file: 'src/aggregation/krum.ts', find: '(scores[a] as number) - (scores[b] as number) || a - b', replace: '(scores[a] as number) - (scores[b] as number) || b - a', bug: "Multi-Krum's tied cut prefers the higher index", tests: KRUM_TESTS },
  { id: 'krum-nonfinite-not-counted', file: 'src/aggregation/krum.ts', find: 'fEffective: Math.max(0, f - (dist.n - cand.length))', replace: 'fEffective: f', bug: 'non-finite updates do not count against f', tests: KRUM_TESTS },
  { id: 'krum-precondition', file: 'src/aggregation/krum.ts', find: 'if (n <= 2 * f + 2) {', replace: 'if (n < 2 * f + 2) {', bug: 'Krum runs with n = 2f + 2 (too few to tolerate f)', tests: KRUM_TESTS },
  // (a NaN score is unreachable: distances are recomputed directly when the Gram form cancels, so
  //  scores are sums of finite values or +Infinity; dropping the NaN guard is an equivalent mutant)
  { id: 'multikrum-default-m', file: 'src/aggregation/krum.ts', find: 'const keep = m ?? cand.length - fEffective;', replace: 'const keep = m ?? cand.length - fEffective - 1;', bug: 'Multi-Krum averages one update fewer than n − f by default', tests: KRUM_TESTS },
  { id: 'bulyan-theta', file: 'src/aggregation/bulyan.ts', find: 'const theta = remaining.length - 2 * fe;', replace: 'const theta = remaining.length - 2 * fe - 1;', bug: 'Bulyan selects θ − 1 updates', tests: KRUM_TESTS },
  { id: 'bulyan-beta', file: 'src/aggregation/bulyan.ts', find: 'const beta = theta - 2 * fe;', replace: 'const beta = theta - fe;', bug: 'Bulyan averages β = θ − f coordinates', tests: KRUM_TESTS },
  { id: 'bulyan-precondition', file: 'src/aggregation/bulyan.ts', find: 'if (n < 4 * f + 3) {', replace: 'if (n < 4 * f + 2) {', bug: 'Bulyan runs with n = 4f + 2', tests: KRUM_TESTS },

  // append
  { id: 'append-no-fsync-by-default', planted: true, file: 'src/memoir/file/append.ts', find: 'const durable = opts.fsync !== false;', replace: 'const durable = opts.fsync === true;', bug: 'appends are not fsynced unless asked', tests: APPEND_TESTS },
  { id: 'append-no-dir-fsync', file: 'src/memoir/file/append.ts', find: 'if (lock.created && durable) fsyncDir(path);', replace: '', bug: "a new memoir's directory is not fsynced", tests: APPEND_TESTS },
  { id: 'append-glues-torn-tail', file: 'src/memoir/file/append.ts', find: 'const torn = settleTornTail(lock, journal, { ...q, staleMs: opts.staleMs ?? DEFAULT_STALE_MS, deadline });', replace: 'const torn = deadline < 0 ? settleTornTail(lock, journal, { ...q, staleMs: 0, deadline }) : undefined;', bug: 'a torn tail is not quarantined: the next line is glued to it', tests: APPEND_TESTS },
  { id: 'append-no-final-newline', file: 'src/memoir/file/append.ts', find: 'return { entries, bytes: out.bytes(), narrowed };', replace: 'return { entries, bytes: out.bytes().subarray(0, -1), narrowed };', bug: 'the last line of a batch has no newline', tests: APPEND_TESTS },
  { id: 'encode-bytes-long-unescaped', file: 'src/memoir/format/encode-bytes.ts', find: 'if (n > LONG && !NEEDS_ESCAPE.test(s)) {', replace: 'if (n > LONG) {', bug: 'long strings are written without their escapes', tests: APPEND_TESTS },
  { id: 'encode-bytes-pair-copies-proposal', file: 'src/memoir/format/encode-bytes.ts', find: 'else if (p.text === delta && dAt >= 0) this.copyWithin(dAt, dEnd);', replace: 'else if (p.text === delta && dAt >= 0) this.copyWithin(pAt, pEnd);', bug: 'a preference text equal to the correction is written as the proposal', tests: APPEND_TESTS },
  { id: 'encode-bytes-lone-surrogate', file: 'src/memoir/format/encode-bytes.ts', find: 'if (d < 0xdc00 || d > 0xdfff) return false;', replace: 'if (d < 0xdc00 && d > 0xdfff) return false;', bug: 'a lone surrogate is written as bytes that are not UTF-8', tests: APPEND_TESTS },
  { id: 'encode-bytes-no-line-limit', file: 'src/memoir/format/encode-bytes.ts', find: 'if (!this.entry(e) || this.at - start > MAX_LINE_BYTES) {', replace: 'if (!this.entry(e)) {', bug: 'a line over MAX_LINE_BYTES is written', tests: APPEND_TESTS },
  { id: 'encode-bytes-reset-keeps-bytes', file: 'src/memoir/format/encode-bytes.ts', find: '  reset(capacity: number): void {\n    this.at = 0;\n', replace: '  reset(capacity: number): void {\n', bug: "a reused batch buffer keeps the previous batch's bytes (appended again)", tests: APPEND_TESTS },
  { id: 'journal-lines-by-length-only', file: 'src/memoir/file/recover.ts', find: 'return b.length === length && b[length - 1] === 10 && crc32(b) === table.readUInt32LE(k * 8 + 4);', replace: 'return b.length === length && b[length - 1] === 10;', bug: "rollback takes another writer's line of the same length for the batch's (part of a batch kept)", tests: APPEND_TESTS },
  { id: 'journal-short-line-kept', file: 'src/memoir/file/recover.ts', find: 'const mine = k === 0 ? commonPrefix(fd, s, first, size) : Math.min(batch.table.readUInt32LE(k * 8) - 1, size - at);', replace: 'const mine = k === 0 ? commonPrefix(fd, s, first, size) : 0;', bug: "rollback leaves a batch's line that was cut short in the memoir", tests: APPEND_TESTS },
  { id: 'append-no-lock', file: 'src/memoir/file/lock.ts', find: 'got = fsx.tryLock(fd);', replace: 'got = true;', bug: 'appends do not take the writer lock', tests: APPEND_TESTS },

  // ingest (the council's checks before anything is stored)
  { id: 'ingest-digest-content-only', planted: true, file: 'src/council/ingest.ts', find: 'h.update(JSON.stringify([sub.base_fingerprint, sub.privacy.clip_norm, sub.privacy.noise_multiplier, sub.weight ?? null]));', replace: 'h.update(JSON.stringify([sub.base_fingerprint]));', bug: 'the submission digest ignores privacy and weight', tests: INGEST_TESTS },
  { id: 'ingest-infinity-accepted', file: 'src/council/ingest.ts', find: 'if (x - x !== 0) {', replace: 'if (Number.isNaN(x)) {', bug: '±Infinity passes the finiteness check', tests: INGEST_TESTS },
  { id: 'ingest-norm-unchecked', file: 'src/council/ingest.ts', find: 'if (norm > bound) {', replace: 'if (norm > 10 * bound) {', bug: 'updates ten times over the norm bound are accepted', tests: INGEST_TESTS },
  { id: 'ingest-fingerprint-unchecked', file: 'src/council/ingest.ts', find: 'if (!opts.acceptedFingerprints.includes(sub.base_fingerprint)) {', replace: 'if (opts.acceptedFingerprints.length === 0) {', bug: 'updates for another base model are accepted', tests: INGEST_TESTS },
  { id: 'ingest-duplicate-names', file: 'src/council/ingest.ts', find: 'if (seen.has(t.name)) throw', replace: 'if (seen.has(t.name) && seen.size < 0) throw', bug: 'a tensor may appear twice', tests: INGEST_TESTS },
  { id: 'ingest-short-data', file: 'src/council/ingest.ts', find: 'if (bytes.byteLength !== spec.size * 4) {', replace: 'if (bytes.byteLength > spec.size * 4) {', bug: 'a tensor with too few bytes is accepted', tests: INGEST_TESTS },
  { id: 'protocol-headerless-accepted', file: 'src/council/protocol-check.ts', find: 'if (text === PROTOCOL_VERSION.toString()) return null;', replace: 'if (text === PROTOCOL_VERSION.toString() || text === undefined) return null;', bug: 'the council serves a request without Kourai-Protocol (a v1 forge)', tests: INGEST_TESTS },
  { id: 'protocol-client-silent', file: 'src/federation/council-client.ts', find: '[PROTOCOL_HEADER]: String(PROTOCOL_VERSION),', replace: '', bug: 'the forge does not say its protocol version', tests: INGEST_TESTS },
  // the byte scanner (src/memoir/format/scan/): it may only ever accept what the slow path accepts
  { id: 'scan-split-both-true', file: 'src/memoir/format/scan/canonical-line.ts', find: 'if (out.sharedEligible && out.privateOnly) return false;', replace: '', bug: 'a split with both flags true is taken as valid', tests: SCAN_TESTS },
  { id: 'scan-lone-low-surrogate', file: 'src/memoir/format/scan/canonical-line.ts', find: 'if (u < 0 || (u >= 0xdc00 && u <= 0xdfff)) return -1;', replace: 'if (u < 0) return -1;', bug: 'a lone low-surrogate escape is taken as text', tests: SCAN_TESTS },
  { id: 'scan-control-chars', file: 'src/memoir/format/scan/canonical-line.ts', find: '    if (c < 0x20) return -1;\n    p++;', replace: '    if (c < 0x0a) return -1;\n    p++;', bug: 'raw control characters inside strings are taken', tests: SCAN_TESTS },
  { id: 'scan-number-digits', file: 'src/memoir/format/scan/canonical-line.ts', find: 'if (digits <= 15 && e10 >= -22 && e10 <= 22)', replace: 'if (digits <= 19 && e10 >= -22 && e10 <= 22)', bug: 'long decimals are computed inexactly (a value JSON.parse would round differently)', tests: SCAN_TESTS },
  { id: 'scan-interrupt-type', file: 'src/memoir/format/scan/canonical-line.ts', find: "if (out.interrupt !== null && out.entryType !== null && out.entryType !== 'interrupt') return false;", replace: '', bug: 'interrupt details on an entry of another type are taken', tests: SCAN_TESTS },
  { id: 'scan-entry-id-length', file: 'src/memoir/format/scan/canonical-line.ts', find: 'e - s > 64', replace: 'e - s > 65', bug: 'a 65-character entry_id is taken', tests: SCAN_TESTS },
  { id: 'scan-recorded-at-hour', file: 'src/memoir/format/scan/canonical-line.ts', find: '(h0 === 0x32 && h1 >= 0x30 && h1 <= 0x33)', replace: '(h0 === 0x32 && h1 >= 0x30 && h1 <= 0x34)', bug: 'hour 24 is taken in recorded_at', tests: SCAN_TESTS },
  { id: 'verify-lazy-ids-no-reread', file: 'src/memoir/verify/verify-scan.ts', find: "if (lazy && supersedes.startsWith('py_')) c.needsDerivedIds = true;", replace: '', bug: 'a revision naming a Python line is judged without derived ids', tests: SCAN_TESTS },
  { id: 'scan-verify-occurrence', file: 'src/memoir/verify/verify.ts', find: 'const entryId = r.python && occurrence > 1 ? `${r.entryId}~${occurrence}` : r.entryId;', replace: 'const entryId = r.entryId;', bug: 'identical Python lines read by the scanner share one derived id', tests: SCAN_TESTS },
  // verify in ranges (worker threads): the merge must give the report of one read of the whole file
  { id: 'ranges-line-base', file: 'src/memoir/verify/verify.ts', find: 'if (c.last) this.lineBase += c.lines;', replace: 'if (c.last) this.lineBase += c.lines - 1;', bug: 'line numbers after a split are off by one', tests: SCAN_TESTS },
  { id: 'ranges-mid-line', file: 'src/memoir/verify/verify.ts', find: 'if (i >= 0) at = pos + i + 1;', replace: 'if (i >= 0) at = pos + i;', bug: 'a range starts at the newline, not after it', tests: SCAN_TESTS },
  { id: 'ranges-occurrence-last-chunk', file: 'src/memoir/verify/verify.ts', find: 'occurrence = this.occurrences.next(py, offset, length);', replace: 'occurrence = c.last ? 1 : this.occurrences.next(py, offset, length);', bug: 'identical Python lines in the last range are not numbered', tests: SCAN_TESTS },
  { id: 'ranges-problem-order', file: 'src/memoir/verify/verify.ts', find: '(c.problems[p] as ChunkProblem).line <= line)', replace: '(c.problems[p] as ChunkProblem).line < line)', bug: 'an identical line is reported before the lenient split of the same line', tests: SCAN_TESTS },
  { id: 'ranges-eager-occurrence-id', file: 'src/memoir/verify/verify.ts', find: 'if (occurrence > 1 && idHash >= 0) idHash = hash52Continue(idHash, `~${occurrence}`);', replace: '', bug: 'in the eager pass, identical Python lines get one id (false duplicates)', tests: SCAN_TESTS },
  { id: 'blocks-kept-chunk-reused', file: 'src/memoir/verify/verify.ts', find: 'freshChunks: !inTurn', replace: 'freshChunks: false', bug: 'a range read before its turn keeps one reused chunk (its lines overwritten)', tests: SCAN_TESTS },
  { id: 'blocks-early-out-of-order', file: 'src/memoir/verify/verify.ts', find: 'const mine = early.get(next);', replace: 'const mine = early.size > 0 ? early.get(next) ?? early.get(Math.max(...early.keys())) : undefined;', bug: 'a range read early is merged before the ranges ahead of it', tests: SCAN_TESTS },

  // the forge against its own council: the privacy floor, redirects, bounded answers, round binding
  { id: 'defend-floor-sigma', file: 'src/privacy/privacy-floor.ts', find: 'if (!(sigma >= floor.min_noise_multiplier))', replace: 'if (!(sigma >= 0))', bug: "a council σ below the player's own is followed", tests: HOSTILE_TESTS },
  { id: 'defend-floor-clip-max', file: 'src/privacy/privacy-floor.ts', find: 'if (!(s <= floor.clip_norm.max))', replace: 'if (!(s <= Infinity))', bug: 'an absurdly large council clip S (1e38) is followed', tests: HOSTILE_TESTS },
  { id: 'defend-floor-unchecked', file: 'src/privacy/council-policy.ts', find: '  if (below) {', replace: '  if (below && false) {', bug: 'the council policy is never checked against the floor', tests: HOSTILE_TESTS },
  { id: 'defend-redirect-followed', file: 'src/federation/council-client.ts', find: "redirect: 'manual',", replace: "redirect: 'follow',", bug: 'a redirect from the council is followed to another host', tests: HOSTILE_TESTS },
  { id: 'defend-answer-cap-kind', file: 'src/federation/council-client.ts', find: "return this.request('GET', ROUTES.health, HealthSchema, { auth: false, retry: true, maxBytes: ANSWER_LIMITS.small });", replace: "return this.request('GET', ROUTES.health, HealthSchema, { auth: false, retry: true, maxBytes: ANSWER_LIMITS.adapter });", bug: 'a health answer may be as large as an adapter', tests: HOSTILE_TESTS },
  { id: 'defend-answer-cap-stream', file: 'src/federation/council-client.ts', find: 'if (received > maxBytes) throw tooLarge(this.base, what, maxBytes);', replace: '', bug: 'an answer that does not declare its size is read whole, however large', tests: HOSTILE_TESTS },
  { id: 'defend-request-deadline', file: 'src/federation/council-client.ts', find: '    }, deadlineMs);', replace: '    }, deadlineMs * 1000);', bug: 'a silent or dripping council holds a request far past its deadline', tests: HOSTILE_TESTS },
  { id: 'defend-retry-budget-per-call', file: 'src/federation/round/retry.ts', find: '      spent.ms += Math.max(0, performance.now() - began);', replace: '', bug: "--retry-for does not count the time failed requests took (a silent council outlives it)", tests: HOSTILE_TESTS },
  { id: 'defend-round-mismatch', file: 'src/council/ingest.ts', find: 'if (k.round !== p.round) throw', replace: 'if (k.round < 0) throw', bug: "a release is accepted into another round than the one it was drawn for", tests: BINDING_TESTS },
  { id: 'defend-foreign-round-key', file: 'src/council/ingest.ts', find: '  if (k.councilKey !== own) {', replace: '  if (k.councilKey === "") {', bug: "a release whose round key names another forge is accepted", tests: BINDING_TESTS },
  { id: 'defend-replayed-release', file: 'src/council/council.ts', find: 'filter((s) => s.digest === digest && s.forgeId !== forge.id)', replace: 'filter((s) => s.digest === digest && s.forgeId === -1)', bug: "one forge's exact bytes are accepted from another forge", tests: BINDING_TESTS },
  { id: 'defend-anchor-held-key', file: 'src/federation/round/ledger-anchors.ts', find: 'council.push({ round: held ?? key, agent,', replace: 'council.push({ round: key, agent,', bug: "the ledger anchor ignores which release the council says it holds (a false roll-back alarm)", tests: BINDING_TESTS },
];
