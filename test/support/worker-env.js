// Loaded in every integration worker before its suites (setupFiles): the worker takes its lane
// (database, Redis key prefix, data folder, admin token) from the global setup's TEST_LANES by
// JEST_WORKER_ID, so the suites of two workers never share data. In band, it is lane 1. TEST_LANES
// holds every lane's admin token: it is taken out of the environment the apps inherit.
if (process.env.TEST_LANES) {
  const lanes = JSON.parse(process.env.TEST_LANES);
  const lane = (Number(process.env.JEST_WORKER_ID ?? 1) - 1) % lanes.length;
  delete process.env.TEST_LANES;
  Object.assign(process.env, lanes[lane], { TEST_LANE: String(lane + 1) });
}
