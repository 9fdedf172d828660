// Runs SQL with DuckDB (npm @duckdb/node-api, installed in the directory
// $DUCKDB_NODE_DIR) and prints each statement's rows: as one JSON array
// per statement, or with --table as aligned text (what docs/export.md shows).
import { createRequire } from 'node:module';

const require = createRequire(process.env.DUCKDB_NODE_DIR + '/');
const { DuckDBInstance } = require('@duckdb/node-api');

let args = process.argv.slice(2);
const table = args[0] === '--table';
if (table) args = args.slice(1);

const db = await DuckDBInstance.create(':memory:');
const conn = await db.connect();
for (const sql of args) {
  const reader = await conn.runAndReadAll(sql);
  const rows = reader.getRowObjectsJson();
  if (!table) {
    console.log(JSON.stringify(rows));
    continue;
  }
  const cols = reader.columnNames();
  const cells = [cols, ...rows.map((r) => cols.map((c) => (r[c] === null ? 'NULL' : String(r[c]))))];
  const widths = cols.map((_, i) => Math.max(...cells.map((r) => r[i].length)));
  const line = (r) => r.map((v, i) => v.padEnd(widths[i])).join('  ').trimEnd();
  console.log(line(cells[0]));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const r of cells.slice(1)) console.log(line(r));
  console.log();
}
