package export

import (
	"fmt"
	"strings"
)

// Datasets selects which of the three datasets an export writes.
type Datasets uint8

const (
	Partitions Datasets = 1 << iota // partitions/: one row per partition per sstable
	Cells                           // cells/: one row per cell (and deletion, liveness, marker)
	SSTables                        // sstables/: one row per sstable
	All        = Partitions | Cells | SSTables
)

var datasetNames = []struct {
	d    Datasets
	name string
}{{Partitions, "partitions"}, {Cells, "cells"}, {SSTables, "sstables"}}

// Names returns the names of the datasets d selects, in the order
// ParseDatasets takes them (All.Names() is every dataset's).
func (d Datasets) Names() []string {
	var out []string
	for _, n := range datasetNames {
		if d&n.d != 0 {
			out = append(out, n.name)
		}
	}
	return out
}

// ParseDatasets reads a comma-separated list of dataset names
// (partitions, cells, sstables).
func ParseDatasets(s string) (Datasets, error) {
	var d Datasets
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		found := false
		for _, n := range datasetNames {
			if part == n.name {
				d |= n.d
				found = true
			}
		}
		if !found {
			return 0, fmt.Errorf("unknown dataset %q: expected partitions, cells or sstables, separated by commas", part)
		}
	}
	return d, nil
}

// Column indexes of each dataset, in the order of its specs.
const (
	pNode = iota
	pSSTable
	pVersion
	pKey
	pKeyHex
	pToken
	pTokenText
	pOffset
	pSize
	pRows
	pCells
	pTombstones
	pRowTombstones
	pRangeTombstones
	pComplexTombstones
	pCellTombstones
	pRowTTLExpired
	pCellTTLExpired
	pDeletion
	pDeletionTimestamp
	pDeletionTime
	pMinTimestamp
	pMaxTimestamp
	pMinLocalDeletionTime
)

// partitionSpecs are the partitions dataset's columns. keyspace and table
// are not among them: they are the Hive partition directories
// (keyspace=K/table=T/), from which every engine adds them as columns.
var partitionSpecs = []spec{
	{name: "node", typ: tString, dict: true, constant: true, doc: "the node the sstable was exported on (--node, default the host name)"},
	{name: "sstable", typ: tString, dict: true, constant: true, doc: "the sstable's name without the component, as `nc-1-big`; `merged` with `--merge`"},
	{name: "version", typ: tString, dict: true, constant: true, doc: "the sstable's format version (`nb`, `nc`, `oa`, `da`, ...); `merged` with `--merge`"},
	{name: "key", typ: tString, stats: true, doc: "the partition key as `partitions` prints it: its text, the components of a composite key joined by `:`"},
	{name: "key_hex", typ: tString, doc: "the partition key's bytes in hex, as stored"},
	{name: "token", typ: tInt64, optional: true, stats: true, doc: "the key's token (Murmur3Partitioner); null for other partitioners"},
	{name: "token_text", typ: tString, doc: "the token as `partitions` prints it, whatever the partitioner"},
	{name: "offset", typ: tInt64, optional: true, doc: "the partition's position in uncompressed Data.db; null with `--merge`"},
	{name: "size", typ: tInt64, optional: true, stats: true, doc: "bytes of uncompressed Data.db, header to end-of-partition byte; null with `--merge`"},
	{name: "rows", typ: tInt64, doc: "rows, the static row left out (as `partitions` counts)"},
	{name: "cells", typ: tInt64, doc: "cells of those rows"},
	{name: "tombstones", typ: tInt64, doc: "the sum of the six kinds below (sstablepartitions' tombstone count)"},
	{name: "row_tombstones", typ: tInt64, doc: "row deletions"},
	{name: "range_tombstones", typ: tInt64, doc: "range tombstone markers (a boundary counts once)"},
	{name: "complex_tombstones", typ: tInt64, doc: "deletions of a whole collection or UDT column"},
	{name: "cell_tombstones", typ: tInt64, doc: "tombstone cells"},
	{name: "row_ttl_expired", typ: tInt64, doc: "rows whose TTL has expired at the export's time (`-u`, default now)"},
	{name: "cell_ttl_expired", typ: tInt64, doc: "cells whose own TTL has expired at the export's time"},
	{name: "deletion", typ: tBool, doc: "whether the partition has a partition-level deletion"},
	{name: "deletion_timestamp", typ: tInt64, optional: true, doc: "that deletion's markedForDeleteAt (microseconds, the client's clock); null without one"},
	{name: "deletion_time", typ: tTimestamp, optional: true, doc: "that deletion's local deletion time (the node's clock); null without one"},
	{name: "min_timestamp", typ: tInt64, optional: true, stats: true, doc: "the smallest write timestamp in the partition (cells, row liveness, every deletion's markedForDeleteAt); null when it has none"},
	{name: "max_timestamp", typ: tInt64, optional: true, stats: true, doc: "the largest one"},
	{name: "min_local_deletion_time", typ: tTimestamp, optional: true, doc: "the earliest local deletion or expiration time (tombstones, TTLs); null when there is none"},
}

const (
	cNode = iota
	cSSTable
	cKey
	cToken
	cClustering
	cKind
	cEntry
	cColumn
	cPath
	cValue
	cValueBytes
	cTimestamp
	cTTL
	cExpiresAt
	cLocalDeletionTime
	cTombstone
	cInclusive
)

// cellSpecs are the cells dataset's columns: one row for each thing with
// a timestamp that sstabledump prints inside a partition.
var cellSpecs = []spec{
	{name: "node", typ: tString, dict: true, constant: true, doc: "as in partitions/"},
	{name: "sstable", typ: tString, dict: true, constant: true, doc: "as in partitions/; with `--merge`, the sstable this record of the merged view came from (`merged` for a counter whose shards the merge combined from several)"},
	{name: "key", typ: tString, stats: true, shared: true, doc: "the partition key, as in partitions/"},
	{name: "token", typ: tInt64, optional: true, stats: true, shared: true, doc: "the key's token (Murmur3Partitioner), as in partitions/"},
	{name: "clustering", typ: tStringList, doc: "the row's clustering values, or a marker's bound, each as sstabledump prints it (a string's text, anything else its JSON); a bound lists only the values it has (sstabledump prints `*` for the others); empty for the static row and for a table without clustering columns"},
	{name: "kind", typ: tString, dict: true, doc: "what the row sits in: `row`, `static`, `range_tombstone_bound` or `range_tombstone_boundary`"},
	{name: "entry", typ: tString, dict: true, doc: "what the row is: `cell`; `liveness`, the primary-key liveness of a row that has no cells (an INSERT of the key alone; a row with cells is there through them, which carry the same timestamp); `deletion`, a row deletion; `column_deletion`, a whole collection or UDT deleted; a marker's `start` or `end`"},
	{name: "column", typ: tString, optional: true, dict: true, doc: "the column's name, for a cell or a column deletion"},
	{name: "path", deltaLength: true, typ: tString, optional: true, doc: "a collection element's key (a set's element, a map's key, a list's timeuuid) or a UDT field's name, as sstabledump prints it; null for a simple column"},
	{name: "value", deltaLength: true, typ: tString, optional: true, doc: "the cell's value as sstabledump prints it: a string's text, anything else its JSON (a counter's total); null for a tombstone"},
	{name: "value_bytes", deltaLength: true, typ: tBinary, optional: true, doc: "the value's bytes as stored (a counter's context); null for a tombstone"},
	{name: "timestamp", typ: tInt64, stats: true, doc: "the write timestamp (microseconds by convention, the client's clock), as sstabledump's `tstamp` (a cell's own, printed or not); for a deletion, its markedForDeleteAt"},
	{name: "ttl", typ: tInt32, optional: true, doc: "seconds of TTL; null when the cell or liveness does not expire"},
	{name: "expires_at", typ: tTimestamp, optional: true, doc: "when the TTL runs out (the node's clock); null without a TTL"},
	{name: "local_deletion_time", typ: tTimestamp, optional: true, doc: "when a tombstone was written (the node's clock), what gc_grace_seconds counts from; null for live data"},
	{name: "tombstone", typ: tBool, doc: "whether the row is a deletion: a tombstone cell, a row or column deletion, a marker"},
	{name: "inclusive", typ: tBool, optional: true, doc: "for a marker's start or end, whether the bound includes its clustering; null otherwise"},
}

const (
	sNode = iota
	sSSTable
	sPath
	sVersion
	sFormat
	sGeneration
	sPartitioner
	sComponentBytes
	sBytes
	sDataBytes
	sDataUncompressed
	sCompressor
	sCompressionRatio
	sFirstKey
	sLastKey
	sMinToken
	sMaxToken
	sMinTimestamp
	sMaxTimestamp
	sMinLocalDeletion
	sMaxLocalDeletion
	sMinTTL
	sMaxTTL
	sEstimatedPartitions
	sTotalRows
	sDroppable
	sRepairedAt
	sLevel
	sPartitions
	sRows
	sCells
	sTombstones
	sSavings
)

// sstableSpecs are the sstables dataset's columns: what `metadata --json`
// reports, the exact totals of the export's own scan, and the savings.
var sstableSpecs = []spec{
	{name: "node", typ: tString, dict: true, constant: true, doc: "as in partitions/"},
	{name: "sstable", typ: tString, dict: true, constant: true, doc: "as in partitions/"},
	{name: "path", typ: tString, doc: "the Data.db path on the node"},
	{name: "version", typ: tString, dict: true, constant: true, doc: "the format version"},
	{name: "format", typ: tString, doc: "`big` or `bti`"},
	{name: "generation", typ: tString, doc: "the sstable's generation (an integer, or a 4.1+ time-UUID id)"},
	{name: "partitioner", typ: tString, doc: "the partitioner's class name (Statistics.db)"},
	{name: "component_bytes", typ: tSizeMap, doc: "each component's size on disk, by file suffix (`Data.db`, `Index.db`, ...)"},
	{name: "bytes", typ: tInt64, doc: "all components together"},
	{name: "data_bytes", typ: tInt64, doc: "Data.db on disk"},
	{name: "data_uncompressed_bytes", typ: tInt64, doc: "Data.db uncompressed"},
	{name: "compressor", typ: tString, optional: true, doc: "the compressor's class; null when Data.db is uncompressed"},
	{name: "compression_ratio", typ: tDouble, optional: true, doc: "compressed over uncompressed length; null when uncompressed"},
	{name: "first_key", typ: tString, optional: true, doc: "the first partition key (metadata's key range)"},
	{name: "last_key", typ: tString, optional: true, doc: "the last one"},
	{name: "min_token", typ: tInt64, optional: true, doc: "the first key's token (Murmur3Partitioner)"},
	{name: "max_token", typ: tInt64, optional: true, doc: "the last key's token"},
	{name: "min_timestamp", typ: tInt64, doc: "Statistics.db's minimum write timestamp"},
	{name: "max_timestamp", typ: tInt64, doc: "its maximum"},
	{name: "min_local_deletion_time", typ: tTimestamp, optional: true, doc: "the earliest local deletion time; null when there is none"},
	{name: "max_local_deletion_time", typ: tTimestamp, optional: true, doc: "the latest"},
	{name: "min_ttl", typ: tInt64, doc: "the smallest TTL in seconds"},
	{name: "max_ttl", typ: tInt64, doc: "the largest"},
	{name: "estimated_partitions", typ: tInt64, doc: "metadata's estimated keys"},
	{name: "total_rows", typ: tInt64, doc: "Statistics.db's row count"},
	{name: "estimated_droppable_tombstones", typ: tDouble, doc: "metadata's droppable-tombstone ratio as of the export's time (gc_grace_seconds 0, as sstablemetadata)"},
	{name: "repaired_at", typ: tInt64, doc: "when the sstable was repaired (milliseconds), 0 if never"},
	{name: "sstable_level", typ: tInt32, doc: "the leveled-compaction level"},
	{name: "partitions", typ: tInt64, optional: true, doc: "partitions, counted by the export's scan; null when neither partitions nor cells were exported"},
	{name: "rows", typ: tInt64, optional: true, doc: "rows, the sum of partitions/'s rows"},
	{name: "cells", typ: tInt64, optional: true, doc: "cells, the sum of partitions/'s cells"},
	{name: "tombstones", typ: tInt64, optional: true, doc: "tombstones, the sum of partitions/'s tombstones"},
	{name: "savings", typ: tInt64, optional: true, doc: "bytes on disk that converting the sstable to oa would save (`savings`' exact estimate; 0 for oa and da); null when not estimated"},
}
