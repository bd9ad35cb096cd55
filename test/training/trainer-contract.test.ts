import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, it } from 'node:test';
import { TRAINER_CONTRACT_FILE, trainerContractText } from '../../src/training/trainer-contract.js';

describe('trainer/versa_trainer/contract.json', () => {
  it('is generated from the server\'s protocol and parameters (npx tsx scripts/trainer-contract.ts)', async () => {
    const committed = await readFile(TRAINER_CONTRACT_FILE, 'utf8');
    assert.equal(committed, trainerContractText(), 'stale: run `npx tsx scripts/trainer-contract.ts` and commit the file');
  });
});
