import { hashString } from '../encoder/hashed-ngrams.js';

/** Whether a pair is listed chosen-first: a fixed coin per pair, so list order tells nothing. */
export function chosenFirst(key: string): boolean {
  return (hashString(key, 0x5eed) & 1) === 1;
}
