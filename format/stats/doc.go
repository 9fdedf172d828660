// Package stats decodes and encodes Statistics.db, the sstable metadata
// component, byte for byte for every big-format version from ma to oa.
//
// The file (io/sstable/metadata/MetadataSerializer.java) is a table of
// contents followed by up to four components in MetadataType order:
// validation (partitioner, bloom filter fp chance), compaction (a
// HyperLogLog++ cardinality sketch), stats (histograms, timestamps,
// deletion times, clustering bounds, repair state, key range...) and the
// serialization header (EncodingStats and the column types). From na on a
// CRC32 follows the component count, the table of contents and every
// component.
//
// Cassandra writes each component from a buffer sized by its
// serializedSize estimate, so where the estimate exceeds what is written
// the component ends in zero padding that the table of contents counts: in
// oa the tombstone histogram is sized at 16 bytes per bin but written with
// 12. Encode reproduces that padding; Decode tolerates it and keeps any
// other trailing bytes (TrailingBytes) so that re-encoding is exact.
//
// Everything here is hand-written: the layout is Cassandra's own and no Go
// library reads it. The HyperLogLog++ estimate follows clearspring
// stream-lib's serialized form (the library Cassandra uses).
package stats
