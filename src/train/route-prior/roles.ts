import type { Agent } from '../../memoir/format/agents.js';

/**
 * What each specialist is for, written down (the design's table of agents), and the words a task
 * uses when it asks for her. This is the routing head's prior: it holds before the player has
 * routed anything, and is the same in every forge. It is not learned from the sample forge.
 *
 * A cue is a word or phrase (matched on light stems, so "tests", "tested" and "testing" are one
 * cue) with a weight: 4–5 names the specialist's craft outright ("citation", "slop", "commit
 * message"), 2–3 is a strong hint, 1 or less a weak one that only tips a balance.
 *
 * Hephaestus orchestrates: he is the router and never a routing target. A task that asks to split
 * work across the team, order it or assign it is planning, so it goes to Metis.
 */
export interface SpecialistRole {
  /** One sentence: what she does. */
  role: string;
  /** Host task types (context.task_type) that name her work. */
  taskTypes: readonly string[];
  cues: readonly (readonly [cue: string, weight: number])[];
}

export const SPECIALIST_ROLES: Readonly<Partial<Record<Agent, SpecialistRole>>> = {
  metis: {
    role: 'Metis plans: breaks work into steps and phases, orders and estimates it, designs before code, splits a feature across the team.',
    taskTypes: ['plan', 'planning', 'design', 'roadmap'],
    cues: [
      ['plan', 3.5], ['planning', 3.5], ['roadmap', 4], ['milestone', 3], ['phase', 2.5], ['rollout', 2.5], ['roll out', 2.5],
      ['design', 1.5], ['architecture', 2.5], ['design doc', 3], ['rfc', 2], ['outline', 2.5], ['sketch', 1.5],
      ['break down', 3], ['break this', 2], ['break into', 2], ['into steps', 3], ['step by step', 2.5], ['steps', 1.5], ['decompose', 3],
      ['split this feature', 3], ['across the team', 3.5], ['workstream', 3.5], ['parallel', 1], ['assign', 2], ['who can start', 3],
      ['estimate', 3], ['risk', 2], ['prioritize', 3], ['prioritise', 3], ['backlog', 2.5], ['sprint', 1.5], ['where do i start', 3], ['where to start', 3],
      ['sequence', 2], ['order of work', 3], ['what order', 3], ['dependency graph', 2.5], ['strategy', 2.5], ['approach', 2], ['tradeoff', 2.5], ['trade-off', 2.5],
      ['scope', 2.5], ['mvp', 3], ['acceptance criteria', 3], ['coordinate', 2.5], ['think through', 2.5], ['think it through', 2.5], ['deprecate', 1],
      ['migration', 1.5], ['schema', 1], ['upgrade', 1], ['gradually', 1.5], ['incrementally', 1.5], ['before we', 1], ['the teams', 2], ['team', 1],
      ['decide', 1.5], ['ticket', 1.5], ['who does what', 3], ['lay out', 2], ['people', 1], ['deadline', 1.5], ['timeline', 3], ['what needs to happen', 2], ['split the work', 3], ['divide', 2], ['delegate', 2.5], ['go about', 2], ['how would you', 1.5], ['staffing', 2], ['weeks', 1], ['plan out', 3],
    ],
  },
  techne: {
    role: 'Techne writes and changes code: implements features, fixes bugs and crashes, refactors, ports, makes things faster.',
    taskTypes: ['code', 'coding', 'implement', 'bugfix', 'fix', 'refactor'],
    cues: [
      ['implement', 3], ['implementation', 3], ['fix', 1.5], ['bug', 2.5], ['crash', 2.5], ['error', 1], ['exception', 2], ['typeerror', 3], ['stack trace', 2.5],
      ['refactor', 2], ['faster', 2], ['slow', 2], ['performance', 2], ['optimize', 2], ['optimise', 2], ['memory leak', 3.5], ['leak', 2],
      ['segfault', 3], ['race condition', 3], ['hang', 2], ['freeze', 2], ['endpoint', 2], ['function', 1], ['feature', 1], ['flag', 1],
      ['support', 1], ['port', 2], ['migrate', 1], ['wire up', 2.5], ['hook up', 2.5], ['build fail', 2], ['broken', 2], ['null', 2], ['undefined', 2],
      ['nan', 2], ['off by one', 3], ['off-by-one', 3], ['handle', 1.5], ['cache', 1], ['webhook', 2], ['query', 1], ['async', 1], ['await', 1], ['callback', 1.5],
      ['toggle', 1.5], ['handler', 1.5], ['rate limit', 2], ['reconnect', 1.5], ['retry', 1.5], ['code', 0.5], ['add a', 0.5],
      ['extract', 1.5], ['module', 0.5], ['api', 0.5], ['returns', 1], ['stream', 1], ['doesnt work', 2], ["doesn't work", 2], ['not working', 2], ['blank', 1.5], ['wrong', 1], ['redirect', 1.5], ['sort out', 1], ['issue', 0.5], ['problem', 0.5], ['fails', 1], ['timeout', 1], ['login', 1], ['button', 1], ['page', 0.5], ['ui', 1], ['database', 0.5], ['websocket', 1], ['polling', 1], ['subscription', 1], ['regex', 1.5], ['compile', 1.5], ['install', 1], ['uncaught', 2.5], ['traceback', 3], ['panic', 2], ['throws', 1.5], ['exceeded', 1], ['importer', 1], ['returns', 1], ['skip', 0.5],
    ],
  },
  dokimasia: {
    role: 'Dokimasia tests: writes unit, regression, property and end-to-end tests, raises coverage, makes flaky tests deterministic.',
    taskTypes: ['test', 'tests', 'testing', 'qa'],
    cues: [
      ['test', 4], ['unit test', 4.5], ['regression test', 4.5], ['coverage', 3.5], ['covered', 2.5], ['cover', 2], ['flaky', 3.5], ['e2e', 2.5],
      ['integration test', 4], ['fixture', 2.5], ['mock', 2.5], ['stub', 2.5], ['assert', 2.5], ['assertion', 2.5], ['snapshot', 2], ['fuzz', 3.5],
      ['property-based', 3], ['property test', 3], ['pytest', 3], ['vitest', 2.5], ['jest', 2.5], ['load test', 3], ['edge case', 2.5], ['test case', 3],
      ['reproduce', 1.5], ['failing test', 3], ['golden-file', 2], ['mutation testing', 3], ['contract test', 3], ['deterministic', 1.5], ['smoke test', 3],
      ['tdd', 3], ['spec', 2], ['qa', 2], ['automated check', 3], ['automated', 1.5], ['harness', 3], ['catch', 1], ['regression', 2.5], ['ci', 1], ['passes', 1], ['scenario', 1.5], ['testable', 2], ['flake', 3],
    ],
  },
  kallos: {
    role: 'Kallos keeps code and prose well made: naming, readability, idiom, formatting and lint, consistent style.',
    taskTypes: ['style_review', 'style', 'review', 'lint', 'format'],
    cues: [
      ['style', 3], ['naming', 3], ['name', 1.5], ['rename', 2.5], ['readable', 3], ['readability', 3], ['hard to read', 3], ['idiomatic', 3], ['pythonic', 3],
      ['lint', 2.5], ['eslint', 2], ['prettier', 3], ['pretty', 2], ['ugly', 2], ['format', 1.5], ['formatting', 2.5], ['indentation', 3],
      ['line length', 2.5], ['tidy', 2], ['clean up', 2], ['cleanup', 2], ['consistent', 1.5], ['nitpick', 3], ['code smell', 3], ['magic number', 2],
      ['camelcase', 3], ['snake case', 2.5], ['dead code', 2.5], ['commented-out', 2], ['quote style', 3], ['style guide', 3], ['clear', 1],
      ['clearer', 1.5], ['descriptive', 2], ['variable names', 3], ['reorganize', 1.5], ['reorganise', 1.5], ['docstring', 1], ['wording', 1.5], ['concise', 1.5],
      ['polish', 2], ['simplify', 1.5], ['one-liner', 1.5], ['clever', 1.5], ['ternary', 2], ['restructure', 1], ['comments', 1], ['review', 1],
      ['unify', 1.5], ['abbreviation', 2], ['uniform', 2], ['messy', 1.5], ['mess', 1], ['easier to follow', 2.5], ['easier to read', 3], ['convention', 2.5], ['clean', 1.5], ['cleaner', 2], ['idiom', 2.5], ['consistency', 1.5], ['smaller functions', 2], ['smaller pieces', 1.5], ['all over the place', 1.5], ['formatting rules', 3],
    ],
  },
  mneme: {
    role: 'Mneme keeps the record: commit messages, history, changelogs and release notes, the story of what changed and why.',
    taskTypes: ['commit', 'commit_message', 'changelog', 'release_notes', 'history'],
    cues: [
      ['commit', 3], ['commit message', 4.5], ['commit msg', 4.5], ['msg', 1], ['changelog', 3.5], ['release notes', 4], ['release', 1.5], ['squash', 3],
      ['rebase', 2.5], ['git log', 3.5], ['git history', 3.5], ['history', 2], ['blame', 3], ['bisect', 2], ['tag', 1.5], ['pr description', 2],
      ['merge commit', 3], ['amend', 3], ['reword', 3], ['conventional commits', 3], ['ship', 1], ['summarize', 1.5], ['summarise', 1.5],
      ['what changed', 2], ['version bump', 3], ['bump', 1.5], ['log', 1], ['record', 1.5], ['archive', 2], ['for the reviewers', 1.5], ['merged', 1.5],
      ['who changed', 3], ['changes since', 2.5], ['write up', 1], ['went into', 1.5], ['version', 1], ['changes', 1], ['release announcement', 1],
    ],
  },
  aidos: {
    role: 'Aidos calls slop: text that reads machine-written, generic, padded with filler, buzzwords or hype, and says nothing.',
    taskTypes: ['slop', 'slop_review', 'slop_check', 'ai_detection'],
    cues: [
      ['slop', 5], ['sloppy', 3], ['ai slop', 5], ['ai-generated', 3.5], ['auto-generated', 2.5], ['autogenerated', 2.5], ['generated', 1.5], ['chatgpt', 2.5], ['gpt', 2.5],
      ['llm', 3], ['ai', 2], ['chatbot', 3], ['bot', 2], ['robotic', 3.5], ['generic', 3], ['filler', 4], ['fluff', 4], ['boilerplate', 3], ['buzzword', 4],
      ['hype', 3], ['word salad', 4], ['platitude', 4], ['hedging', 3], ['padded', 3], ['verbose', 1.5], ['sound like', 2.5], ['sounds like', 2.5], ['read like', 2],
      ['reads like', 1.5], ['authentic', 3.5], ['human', 1.5], ['noise', 2], ['meaningless', 3], ['vague', 2.5], ['empty', 1.5], ['delve', 4],
      ['important to note', 3], ['spam', 3], ['legit', 1.5], ['say anything', 2.5], ['tone', 1.5],
      ['wrote them', 1.5], ['written by', 1.5], ['real thinking', 2.5], ['useless', 1.5], ['sound canned', 3], ['canned answer', 3], ['canned response', 3], ['content mill', 3], ['corporate', 2], ['padding', 3], ['copy', 1.5], ['marketing', 1], ['cliché', 3], ['cliche', 3], ['unlock', 1], ['empower', 2], ['revolutionize', 2], ['synergy', 3], ['jargon', 2], ['wordy', 2], ['bland', 2.5], ['formulaic', 3], ['templated', 2], ['machine-written', 3.5], ['ai-written', 3.5], ['soulless', 3], ['repetitive', 2], ['a bot', 2], ['robust', 1], ['scalable', 1], ['seamless', 2], ['leverage', 1.5], ['comprehensive', 1],
    ],
  },
  aletheia: {
    role: 'Aletheia checks what is claimed: citations and references, sources, quotes, numbers and facts against the primary record.',
    taskTypes: ['citation', 'citations', 'fact_check', 'fact-check', 'verify'],
    cues: [
      ['citation', 5], ['cite', 4], ['cited', 4], ['source', 3], ['reference', 3.5], ['bibliography', 4], ['doi', 4], ['paper', 2.5], ['study', 2.5],
      ['fact-check', 5], ['fact check', 5], ['fact', 2], ['true', 2], ['is it true', 3], ['real', 1.5], ['exist', 2], ['accurate', 2.5], ['correct', 1.5],
      ['claim', 3], ['verify', 2], ['validate', 1], ['double check', 2], ['cross-check', 2.5], ['confirm', 2], ['quote', 2], ['quoted', 2], ['attributed', 3],
      ['link', 1.5], ['url', 1.5], ['statistics', 2], ['numbers', 1], ['footnote', 3], ['primary source', 4], ['wikipedia', 3], ['license', 1], ['cve', 2],
      ['hallucinated', 3], ['backs that up', 3], ['evidence', 3], ['come from', 1.5], ['official', 2], ['is that correct', 2], ['really say', 2.5], ['actually exist', 3],
      ['published', 1.5], ['original study', 3], ['check the tags', 1], ['actually true', 2.5], ['rfc', 1], ["where's that from", 3], ['where is that from', 3], ['actually say', 2.5], ['according to', 2], ['citation needed', 5], ['figures', 1], ['made up', 2.5], ['made-up', 2.5], ['fabricated', 3], ['misquoted', 3], ['debunk', 3], ['myth', 2], ['true or false', 3], ['percent', 1], ['stat', 2],
    ],
  },
};
