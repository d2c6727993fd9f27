/**
 * Shell completion scripts, generated from the command tree (src/cli.ts describes it): the
 * commands of each group, the options of each command, the choices of an option that has them,
 * and files for an option that takes any other value. One walk of the words typed so far finds
 * the command path; each shell then offers what that path accepts.
 */
export interface CompletionOption {
  /** `-q`, `--quiet` */
  flags: readonly string[];
  description: string;
  takesValue: boolean;
  choices?: readonly string[];
}

export interface CompletionNode {
  name: string;
  description: string;
  options: readonly CompletionOption[];
  commands: readonly CompletionNode[];
}

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

interface Flat {
  /** '' for the root, '/memoir/inspect' for `kourai memoir inspect`. */
  path: string;
  node: CompletionNode;
}

function flatten(node: CompletionNode, path = ''): Flat[] {
  return [{ path, node }, ...node.commands.flatMap((c) => flatten(c, `${path}/${c.name}`))];
}

const words = (f: Flat): string[] => [...f.node.commands.map((c) => c.name), ...f.node.options.flatMap((o) => o.flags)];
const sh = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

export function completionScript(shell: Shell, root: CompletionNode): string {
  const all = flatten(root);
  const paths = all.filter((f) => f.path !== '').map((f) => f.path);
  const name = root.name;
  if (shell === 'fish') return fish(name, all, paths);
  const fn = `_${name}`;
  // The shared walk: each word that names a subcommand of the path so far extends it.
  const walk = (first: string, last: string, word: string): string[] => [
    `  local kpath="" i w`,
    `  for ((i = ${first}; i < ${last}; i++)); do`,
    `    w="${word}"`,
    `    case "$kpath/$w" in`,
    `      ${paths.map(sh).join('|')}) kpath="$kpath/$w" ;;`,
    `    esac`,
    `  done`,
  ];
  const valueCases = (onChoices: (c: readonly string[]) => string, onFiles: string): string[] =>
    all.flatMap((f) =>
      f.node.options
        .filter((o) => o.takesValue)
        .map(
          (o) =>
            `    ${o.flags.map((fl) => sh(`${f.path}:${fl}`)).join('|')}) ${o.choices ? onChoices(o.choices) : onFiles}; return ;;`,
        ),
    );
  if (shell === 'bash') {
    return [
      `# ${name} completion for bash: add to ~/.bashrc:  source <(${name} completion bash)`,
      `${fn}() {`,
      `  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="\${COMP_WORDS[COMP_CWORD-1]}"`,
      ...walk('1', 'COMP_CWORD', '${COMP_WORDS[i]}'),
      `  case "$kpath:$prev" in`,
      ...valueCases((c) => `COMPREPLY=($(compgen -W ${sh(c.join(' '))} -- "$cur"))`, 'COMPREPLY=()'),
      `  esac`,
      `  local words=""`,
      `  case "$kpath" in`,
      ...all.map((f) => `    ${sh(f.path)}) words=${sh(words(f).join(' '))} ;;`),
      `  esac`,
      `  COMPREPLY=($(compgen -W "$words" -- "$cur"))`,
      `}`,
      `complete -o default -F ${fn} ${name}`,
      '',
    ].join('\n');
  }
  return [
    `#compdef ${name}`,
    `# ${name} completion for zsh: add to ~/.zshrc (after compinit):  source <(${name} completion zsh)`,
    `${fn}() {`,
    `  local cur="\${words[CURRENT]}" prev="\${words[CURRENT-1]}"`,
    ...walk('2', 'CURRENT', '${words[i]}'),
    `  case "$kpath:$prev" in`,
    ...valueCases((c) => `compadd -- ${c.map(sh).join(' ')}`, '_files'),
    `  esac`,
    `  local -a next`,
    `  case "$kpath" in`,
    ...all.map((f) => `    ${sh(f.path)}) next=(${words(f).map(sh).join(' ')}) ;;`),
    `  esac`,
    `  compadd -- "\${next[@]}"`,
    `}`,
    `if [ "\${funcstack[1]}" = "${fn}" ]; then ${fn} "$@"; else compdef ${fn} ${name}; fi`,
    '',
  ].join('\n');
}

function fish(name: string, all: Flat[], paths: string[]): string {
  const q = (s: string): string => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  const fn = `__${name}_path`;
  // The path is printed after the command's name, so the root is never an empty word.
  const at = (path: string): string => q(`test (${fn}) = ${name}${path}`);
  const lines = [
    `# ${name} completion for fish: ${name} completion fish > ~/.config/fish/completions/${name}.fish`,
    `function ${fn}`,
    `  set -l p ''`,
    `  for w in (commandline -opc)[2..-1]`,
    `    switch "$p/$w"`,
    `      case ${paths.map(q).join(' ')}`,
    `        set p "$p/$w"`,
    `    end`,
    `  end`,
    `  echo ${name}$p`,
    `end`,
  ];
  for (const f of all) {
    for (const c of f.node.commands)
      lines.push(`complete -c ${name} -f -n ${at(f.path)} -a ${q(c.name)} -d ${q(c.description)}`);
    for (const o of f.node.options) {
      const flags = o.flags.map((fl) => (fl.startsWith('--') ? `-l ${fl.slice(2)}` : `-s ${fl.slice(1)}`)).join(' ');
      const value = o.choices ? ` -x -a ${q(o.choices.join(' '))}` : o.takesValue ? ' -r' : '';
      lines.push(`complete -c ${name} -n ${at(f.path)} ${flags}${value} -d ${q(o.description)}`);
    }
  }
  return `${lines.join('\n')}\n`;
}
