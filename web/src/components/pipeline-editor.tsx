import { useEffect, useRef } from 'react';
import { basicSetup, EditorView } from 'codemirror';
import { yaml } from '@codemirror/lang-yaml';
import { linter, lintGutter, type Diagnostic } from '@codemirror/lint';
import { EditorState } from '@codemirror/state';

export interface EditorProblem {
  path: string;
  message: string;
  line?: number;
  column?: number;
}

/**
 * The YAML editor of the Pipelines tab: CodeMirror 6 with its YAML mode and a lint gutter. `check` validates the
 * text (the server's validate-yaml) and its problems are shown at their lines.
 */
export function PipelineEditor({ value, onChange, check }: { value: string; onChange: (text: string) => void; check: (text: string) => Promise<EditorProblem[]> }) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const latest = useRef({ onChange, check });
  latest.current = { onChange, check };
  /**
   * Texts the editor reported that the parent has not rendered yet, oldest first: a `value` among them is the parent
   * catching up (maybe several keys late), not a new document; once rendered, it and the older ones are dropped, so a
   * later reset to an earlier text still replaces the document.
   */
  const pending = useRef<string[]>([]);
  const applying = useRef(false);

  useEffect(() => {
    const lint = linter(
      async (v) => {
        const text = v.state.doc.toString();
        const problems = await latest.current.check(text).catch((): EditorProblem[] => []);
        return problems.map((p): Diagnostic => {
          const lineNo = Math.min(Math.max(1, p.line ?? 1), v.state.doc.lines);
          const line = v.state.doc.line(lineNo);
          const from = Math.min(line.from + Math.max(0, (p.column ?? 1) - 1), line.to);
          return { from, to: Math.max(from, line.to), severity: 'error', message: p.path ? `${p.path}: ${p.message}` : p.message };
        });
      },
      { delay: 400 },
    );
    // CodeMirror injects its styles; the pages' CSP (style-src 'self') refuses <style> elements, so the editor lives
    // in a shadow root, where its styles go in through adoptedStyleSheets instead.
    const shadow = host.current!.shadowRoot ?? host.current!.attachShadow({ mode: 'open' });
    shadow.replaceChildren();
    const parent = document.createElement('div');
    shadow.append(parent);
    view.current = new EditorView({
      root: shadow,
      parent,
      state: EditorState.create({
        doc: value,
        extensions: [
          basicSetup,
          yaml(),
          EditorView.lineWrapping,
          EditorView.theme({ '&': { minHeight: '220px', fontSize: '13px' }, '.cm-scroller': { fontFamily: 'ui-monospace, monospace' } }),
          lintGutter(),
          lint,
          EditorView.updateListener.of((u) => {
            if (!u.docChanged) return;
            if (applying.current) return;
            const text = u.state.doc.toString();
            if (pending.current.push(text) > 256) pending.current.shift();
            latest.current.onChange(text);
          }),
        ],
      }),
    });
    return () => view.current?.destroy();
    // The editor is made once per mount; a new document arrives through the effect below.
  }, []);

  useEffect(() => {
    // Only a document from outside replaces the text: a render that lags behind the typing (its `value` is an
    // earlier keystroke's) would otherwise undo the keys typed since.
    const v = view.current;
    const caughtUp = pending.current.indexOf(value);
    if (caughtUp >= 0) pending.current.splice(0, caughtUp + 1);
    if (!v || caughtUp >= 0 || v.state.doc.toString() === value) return;
    pending.current = [];
    applying.current = true;
    try {
      v.dispatch({ changes: { from: 0, to: v.state.doc.length, insert: value } });
    } finally {
      applying.current = false;
    }
  }, [value]);

  return <div ref={host} className="yaml-editor" data-testid="yaml-editor" />;
}
