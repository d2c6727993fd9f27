/**
 * One memoir line: what it may hold and how it is written.
 *   fields.ts          the keys of a line in order, and each extension's kind: the one list of them
 *   schema.ts          the entry (the ten upstream keys and kourai's extensions), zod
 *   agents.ts          the ten agents; which federate
 *   sources.ts         sources, entry types, response kinds and the other closed vocabularies
 *   split-rule.ts      may an entry ever leave the forge
 *   entry-id.ts        ULIDs, and the ids derived from a Python line's bytes
 *   limits.ts          the largest line read or written
 *   parse.ts           a line of text to an entry (fast check first, zod words the errors)
 *   fast-validate.ts   the schema as a hand-written check (the read path)
 *   fast-input.ts      upstream defaults and checks for a new entry without zod (the append path)
 *   encode.ts          an entry to its line, byte-identical to pydantic's model_dump_json()
 *   encode-bytes.ts    the same, as UTF-8 straight into a batch buffer
 *   python-json.ts     JSON numbers and strings as pydantic-core writes them
 *   py-object.ts       a context (any JSON object) kept and re-encoded as pydantic writes it
 *   lax.ts             pydantic's lax coercions ("0.5" as a float, "yes" as a bool)
 *   lax-json.ts        JSON with pydantic's NaN / Infinity tokens (the fallback after JSON.parse)
 *   unread.ts          kourai extension values kourai cannot read: kept as written, not read, entry private
 *   preference.ts      the preference pair kourai reads from a label's list
 *   utf8.ts            UTF-8 checks (lone surrogates, the first invalid byte)
 *   scan/              a byte scanner for lines laid out as kourai and Python write them
 *
 * Nothing is re-exported here: importers name the file they need, so a command loads only that.
 */
export {};
