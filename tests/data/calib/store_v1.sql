-- A calibration store of schema version 1, for the v1 -> v2 migration test
-- (tests/test_calib_store.c). Version 1 is version 2 without
-- cases.check_rel_err and devices.device_count. One device, one run, two
-- cases (one GEMM with a cuBLAS main kernel plus a split-K reduction and
-- DRAM counters, one copy), hand-written values.
PRAGMA foreign_keys = ON;
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE devices (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL, hw_name TEXT NOT NULL, uuid TEXT NOT NULL,
  sms INTEGER NOT NULL,
  hbm_bytes REAL, l2_bytes REAL, sm_clock_max_hz REAL, mem_clock_hz REAL,
  driver TEXT NOT NULL, cuda_runtime TEXT NOT NULL, cupti TEXT NOT NULL,
  cublas TEXT NOT NULL, nccl TEXT NOT NULL);
CREATE TABLE runs (
  id INTEGER PRIMARY KEY,
  device_id INTEGER NOT NULL REFERENCES devices(id),
  started_at TEXT NOT NULL, host TEXT NOT NULL, tool TEXT NOT NULL,
  quick INTEGER NOT NULL, notes TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('running', 'complete')));
CREATE TABLE cases (
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  op_spec TEXT NOT NULL, op_class TEXT NOT NULL, impl TEXT NOT NULL,
  split TEXT NOT NULL CHECK (split IN ('fit', 'holdout')),
  flops_declared REAL, bytes_declared REAL, reps INTEGER NOT NULL,
  time_median_s REAL NOT NULL, time_min_s REAL, time_p10_s REAL, time_p90_s REAL,
  sm_clock_hz REAL);
CREATE TABLE kernels (
  id INTEGER PRIMARY KEY,
  case_id INTEGER NOT NULL REFERENCES cases(id) ON DELETE CASCADE,
  seq INTEGER NOT NULL, name TEXT NOT NULL,
  grid_x INTEGER NOT NULL, grid_y INTEGER NOT NULL, grid_z INTEGER NOT NULL,
  block_x INTEGER NOT NULL, block_y INTEGER NOT NULL, block_z INTEGER NOT NULL,
  regs_per_thread INTEGER NOT NULL, static_smem_bytes INTEGER NOT NULL,
  dynamic_smem_bytes INTEGER NOT NULL, duration_median_s REAL,
  launches_per_rep INTEGER NOT NULL);
CREATE TABLE counters (
  case_id INTEGER NOT NULL REFERENCES cases(id) ON DELETE CASCADE,
  name TEXT NOT NULL, value REAL,
  PRIMARY KEY (case_id, name));
CREATE INDEX runs_device ON runs(device_id);
CREATE INDEX cases_run ON cases(run_id);
CREATE INDEX cases_class ON cases(op_class, split);
CREATE INDEX kernels_case ON kernels(case_id, seq);
CREATE INDEX devices_hw ON devices(hw_name);
INSERT INTO meta VALUES ('schema_version', '1');
INSERT INTO devices VALUES (1, 'NVIDIA H200', 'h200', 'GPU-0000', 132,
  150754820096, 62914560, 1.98e9, 3.201e9, '580.159.04', '13.0', '130001', '13.0.0', '');
INSERT INTO runs VALUES (1, 1, '2026-11-01T10:00:00Z', 'calib-host', 'llmsim-calib-runner 0.0.9',
  0, 'v1 fixture', 'complete');
INSERT INTO cases VALUES (1, 1, 'gemm m=4096 n=4096 k=4096', 'gemm', 'cublas', 'fit',
  137438953472, 100663296, 50, 1.9e-4, 1.85e-4, 1.87e-4, 1.95e-4, 1.98e9);
INSERT INTO cases VALUES (2, 1, 'ew kind=copy tokens=65536 hidden=8192', 'elementwise',
  'stream_copy', 'holdout', 0, 2147483648, 50, 5.1e-4, 5.0e-4, 5.05e-4, 5.2e-4, 0);
INSERT INTO kernels VALUES (1, 1, 0, 'nvjet_sm90_tst_256x128_64x4', 16, 32, 1, 384, 1, 1,
  168, 0, 213056, 1.8e-4, 1);
INSERT INTO kernels VALUES (2, 1, 1, 'splitKreduce_kernel', 256, 1, 1, 256, 1, 1,
  32, 0, 0, 1.0e-5, 1);
INSERT INTO counters VALUES (2, 'dram__bytes_read.sum', 1073741824);
INSERT INTO counters VALUES (2, 'dram__bytes_write.sum', 1073741824);
