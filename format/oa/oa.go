// Package oa names the oa sstable version, the big format of released
// Cassandra 5.0: compact DeletionTime (CASSANDRA-18648: one 0x80 byte for
// LIVE, otherwise 8-byte markedForDeleteAt then 4-byte unsigned
// localDeletionTime), unsigned-int deletion times (dates past 2038), token
// space coverage in Statistics.db, and no legacy min/max clustering values.
// Everything else is shared in package format and driven by Version's flags.
package oa

import (
	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format"
)

// Version is oa with its feature flags.
var Version = format.MustVersion("oa")

// DeletionTime is the layout oa uses in partition headers, index entries,
// index blocks and stats.
const DeletionTime = deletiontime.Compact

// PartitionHeaderSize is the width of a partition header: the key with its
// 2-byte length and the DeletionTime, 1 byte when LIVE.
func PartitionHeaderSize(keyLen int, d deletiontime.DeletionTime) int {
	return 2 + keyLen + deletiontime.Compact.Size(d)
}

// LiveSaving is what each LIVE DeletionTime saves over the legacy layout.
const LiveSaving = deletiontime.LegacySize - 1
