/** What every rule returns: the aggregate and which updates it used. */
export interface RuleResult {
  /** The aggregated update, float64. */
  aggregate: Float64Array;
  /** Input indices that contributed to the aggregate (selection order for Krum/Bulyan). */
  used: number[];
  /** Input indices dropped because they contain NaN/Inf. */
  nonFinite: number[];
}
