package merge

// Reason is why a version of a cell, liveness, deletion or range
// tombstone lost to another (or Won). String words it as explain prints
// it; docs/merge.md lists each with the Java it comes from.
type Reason uint8

const (
	// Won: this version is (part of) the merged result.
	Won Reason = iota
	// OlderTimestamp: another version was written later.
	OlderTimestamp
	// TieTombstoneWins: same timestamp, and a tombstone beats a live or
	// an expiring cell (Cells.resolveRegular); an expired liveness (a
	// primary key tombstone) beats a live one (LivenessInfo.supersedes).
	TieTombstoneWins
	// TieExpiringWins: same timestamp, and an expiring cell or liveness
	// beats a non-expiring one (CASSANDRA-14592).
	TieExpiringWins
	// TieLaterDeletionTime: same timestamp, both tombstones or both
	// expiring: the later local deletion (expiration) time wins.
	TieLaterDeletionTime
	// TieGreaterValue: same timestamp, both live: the greater value
	// bytes win (unsigned comparison).
	TieGreaterValue
	// Duplicate: the same version in two sstables; the oldest sstable's is
	// kept.
	Duplicate
	// CounterTombstoneWins: a deleted counter beats any counter value,
	// whatever the timestamps (CASSANDRA-7346).
	CounterTombstoneWins
	// CounterEmptyWins: a counter cell with an empty value beats one with
	// a context (Cells.resolveCounter).
	CounterEmptyWins
	// CounterShardsSuperseded: every shard of this counter context is in
	// the winner's, as new or newer (CounterContext.merge).
	CounterShardsSuperseded
	// CounterMerged: this counter context was merged shard by shard with
	// others into a new one; its newest shards are in the result.
	CounterMerged
	// ShadowedByPartitionDeletion, ShadowedByRangeDeletion,
	// ShadowedByRowDeletion, ShadowedByComplexDeletion: a deletion with
	// a timestamp at least this version's deletes it (DeletionTime.deletes),
	// or supersedes this deletion so that it is not written.
	ShadowedByPartitionDeletion
	ShadowedByRangeDeletion
	ShadowedByRowDeletion
	ShadowedByComplexDeletion
	// ShadowableShadowed: a shadowable row deletion is void because the
	// row's liveness is newer (Row.Deletion.isShadowedBy).
	ShadowableShadowed
	// Expired: the cell's or liveness's TTL has passed as of now; a cell
	// is then written as a tombstone (AbstractCell.purge).
	Expired
	// Purged: a tombstone (or expired data) whose local deletion time is
	// older than gc_grace before now, which a major compaction drops
	// (PurgeFunction, only with Options.Purge).
	Purged
	// DroppedColumn: a cell of a column dropped after it was written (or
	// a collection deletion made before the drop), which Cassandra does
	// not read (DeserializationHelper.isDropped; Table.DropColumns).
	DroppedColumn
)

var reasonText = [...]string{
	Won:                         "won",
	OlderTimestamp:              "older timestamp",
	TieTombstoneWins:            "tie: tombstone wins",
	TieExpiringWins:             "tie: expiring wins over non-expiring",
	TieLaterDeletionTime:        "tie: later local deletion time wins",
	TieGreaterValue:             "tie: greater value wins",
	Duplicate:                   "duplicate of the winner",
	CounterTombstoneWins:        "counter tombstone wins whatever the timestamps",
	CounterEmptyWins:            "counter: an empty value wins",
	CounterShardsSuperseded:     "counter shards all in the winner, as new or newer",
	CounterMerged:               "counter merged by shard",
	ShadowedByPartitionDeletion: "shadowed by the partition deletion",
	ShadowedByRangeDeletion:     "shadowed by the range deletion",
	ShadowedByRowDeletion:       "shadowed by the row deletion",
	ShadowedByComplexDeletion:   "shadowed by the collection deletion",
	ShadowableShadowed:          "shadowable deletion undone by newer row liveness",
	Expired:                     "expired",
	Purged:                      "purged (gc_grace passed)",
	DroppedColumn:               "dropped column",
}

func (r Reason) String() string {
	if int(r) < len(reasonText) {
		return reasonText[r]
	}
	return "unknown reason"
}

// Shadowed reports whether r is one of the Shadowed* reasons: a deletion
// (named by the version's By) took the version out.
func (r Reason) Shadowed() bool {
	return r >= ShadowedByPartitionDeletion && r <= ShadowedByComplexDeletion
}
