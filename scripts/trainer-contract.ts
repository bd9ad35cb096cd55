/**
 * Writes trainer/versa_trainer/contract.json, the Python trainers' copy of the trainer protocol and of the training
 * parameters, from their one definition on the server side (src/training/trainer-protocol.ts, src/training/adapters.ts).
 * test/training/trainer-contract.test.ts fails while the committed file differs.
 *
 *   npx tsx scripts/trainer-contract.ts
 */
import { writeFileSync } from 'node:fs';
import { TRAINER_CONTRACT_FILE, trainerContractText } from '../src/training/trainer-contract.js';

writeFileSync(TRAINER_CONTRACT_FILE, trainerContractText());
console.log(`wrote ${TRAINER_CONTRACT_FILE}`);
