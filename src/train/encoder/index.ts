/**
 * The text encoders and the base's input vector:
 *   embeddings-client.ts  a client for OpenAI-compatible `POST /v1/embeddings`
 *   hashed-ngrams.ts      the built-in encoder: hashed features of form
 *   inputs.ts             the base's input vector for a text (and the prompt it answers)
 *   structure.ts          structure features: a text's length and shape, and its prompt
 *
 * Nothing is re-exported here: importers name the file they need.
 */
export {};
