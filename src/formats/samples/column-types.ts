/** Column type inference for tabular samples: every non-empty cell of a column must fit the type. */
export const COLUMN_TYPES = ['integer', 'number', 'boolean', 'category', 'text', 'date'] as const;
export type ColumnType = (typeof COLUMN_TYPES)[number];

const INTEGER = /^[-+]?\d{1,15}$/;
const NUMBER = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;
const BOOLEAN = new Set(['true', 'false', 'yes', 'no']);
const DATE = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/;
/** A column with at most this many distinct values (and few relative to its rows) is a category. */
const MAX_CATEGORIES = 50;

/** Accumulates what one column's cells allow. Empty cells are missing values and fit every type. */
export class ColumnProfile {
  integer = true;
  number = true;
  boolean = true;
  date = true;
  values = 0;
  readonly distinct = new Set<string>();
  overflow = false;

  add(cell: string): void {
    if (cell === '') return;
    this.values++;
    if (this.integer && !INTEGER.test(cell)) this.integer = false;
    if (this.number && !NUMBER.test(cell)) this.number = false;
    if (this.boolean && !BOOLEAN.has(cell.toLowerCase())) this.boolean = false;
    if (this.date && !(DATE.test(cell) && !Number.isNaN(Date.parse(cell)))) this.date = false;
    if (!this.overflow) {
      this.distinct.add(cell);
      if (this.distinct.size > MAX_CATEGORIES) {
        this.overflow = true;
        this.distinct.clear();
      }
    }
  }

  type(): ColumnType {
    if (this.values === 0) return 'text';
    if (this.boolean) return 'boolean';
    if (this.integer) return 'integer';
    if (this.number) return 'number';
    if (this.date) return 'date';
    if (!this.overflow && this.distinct.size <= Math.max(2, this.values / 2)) return 'category';
    return 'text';
  }
}

/** A cell as its column's type: null when empty. */
export function convertCell(cell: string, type: ColumnType): string | number | boolean | null {
  if (cell === '') return null;
  switch (type) {
    case 'integer':
    case 'number':
      return Number(cell);
    case 'boolean':
      return ['true', 'yes'].includes(cell.toLowerCase());
    default:
      return cell;
  }
}
