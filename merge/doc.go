// Package merge reconciles the sstables of one table as Cassandra 4.x and
// 5.0's read path and compaction do: a table on a node is a stack of
// sstables flushed at different times, and later ones overwrite, delete
// and expire what earlier ones hold. The rules, each from the Java it
// follows, are in docs/merge.md:
//
//   - cells: the newer timestamp; on a tie a tombstone, then an expiring
//     cell, then the later local deletion time, then the greater value
//     (db/rows/Cells.java); counters merge by shard
//     (db/context/CounterContext.java);
//   - row liveness, row deletions (shadowable ones too, and ScyllaDB's),
//     collection deletions and range tombstones, each shadowing what has a
//     timestamp at most theirs (db/rows/Row.java's Merger,
//     db/rows/RangeTombstoneMarker.java's Merger,
//     db/rows/UnfilteredRowIterators.java);
//   - TTL expiry as of Options.Now, and with Options.Purge what a major
//     compaction purges after gc_grace (db/partitions/PurgeFunction.java).
//
// A Table is the sstables (Open, or New for sstables already open; their
// serialization headers are united by column name, and two tables given
// together are refused). Scan streams the merged partitions in token order
// holding one unfiltered of each sstable at a time; Get merges one
// partition found through each sstable's Filter.db and index, and Explain
// records, for one partition, every version in every sstable and why each
// loser lost. Merged partitions are rows.PartitionHeader and
// rows.Unfiltered, the model the dump renderer and rows.Encoder take, with
// Table.Schema and Table.Header describing their columns; Provenance says
// which sstable each part came from.
package merge
