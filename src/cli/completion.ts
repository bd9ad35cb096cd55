import { UsageError } from './context.js';
import type { Command } from './commands.js';

/**
 * `versa completion bash|zsh`: a script completing command words and each command's options, built from the command
 * table so it never drifts from it. Install: `versa completion bash > /etc/bash_completion.d/versa`, or
 * `source <(versa completion bash)`; zsh: `versa completion zsh > "${fpath[1]}/_versa"`.
 */
export function completionScript(shell: string, commands: Command[], globalOptions: string[]): string {
  const top = [...new Set([...commands.map((c) => c.name.split(' ')[0]), 'completion', 'help'])];
  const subs = new Map<string, string[]>();
  for (const c of commands) {
    const [group, sub] = c.name.split(' ');
    if (sub) subs.set(group, [...(subs.get(group) ?? []), sub]);
  }
  subs.set('completion', ['bash', 'zsh']);
  const optionsOf = (c: Command) => [...c.options, ...globalOptions].join(' ');
  if (shell === 'bash') {
    const subCases = [...subs].map(([g, s]) => `    ${g}) words_here="${s.join(' ')}" ;;`).join('\n');
    return `# bash completion for versa (versa completion bash)
_versa() {
  local cur="\${COMP_WORDS[COMP_CWORD]}"
  local first="\${COMP_WORDS[1]}" second="\${COMP_WORDS[2]}"
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=( $(compgen -W "${top.join(' ')}" -- "$cur") ); return
  fi
  local words_here=""
  case "$first" in
${subCases}
  esac
  if [ "$COMP_CWORD" -eq 2 ] && [ -n "$words_here" ] && [[ "$cur" != -* ]]; then
    COMPREPLY=( $(compgen -W "$words_here" -- "$cur") ); return
  fi
  local opts="${globalOptions.join(' ')}"
  case "$first $second" in
${commands.filter((c) => c.name.includes(' ')).map((c) => `    "${c.name}") opts="${optionsOf(c)}" ;;`).join('\n')}
    *) case "$first" in
${commands.filter((c) => !c.name.includes(' ')).map((c) => `      "${c.name}") opts="${optionsOf(c)}" ;;`).join('\n')}
       esac ;;
  esac
  if [[ "$cur" == -* ]]; then COMPREPLY=( $(compgen -W "$opts" -- "$cur") ); else COMPREPLY=( $(compgen -f -- "$cur") ); fi
}
complete -o filenames -F _versa versa
`;
  }
  if (shell === 'zsh') {
    const subCases = [...subs].map(([g, s]) => `      ${g}) compadd -- ${s.join(' ')} ;;`).join('\n');
    const optCases = commands.map((c) => `    "${c.name}"${c.name.includes(' ') ? '' : `|"${c.name} "*`}) compadd -- ${optionsOf(c)} ;;`).join('\n');
    return `#compdef versa
# zsh completion for versa (versa completion zsh > "\${fpath[1]}/_versa")
_versa() {
  if (( CURRENT == 2 )); then
    compadd -- ${top.join(' ')}; return
  fi
  if (( CURRENT == 3 )) && [[ "\${words[CURRENT]}" != -* ]]; then
    case "\${words[2]}" in
${subCases}
      *) _files ;;
    esac
    return
  fi
  if [[ "\${words[CURRENT]}" == -* ]]; then
    case "\${words[2]} \${words[3]}" in
${optCases}
      *) compadd -- ${globalOptions.join(' ')} ;;
    esac
  else
    _files
  fi
}
compdef _versa versa
`;
  }
  throw new UsageError('completion takes bash or zsh');
}
