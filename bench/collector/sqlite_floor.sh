#!/usr/bin/env bash
# The least SQLite can spend storing kernel rows: copies the kernel_rows of
# an existing store (e.g. one written by `rooftrace collect --ingest`) into a
# fresh store with the collector's settings, in one INSERT ... SELECT (no
# binding, no decode, no join), with and without the (run_id, start_ns)
# index, and prints seconds, rows and microseconds per row.
#   bench/collector/sqlite_floor.sh STORE.sqlite [ROWS]
set -euo pipefail
src=${1:?usage: sqlite_floor.sh STORE.sqlite [ROWS]}
rows=${2:-1000000}
[ -r "$src" ] || { echo "sqlite_floor.sh: cannot read $src" >&2; exit 2; }
command -v sqlite3 >/dev/null || { echo "sqlite_floor.sh: needs the sqlite3 shell (apt install sqlite3)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for index in yes no; do
  db=$work/floor.sqlite
  rm -f "$db" "$db-wal" "$db-shm"
  sqlite3 "$db" "PRAGMA page_size=65536; PRAGMA journal_mode=WAL;" >/dev/null
  sqlite3 "$src" ".schema kernel_rows" | grep -v "CREATE INDEX" | sqlite3 "$db"
  if [ "$index" = yes ]; then
    sqlite3 "$db" "CREATE INDEX kernel_rows_run ON kernel_rows(run_id, start_ns);"
  fi
  start=$(date +%s.%N)
  sqlite3 "$db" "ATTACH '$src' AS src;" "PRAGMA synchronous=NORMAL;" \
    "PRAGMA cache_size=-65536;" \
    "INSERT INTO kernel_rows SELECT * FROM src.kernel_rows LIMIT $rows;"
  end=$(date +%s.%N)
  n=$(sqlite3 "$db" "SELECT COUNT(*) FROM kernel_rows")
  awk -v s="$start" -v e="$end" -v n="$n" -v i="$index" 'BEGIN {
    printf "index %-3s: %d kernel rows in %.2f s, %.2f us per row\n", i, n, e - s, (e - s) * 1e6 / n }'
done
