/**
 * The simulation's results, rendered:
 *   html.ts  the self-contained HTML report
 *   svg.ts   inline SVG charts for the HTML report
 *   text.ts  the results as terminal text
 *
 * Nothing is re-exported here: importers name the file they need.
 */
export {};
