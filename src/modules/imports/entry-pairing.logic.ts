/** A dataset entry, staged as an image, whose bytes another image (staged or of the project) has too. */
export interface StagedEntry {
  id: number;
  sha256: string;
  original_name: string;
}

/** An image of the project whose bytes a staged entry has. */
export interface ProjectImageOfBytes {
  id: number;
  sha256: string;
  original_name: string;
}

export interface EntryPlan {
  /** Entries given to an image the project has: their labels go to that image, one entry per image. */
  merges: { staged: number; into: number }[];
  /** Entries that become images of their own while another image of the project has the same bytes, in dataset order. */
  shared: { staged: number; file: string; sameAs: string }[];
}

/**
 * What becomes of the entries of a dataset whose bytes are not unique (issue 18: every entry a dataset lists is kept,
 * with its labels). An entry whose bytes the project has gives its labels to one of those images: the one of its own
 * name first (importing the same dataset again adds to each image its own entry's labels), then the others in age
 * order, each image taking one entry. The entries left over become images of their own that share their bytes with
 * the project's oldest image of them, or with the dataset's first entry of them; the quality checks flag them as
 * exact duplicates.
 *
 * `staged` in dataset order, `existing` oldest first; both only of bytes that occur more than once between them.
 */
export function planEntries(staged: StagedEntry[], existing: ProjectImageOfBytes[]): EntryPlan {
  const imagesBySha = groupBySha(existing);
  const merges: EntryPlan['merges'] = [];
  const sameAs = new Map<number, string>();
  for (const [sha256, entries] of groupBySha(staged)) {
    const images = imagesBySha.get(sha256) ?? [];
    const free = new Set(images);
    const byName = new Map<string, ProjectImageOfBytes[]>();
    for (const image of images) {
      const named = byName.get(image.original_name);
      if (named) named.push(image);
      else byName.set(image.original_name, [image]);
    }
    const left: StagedEntry[] = [];
    for (const entry of entries) {
      const named = byName.get(entry.original_name)?.shift();
      if (named) {
        merges.push({ staged: entry.id, into: named.id });
        free.delete(named);
      } else {
        left.push(entry);
      }
    }
    // Sets iterate in insertion order: the project's images oldest first.
    const rest = free.values();
    const unpaired = left.filter((entry) => {
      const next = rest.next();
      if (next.done) return true;
      merges.push({ staged: entry.id, into: next.value.id });
      return false;
    });
    const first = images[0]?.original_name;
    if (first !== undefined) for (const entry of unpaired) sameAs.set(entry.id, first);
    else for (const entry of unpaired.slice(1)) sameAs.set(entry.id, unpaired[0]!.original_name);
  }
  const shared = staged.filter((entry) => sameAs.has(entry.id)).map((entry) => ({ staged: entry.id, file: entry.original_name, sameAs: sameAs.get(entry.id)! }));
  return { merges, shared };
}

function groupBySha<T extends { sha256: string }>(rows: T[]): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const row of rows) {
    const group = groups.get(row.sha256);
    if (group) group.push(row);
    else groups.set(row.sha256, [row]);
  }
  return groups;
}
