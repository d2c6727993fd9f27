/**
 * Human and machine output of the commands:
 *   applied-text.ts    the footer of `score` and `route`: the adapters used and why
 *   color.ts           the one Chalk instance per colour level
 *   completion.ts      shell completion scripts generated from the command tree
 *   error-document.ts  the JSON error document a failed --json command prints
 *   error-schema.ts    the schema of that document
 *   index-feedback.ts  progress and warnings on stderr while the memoir index is brought up to date
 *   json.ts            one JSON document, or one NDJSON record, on stdout
 *   notice.ts          `note:` and `warning:` lines on stderr
 *   progress.ts        a progress bar on a TTY, plain lines otherwise
 *   round-text.ts      a federation round's progress on stderr
 *   sanitize.ts        the one rule for what human output may send to a terminal
 *   sparkline.ts       a one-line chart of a series
 *   story-text.ts      the replay as plain text
 *   table.ts           plain-text tables with alignment and width-aware truncation
 *   theme.ts           the palette of every screen and text view
 *
 * Nothing is re-exported here: importers name the file they need.
 */
export {};
