/**
 * The council: the aggregation server's lifecycle, storage and views.
 *   council.ts             the round lifecycle: submissions, seals, closing, trust, the next round
 *   server.ts              the HTTP layer (Fastify): maps requests to council.ts
 *   upload.ts              the upload reader: an update checked and chunked as its body arrives
 *   body-json.ts           a JSON update body parsed as it arrives, base64 tensors streamed out
 *   ingest.ts              the checks of an update that need no database
 *   aggregate-round.ts     aggregating a closed round (server, simulator and tests run this code)
 *   aggregate-worker.ts    the worker thread that computes aggregates (worker-aggregator.ts runs it)
 *   worker-aggregator.ts   aggregation off the event loop
 *   trust.ts               trust and the exile rule (the Stoa Falls)
 *   root-set.ts            the operator's root set: what each update does to the shared preferences' pairs
 *   root-memoir.ts         the root set read from the operator's root memoir (`root_memoir`)
 *   outcome.ts             what an agent's aggregation in a round recorded
 *   round-settings.ts      the settings a round freezes when it opens
 *   council-policy.ts      the settings every process of one council must share
 *   config.ts              the council's settings: defaults < file < environment < flags
 *   layouts.ts             which adapter layout the council accepts for each agent
 *   layout-admin.ts        `council layout show|reset`
 *   public-init.ts         the public initialisation flattened in layout order
 *   norm-bound.ts          the protocol's norm check, as the council applies it
 *   auth.ts, tokens.ts     bearer tokens: issued once, kept as sha256
 *   forges.ts              forges as the operator manages them
 *   protocol-check.ts      the council's half of the version check
 *   http-error.ts          a refusal: status, code, message
 *   views.ts               the JSON documents, built from storage
 *   storage.ts             everything the council keeps, behind one interface
 *   sqlite-storage.ts      ... in council.db (one process)
 *   pg-storage.ts          ... in PostgreSQL (any number of processes); pg-schema.ts its migrations
 *   open-storage.ts        the storage the configuration names
 *
 * Nothing is re-exported here: importers name the file they need.
 */
export {};
