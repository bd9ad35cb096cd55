/** Samples per split as the tabular folder holds them. */
export interface TabularSplitCounts {
  train: number;
  valid: number;
  test: number;
}

/** A project's tabular samples as the tabular trainer will see them. */
export interface TabularLayout {
  target: string;
  task: 'classification' | 'regression';
  classes: string[];
  counts: TabularSplitCounts;
}

/**
 * Where the tabular adapter's data comes from: the samples module writes a project's current tabular samples in the
 * layout `trainer/versa_trainer/tabular.py` reads (train/valid/test.csv, schema.json), the same writer as
 * `adapters/prepare {adapter: "tabular"}`. Training depends on this interface only; app.ts hands the samples module's
 * implementation over. Neither method checks access: the training service has, when the run was requested.
 */
export interface TabularDataSource {
  /** The target and the split counts the folder would have now, or null when the project has no tabular samples. */
  tabularLayout(projectId: number): Promise<TabularLayout | null>;
  /** Writes the folder into `dir` (which exists and is empty). */
  writeTabularFolder(projectId: number, dir: string): Promise<TabularLayout>;
}
