// Turns a current store into the schema 2 layout, or into the schema 1
// layout rooftrace 0.1.0 wrote (kernel names in every kernels row), for the
// tests that read or upgrade old stores. The kernels table below is schema
// 1's, as it was released.
#ifndef ROOFTRACE_TESTS_SUPPORT_STORE_SCHEMA1_H_
#define ROOFTRACE_TESTS_SUPPORT_STORE_SCHEMA1_H_

namespace rooftrace::test_support {

// The kernels view and its trigger over schema 2-8's kernel_rows (every
// column in the row), with the operator (schema 7 and 8: OP ", r.op",
// OP_COLUMN ", op", OP_VALUE ", NEW.op") or without it (all "").
#define ROOFTRACE_WIDE_KERNELS_VIEW_SQL(OP, OP_COLUMN, OP_VALUE)   \
  "CREATE VIEW IF NOT EXISTS kernels AS SELECT\n"\
  "  r.kernel_id, r.run_id, r.session_id, r.correlation_id, r.device_id,\n"\
  "  r.context_id, r.stream_id, n.name, n.demangled, n.family,\n"\
  "  r.start_ns, r.end_ns, r.duration_ns, r.grid_x, r.grid_y, r.grid_z,\n"\
  "  r.block_x, r.block_y, r.block_z, r.cluster_x, r.cluster_y, r.cluster_z,\n"\
  "  r.registers_per_thread, r.static_shared_memory_bytes,\n"\
  "  r.dynamic_shared_memory_bytes, r.graph_id, r.graph_node_id, r.thread_id,\n"\
  "  r.api_start_ns, r.nvtx_path, r.gemm_call_id, r.shape, r.token_count,\n"\
  "  r.precision, r.flops, r.flops_fp64, r.flops_fp32, r.flops_fp16,\n"\
  "  r.flops_fp64_tc, r.flops_tf32_tc, r.flops_bf16_tc, r.flops_fp8_tc,\n"\
  "  r.flops_int8_tc, r.flops_source, r.dram_bytes, r.dram_read_bytes,\n"\
  "  r.dram_write_bytes, r.bytes_source, r.ai, r.achieved_flops_per_s,\n"\
  "  r.achieved_bytes_per_s, r.roof_flops_per_s, r.fraction_of_roof, r.bound,\n"\
  "  r.step_id, r.phase" OP "\n"\
  "  FROM kernel_rows r LEFT JOIN kernel_names n ON n.name_id = r.name_id;\n"\
  "CREATE TRIGGER IF NOT EXISTS kernels_insert INSTEAD OF INSERT ON kernels BEGIN\n"\
  "  INSERT OR IGNORE INTO kernel_names (name, demangled, family)\n"\
  "    SELECT NEW.name, NEW.demangled, NEW.family WHERE NEW.name IS NOT NULL;\n"\
  "  INSERT INTO kernel_rows (\n"\
  "    kernel_id, run_id, session_id, correlation_id, device_id, context_id,\n"\
  "    stream_id, name_id, start_ns, end_ns, duration_ns, grid_x, grid_y,\n"\
  "    grid_z, block_x, block_y, block_z, cluster_x, cluster_y, cluster_z,\n"\
  "    registers_per_thread, static_shared_memory_bytes,\n"\
  "    dynamic_shared_memory_bytes, graph_id, graph_node_id, thread_id,\n"\
  "    api_start_ns, nvtx_path, gemm_call_id, shape, token_count, precision,\n"\
  "    flops, flops_fp64, flops_fp32, flops_fp16, flops_fp64_tc, flops_tf32_tc,\n"\
  "    flops_bf16_tc, flops_fp8_tc, flops_int8_tc, flops_source, dram_bytes,\n"\
  "    dram_read_bytes, dram_write_bytes, bytes_source, ai,\n"\
  "    achieved_flops_per_s, achieved_bytes_per_s, roof_flops_per_s,\n"\
  "    fraction_of_roof, bound, step_id, phase" OP_COLUMN ")\n"\
  "  VALUES (\n"\
  "    NEW.kernel_id, NEW.run_id, NEW.session_id, NEW.correlation_id,\n"\
  "    NEW.device_id, NEW.context_id, NEW.stream_id,\n"\
  "    (SELECT name_id FROM kernel_names WHERE name = NEW.name), NEW.start_ns,\n"\
  "    NEW.end_ns, NEW.duration_ns, NEW.grid_x, NEW.grid_y, NEW.grid_z,\n"\
  "    NEW.block_x, NEW.block_y, NEW.block_z, NEW.cluster_x, NEW.cluster_y,\n"\
  "    NEW.cluster_z, NEW.registers_per_thread, NEW.static_shared_memory_bytes,\n"\
  "    NEW.dynamic_shared_memory_bytes, NEW.graph_id, NEW.graph_node_id,\n"\
  "    NEW.thread_id, NEW.api_start_ns, NEW.nvtx_path, NEW.gemm_call_id,\n"\
  "    NEW.shape, NEW.token_count, NEW.precision, NEW.flops, NEW.flops_fp64,\n"\
  "    NEW.flops_fp32, NEW.flops_fp16, NEW.flops_fp64_tc, NEW.flops_tf32_tc,\n"\
  "    NEW.flops_bf16_tc, NEW.flops_fp8_tc, NEW.flops_int8_tc,\n"\
  "    NEW.flops_source, NEW.dram_bytes, NEW.dram_read_bytes,\n"\
  "    NEW.dram_write_bytes, NEW.bytes_source, NEW.ai,\n"\
  "    NEW.achieved_flops_per_s, NEW.achieved_bytes_per_s,\n"\
  "    NEW.roof_flops_per_s, NEW.fraction_of_roof, NEW.bound, NEW.step_id,\n"\
  "    NEW.phase" OP_VALUE ");\n"\
  "END;\n"

// Schema 9 -> 8: each kernel's row whole in kernel_rows again (its
// signature's columns back in it) with its index on (run_id, start_ns), no
// kernel_sigs, no run_kernel_ids.
#define ROOFTRACE_DOWNGRADE_9_TO_8_SQL                              \
  "DROP TRIGGER kernels_insert;\n"                                  \
  "CREATE TABLE kernel_rows_v8 (\n"                                 \
  "  kernel_id INTEGER PRIMARY KEY,\n"                              \
  "  run_id INTEGER NOT NULL, session_id INTEGER NOT NULL,\n"       \
  "  correlation_id INTEGER, device_id INTEGER, context_id INTEGER,\n" \
  "  stream_id INTEGER, name_id INTEGER REFERENCES kernel_names(name_id),\n" \
  "  start_ns INTEGER, end_ns INTEGER, duration_ns INTEGER,\n"      \
  "  grid_x INTEGER, grid_y INTEGER, grid_z INTEGER,\n"             \
  "  block_x INTEGER, block_y INTEGER, block_z INTEGER,\n"          \
  "  cluster_x INTEGER, cluster_y INTEGER, cluster_z INTEGER,\n"    \
  "  registers_per_thread INTEGER,\n"                               \
  "  static_shared_memory_bytes INTEGER, dynamic_shared_memory_bytes INTEGER,\n" \
  "  graph_id INTEGER, graph_node_id INTEGER,\n"                    \
  "  thread_id INTEGER, api_start_ns INTEGER, nvtx_path TEXT,\n"    \
  "  gemm_call_id INTEGER REFERENCES gemm_calls(gemm_call_id),\n"   \
  "  shape TEXT, token_count INTEGER, precision TEXT, flops INTEGER,\n" \
  "  flops_fp64 INTEGER, flops_fp32 INTEGER, flops_fp16 INTEGER,\n" \
  "  flops_fp64_tc INTEGER, flops_tf32_tc INTEGER, flops_bf16_tc INTEGER,\n" \
  "  flops_fp8_tc INTEGER, flops_int8_tc INTEGER,\n"                \
  "  flops_source TEXT, dram_bytes INTEGER, dram_read_bytes INTEGER,\n" \
  "  dram_write_bytes INTEGER, bytes_source TEXT, ai REAL,\n"       \
  "  achieved_flops_per_s REAL, achieved_bytes_per_s REAL,\n"       \
  "  roof_flops_per_s REAL, fraction_of_roof REAL, bound TEXT,\n"   \
  "  step_id INTEGER, phase TEXT, op TEXT);\n"                      \
  "INSERT INTO kernel_rows_v8 SELECT r.kernel_id, r.run_id,\n"      \
  "  r.session_id, r.correlation_id, s.device_id, s.context_id,\n"  \
  "  s.stream_id, s.name_id, r.start_ns, r.end_ns, r.duration_ns,\n" \
  "  s.grid_x, s.grid_y, s.grid_z, s.block_x, s.block_y, s.block_z,\n" \
  "  s.cluster_x, s.cluster_y, s.cluster_z, s.registers_per_thread,\n" \
  "  s.static_shared_memory_bytes, s.dynamic_shared_memory_bytes,\n" \
  "  s.graph_id, r.graph_node_id, s.thread_id, r.api_start_ns,\n"   \
  "  s.nvtx_path, r.gemm_call_id, s.shape, s.token_count, s.precision,\n" \
  "  s.flops, s.flops_fp64, s.flops_fp32, s.flops_fp16, s.flops_fp64_tc,\n" \
  "  s.flops_tf32_tc, s.flops_bf16_tc, s.flops_fp8_tc, s.flops_int8_tc,\n" \
  "  s.flops_source, s.dram_bytes, s.dram_read_bytes, s.dram_write_bytes,\n" \
  "  s.bytes_source, s.ai, r.achieved_flops_per_s, r.achieved_bytes_per_s,\n" \
  "  s.roof_flops_per_s, r.fraction_of_roof, s.bound, r.step_id, s.phase,\n" \
  "  s.op FROM kernel_rows r LEFT JOIN kernel_sigs s ON s.sig_id = r.sig_id;\n" \
  "DROP VIEW kernels;\n"                                            \
  "DROP TABLE kernel_rows;\n"                                       \
  "DROP TABLE kernel_sigs;\n"                                       \
  "DROP TABLE run_kernel_ids;\n"                                    \
  "ALTER TABLE kernel_rows_v8 RENAME TO kernel_rows;\n"             \
  "CREATE INDEX kernel_rows_run ON kernel_rows(run_id, start_ns);\n" \
  ROOFTRACE_WIDE_KERNELS_VIEW_SQL(", r.op", ", op", ", NEW.op")     \
  "UPDATE schema_info SET value = '8' WHERE key = 'schema_version';\n"

inline constexpr char kDowngradeToSchema8[] =
    "BEGIN;\n" ROOFTRACE_DOWNGRADE_9_TO_8_SQL "COMMIT;\n";

// Schema 8 -> 7: no kernel_aggregates, no runs.store_kernels.
#define ROOFTRACE_DOWNGRADE_8_TO_7_SQL                              \
  ROOFTRACE_DOWNGRADE_9_TO_8_SQL                                    \
  "DROP INDEX kernel_aggregates_run;\n"                             \
  "DROP TABLE kernel_aggregates;\n"                                 \
  "ALTER TABLE runs DROP COLUMN store_kernels;\n"                   \
  "UPDATE schema_info SET value = '7' WHERE key = 'schema_version';\n"

inline constexpr char kDowngradeToSchema7[] =
    "BEGIN;\n" ROOFTRACE_DOWNGRADE_8_TO_7_SQL "COMMIT;\n";

// Schema 7 -> 6: no kernels.op, no kernel_metrics.graph_node_id; the
// kernels view and its trigger as schema 6 made them. SQLite's DROP COLUMN
// looks back from the column for the comma before it: a comma in a comment
// on the line before would be taken for it (docs/store.md keeps those
// comments free of commas, since TestStore makes stores from its DDL).
#define ROOFTRACE_DOWNGRADE_7_TO_6_SQL                              \
  ROOFTRACE_DOWNGRADE_8_TO_7_SQL                                    \
  "DROP TRIGGER kernels_insert;\n"                                  \
  "DROP VIEW kernels;\n"                                            \
  "ALTER TABLE kernel_rows DROP COLUMN op;\n"                       \
  "ALTER TABLE kernel_metrics DROP COLUMN graph_node_id;\n"         \
  ROOFTRACE_WIDE_KERNELS_VIEW_SQL("", "", "")                       \
  "UPDATE schema_info SET value = '6' WHERE key = 'schema_version';\n"

inline constexpr char kDowngradeToSchema6[] =
    "BEGIN;\n" ROOFTRACE_DOWNGRADE_7_TO_6_SQL "COMMIT;\n";

// Schema 7 -> 5: no run_labels either.
#define ROOFTRACE_DOWNGRADE_6_TO_5_SQL                              \
  ROOFTRACE_DOWNGRADE_7_TO_6_SQL                                    \
  "DROP INDEX run_labels_key;\n"                                    \
  "DROP TABLE run_labels;\n"                                        \
  "UPDATE schema_info SET value = '5' WHERE key = 'schema_version';\n"

inline constexpr char kDowngradeToSchema5[] =
    "BEGIN;\n" ROOFTRACE_DOWNGRADE_6_TO_5_SQL "COMMIT;\n";

// Schema 7 -> 4: no devices.measured_sm_clock_khz either.
#define ROOFTRACE_DOWNGRADE_5_TO_4_SQL                              \
  ROOFTRACE_DOWNGRADE_6_TO_5_SQL                                    \
  "ALTER TABLE devices DROP COLUMN measured_sm_clock_khz;\n"        \
  "UPDATE schema_info SET value = '4' WHERE key = 'schema_version';\n"

inline constexpr char kDowngradeToSchema4[] =
    "BEGIN;\n" ROOFTRACE_DOWNGRADE_5_TO_4_SQL "COMMIT;\n";

// Schema 7 -> 3: no runs.incomplete_reason either.
#define ROOFTRACE_DOWNGRADE_4_TO_3_SQL                        \
  ROOFTRACE_DOWNGRADE_5_TO_4_SQL                               \
  "ALTER TABLE runs DROP COLUMN incomplete_reason;\n"          \
  "UPDATE schema_info SET value = '3' WHERE key = 'schema_version';\n"

inline constexpr char kDowngradeToSchema3[] =
    "BEGIN;\n" ROOFTRACE_DOWNGRADE_4_TO_3_SQL "COMMIT;\n";

// Schema 7 -> 2: no provenance columns, no kernel_metrics. Run on an open
// connection to a schema 7 store, outside a transaction.
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

// Schema 7 -> 1. Run on an open connection to a schema 7 store, outside a
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
#undef ROOFTRACE_WIDE_KERNELS_VIEW_SQL

}  // namespace rooftrace::test_support

#endif  // ROOFTRACE_TESTS_SUPPORT_STORE_SCHEMA1_H_
