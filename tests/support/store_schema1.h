// Turns a current store into the schema 2 layout, or into the schema 1
// layout rooftrace 0.1.0 wrote (kernel names in every kernels row), for the
// tests that read or upgrade old stores. The kernels table below is schema
// 1's, as it was released.
#ifndef ROOFTRACE_TESTS_SUPPORT_STORE_SCHEMA1_H_
#define ROOFTRACE_TESTS_SUPPORT_STORE_SCHEMA1_H_

namespace rooftrace::test_support {

// Schema 6 -> 5: no run_labels.
#define ROOFTRACE_DOWNGRADE_6_TO_5_SQL                              \
  "DROP INDEX run_labels_key;\n"                                    \
  "DROP TABLE run_labels;\n"                                        \
  "UPDATE schema_info SET value = '5' WHERE key = 'schema_version';\n"

inline constexpr char kDowngradeToSchema5[] =
    "BEGIN;\n" ROOFTRACE_DOWNGRADE_6_TO_5_SQL "COMMIT;\n";

// Schema 6 -> 4: no devices.measured_sm_clock_khz either.
#define ROOFTRACE_DOWNGRADE_5_TO_4_SQL                              \
  ROOFTRACE_DOWNGRADE_6_TO_5_SQL                                    \
  "ALTER TABLE devices DROP COLUMN measured_sm_clock_khz;\n"        \
  "UPDATE schema_info SET value = '4' WHERE key = 'schema_version';\n"

inline constexpr char kDowngradeToSchema4[] =
    "BEGIN;\n" ROOFTRACE_DOWNGRADE_5_TO_4_SQL "COMMIT;\n";

// Schema 6 -> 3: no runs.incomplete_reason either.
#define ROOFTRACE_DOWNGRADE_4_TO_3_SQL                        \
  ROOFTRACE_DOWNGRADE_5_TO_4_SQL                               \
  "ALTER TABLE runs DROP COLUMN incomplete_reason;\n"          \
  "UPDATE schema_info SET value = '3' WHERE key = 'schema_version';\n"

inline constexpr char kDowngradeToSchema3[] =
    "BEGIN;\n" ROOFTRACE_DOWNGRADE_4_TO_3_SQL "COMMIT;\n";

// Schema 6 -> 2: no provenance columns, no kernel_metrics. Run on an open
// connection to a schema 6 store, outside a transaction.
#define ROOFTRACE_DOWNGRADE_3_TO_2_SQL                        \
  ROOFTRACE_DOWNGRADE_4_TO_3_SQL                               \
  "DROP INDEX kernel_metrics_kernel;\n"                        \
  "DROP TABLE kernel_metrics;\n"                               \
  "ALTER TABLE runs DROP COLUMN source_format;\n"              \
  "ALTER TABLE runs DROP COLUMN source_file;\n"                \
  "ALTER TABLE runs DROP COLUMN source_sha256;\n"              \
  "UPDATE schema_info SET value = '2' WHERE key = 'schema_version';\n"

inline constexpr char kDowngradeToSchema2[] =
    "BEGIN;\n" ROOFTRACE_DOWNGRADE_3_TO_2_SQL "COMMIT;\n";

// Schema 6 -> 1. Run on an open connection to a schema 6 store, outside a
// transaction.
inline constexpr char kDowngradeToSchema1[] =
    "BEGIN;\n" ROOFTRACE_DOWNGRADE_3_TO_2_SQL R"sql(
CREATE TABLE kernels_schema1 (
  kernel_id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL, session_id INTEGER NOT NULL,
  correlation_id INTEGER, device_id INTEGER, context_id INTEGER,
  stream_id INTEGER, name TEXT, demangled TEXT, family TEXT,
  start_ns INTEGER, end_ns INTEGER, duration_ns INTEGER,
  grid_x INTEGER, grid_y INTEGER, grid_z INTEGER,
  block_x INTEGER, block_y INTEGER, block_z INTEGER,
  cluster_x INTEGER, cluster_y INTEGER, cluster_z INTEGER,
  registers_per_thread INTEGER,
  static_shared_memory_bytes INTEGER, dynamic_shared_memory_bytes INTEGER,
  graph_id INTEGER, graph_node_id INTEGER,
  thread_id INTEGER, api_start_ns INTEGER, nvtx_path TEXT,
  gemm_call_id INTEGER REFERENCES gemm_calls(gemm_call_id),
  shape TEXT, token_count INTEGER, precision TEXT, flops INTEGER,
  flops_fp64 INTEGER, flops_fp32 INTEGER, flops_fp16 INTEGER,
  flops_fp64_tc INTEGER, flops_tf32_tc INTEGER, flops_bf16_tc INTEGER,
  flops_fp8_tc INTEGER, flops_int8_tc INTEGER,
  flops_source TEXT, dram_bytes INTEGER, dram_read_bytes INTEGER,
  dram_write_bytes INTEGER, bytes_source TEXT, ai REAL,
  achieved_flops_per_s REAL, achieved_bytes_per_s REAL,
  roof_flops_per_s REAL, fraction_of_roof REAL, bound TEXT,
  step_id INTEGER, phase TEXT);
INSERT INTO kernels_schema1 SELECT * FROM kernels;
DROP TRIGGER kernels_insert;
DROP VIEW kernels;
DROP TABLE kernel_rows;
DROP TABLE kernel_names;
ALTER TABLE kernels_schema1 RENAME TO kernels;
CREATE INDEX kernels_run ON kernels(run_id, start_ns);
UPDATE schema_info SET value = '1' WHERE key = 'schema_version';
COMMIT;
)sql";

#undef ROOFTRACE_DOWNGRADE_3_TO_2_SQL

}  // namespace rooftrace::test_support

#endif  // ROOFTRACE_TESTS_SUPPORT_STORE_SCHEMA1_H_
