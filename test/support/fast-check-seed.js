// Loaded by jest before every spec and suite (setupFiles): every fast-check property of a run
// draws from the one seed jest.config.js chose (or FC_SEED gave), so a failure replays with
// FC_SEED=<seed> (and FC_PATH=<path> to jump straight to the shrunk counterexample).
const fc = require('fast-check');

const seed = Number(process.env.FC_SEED);
if (!Number.isInteger(seed)) throw new Error(`FC_SEED must be an integer (got "${process.env.FC_SEED}")`);
const settings = { seed };
if (process.env.FC_PATH) settings.path = process.env.FC_PATH;
if (process.env.FC_NUM_RUNS) settings.numRuns = Number(process.env.FC_NUM_RUNS);
fc.configureGlobal({ ...fc.readConfigureGlobal(), ...settings });
