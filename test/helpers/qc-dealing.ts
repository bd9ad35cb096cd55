import assert from 'node:assert/strict';
import type { Client } from './test-app.js';

type User = Client & { id: number };

/** What a quality-control task names its item by: images' tasks and samples' tasks. */
export type TaskKey = 'image_id' | 'sample_id';

/** Each annotator submits the one task they were dealt this round (an annotator asked several times holds one). */
export async function submitHeld(dealt: { u: User; res: { body: any } }[], base: string, key: TaskKey): Promise<void> {
  const done = new Set<number>();
  for (const { u, res } of dealt) {
    if (done.has(u.id)) continue;
    done.add(u.id);
    assert.equal((await u.post(`${base}/tasks/${res.body.task[key]}/submit`)).status, 200);
  }
}

/** Every annotator takes and submits tasks, one at a time, until none is left. */
export async function drainTasks(annotators: User[], base: string, key: TaskKey): Promise<void> {
  for (let more = true; more;) {
    more = false;
    for (const u of annotators) {
      const next = await u.post(`${base}/tasks/next`);
      if (next.body.task === null) continue;
      more = true;
      assert.equal((await u.post(`${base}/tasks/${next.body.task[key]}/submit`)).status, 200);
    }
  }
}
