import type { Linter } from 'eslint';

/** The layer rules of the tree at `root` (see eslint.layers.js). */
export function layerBlocks(root: string): Linter.Config[];
