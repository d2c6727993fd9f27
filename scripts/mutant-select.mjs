// Which mutants `npm run mutants -- --only a,b*` means: comma-separated ids or globs (* = any run of
// characters, everything else literal), in the list's order, each once; patterns matching nothing
// are returned so the caller can refuse them by name.
export function selectMutants(only, ids) {
  const patterns = only.split(',').filter((p) => p !== '');
  const regexOf = (p) =>
    new RegExp(
      `^${p
        .split('*')
        .map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
        .join('.*')}$`,
    );
  const tests = patterns.map((p) => ({ p, re: regexOf(p) }));
  return {
    chosen: ids.filter((id) => tests.some((t) => t.re.test(id))),
    unmatched: tests.filter((t) => !ids.some((id) => t.re.test(id))).map((t) => t.p),
  };
}
