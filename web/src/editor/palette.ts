/** The server's class palette (src/modules/classes/classes.service.ts CLASS_PALETTE): 48 distinct colours. */
export const CLASS_PALETTE = [
  '#ec1313', '#932110', '#ec9679', '#13ec9b', '#109372', '#79ecde', '#ec13b6', '#931062',
  '#ec79b3', '#2eec13', '#109310', '#79ec87', '#7f13ec', '#621093', '#cf79ec', '#d1ec13',
  '#729310', '#c1ec79', '#1349ec', '#102193', '#7979ec', '#ec6413', '#935210', '#ecc179',
  '#13ecec', '#108393', '#79cfec', '#ec1364', '#931031', '#ec7987', '#13ec49', '#109341',
  '#79ecb3', '#d113ec', '#931093', '#ec79de', '#80ec13', '#419310', '#96ec79', '#2e13ec',
  '#311093', '#a479ec', '#ecb613', '#938310', '#ecec79', '#139bec', '#105293', '#79a4ec',
] as const;

/** A stable colour for a class known only by name (version previews). */
export function classColor(name: string): string {
  let h = 0;
  for (let i = 0; i < name.length; i++) h = (h * 31 + name.charCodeAt(i)) >>> 0;
  return CLASS_PALETTE[h % CLASS_PALETTE.length];
}

/**
 * The colours to draw a project's classes with: each class keeps its own colour unless an earlier class already
 * uses it (projects created before the 48-colour palette repeated colours), then it takes the next unused palette
 * colour. So every class of a project with up to 48 classes is drawn in a colour of its own.
 */
export function displayColors(classes: readonly { id: number; color: string }[]): Map<number, string> {
  const used = new Set<string>();
  const out = new Map<number, string>();
  let next = 0;
  for (const c of classes) {
    let color = c.color.toLowerCase();
    if (used.has(color)) {
      while (next < CLASS_PALETTE.length && used.has(CLASS_PALETTE[next])) next++;
      color = next < CLASS_PALETTE.length ? CLASS_PALETTE[next] : color;
    }
    used.add(color);
    out.set(c.id, color);
  }
  return out;
}
