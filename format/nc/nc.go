// Package nc names the nc sstable version: the Cassandra 5.0 development
// layout (CASSANDRA-18134) that added improved min/max clusterings, the
// partition-level deletion presence marker and the key range to
// Statistics.db, but still writes every DeletionTime in the legacy 12-byte
// form (int localDeletionTime, long markedForDeleteAt) with signed-int
// deletion times, like every version before it (nb, Cassandra 4.x).
// CASSANDRA-19010 removed nc from Cassandra's readers; its flags here come
// from BigFormat.java before that commit. Everything else is shared in
// package format and driven by Version's flags.
package nc

import (
	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format"
)

// Version is nc with its feature flags.
var Version = format.MustVersion("nc")

// DeletionTime is the layout nc uses in partition headers, index entries,
// index blocks and stats.
const DeletionTime = deletiontime.Legacy

// PartitionHeaderSize is the width of a partition header: the key with its
// 2-byte length and a 12-byte DeletionTime, LIVE or not.
func PartitionHeaderSize(keyLen int) int { return 2 + keyLen + deletiontime.LegacySize }
