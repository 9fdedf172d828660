// Package scrub repairs sstables offline, without a JVM: what Cassandra's
// sstablescrub does (io/sstable/format/SortedTableScrubber.java and its big
// and BTI scrubbers), with a report of exactly what was lost.
//
// Rebuild. Index.db, Summary.db, Filter.db, Digest.crc32, CRC.db, TOC.txt,
// and for BTI (da) Partitions.db and Rows.db are derived from Data.db and
// Statistics.db. When Data.db is whole and in the target version, scrub
// keeps Data.db, Statistics.db and CompressionInfo.db byte for byte, keeps
// each derived component that is present and right (as verify judges it),
// and rebuilds the others exactly as Cassandra's writer made them: index
// blocks cut at Options.ColumnIndexSize (4 KiB for Cassandra's own test
// fixtures), the summary with the source's sampling, the filter sized for
// the exact partition count.
//
// Salvage. Otherwise Data.db is rewritten partition by partition: every
// partition that reads whole is kept (each is read once to check it, then
// again to write it, so memory does not grow with a partition's size); one
// that does not (a chunk that fails its CRC or does not decompress, a
// partition or row that does not decode) is left out and the walk
// resynchronizes at the next partition start the index knows, as
// Cassandra's scrubbers do. Duplicate rows are merged as Rows.merge
// merges them; a partition whose key does not sort after the last one
// kept, and a partition's rows from the first one out of order, are
// written in order to a second sstable, as Cassandra writes them. The
// report (Report) names every partition lost (by the key Data.db holds,
// or Index.db's, or Partitions.db's key prefix where the bytes cannot
// say), the byte ranges skipped, and the rows dropped, merged and fixed.
//
// Overflowed TTLs (CASSANDRA-14092). Rows whose expiration wrapped past
// 2038 in a 3.x/4.x sstable are left out and reported, as Cassandra 5.0's
// scrub leaves them out; with Options.ReinsertOverflowedTTL they come back
// as its --reinsert-overflowed-ttl writes them: expiring at
// 2038-01-19T03:14:06Z, timestamp + 1 µs.
//
// Every sstable written passes verify before it is moved into place.
// Scrub writes into a staging directory of the output directory and
// commits both sstables at once (see package writer); InPlace rewrites a
// stopped node's sstables in their directories through Cassandra's
// transaction log, as package upgrade does. Modes: Skip (the default),
// Abort (write nothing if anything would be lost or reordered), Validate
// (report only).
package scrub
