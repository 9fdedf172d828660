package merge

import (
	"bytes"
	"slices"

	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format/clustering"
	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/rows"
)

// What is the part of a partition a Version is a version of.
type What uint8

const (
	WhatPartitionDeletion What = iota
	WhatLiveness               // a row's primary key liveness (timestamp, TTL)
	WhatRowDeletion
	WhatCell
	WhatComplexDeletion // the deletion of a whole collection or UDT column
	WhatRangeTombstone  // a range tombstone bound or boundary
)

var whatText = [...]string{"partition deletion", "row liveness", "row deletion", "cell", "collection deletion", "range tombstone"}

func (w What) String() string {
	if int(w) < len(whatText) {
		return whatText[w]
	}
	return "unknown"
}

// Version is one sstable's version of one thing, and what the merge made
// of it.
type Version struct {
	SSTable int // index in Table.SSTables()
	What    What
	// Column is the united column index (Schema().Static or Regular,
	// after Static) of a cell or collection deletion; -1 otherwise.
	Column int
	Static bool
	// Cell is the cell (its Column the united index, its bytes copied).
	Cell     rows.Cell
	Liveness rows.Liveness
	// Deletion is the deletion of a partition, row, collection or range.
	Deletion   deletiontime.DeletionTime
	Shadowable bool
	// Bound is a range tombstone marker's kind (a boundary is recorded
	// once, with the deletion it opens).
	Bound clustering.Kind
	// Verdict is Won, or why the version lost.
	Verdict Reason
	// By is what beat it: the winning version's sstable and timestamp, or
	// the deletion that shadows it. Nil for winners.
	By *Cause
	// Shards is a counter cell's context, decoded.
	Shards []cqltype.CounterShard
}

// Cause is what a version lost to.
type Cause struct {
	SSTable int
	What    What
	// Timestamp is the winner's write timestamp, or the deletion's
	// markedForDeleteAt; LocalDeletionTime the deletion's local deletion
	// time (or when the winner expires).
	Timestamp         int64
	LocalDeletionTime int64
}

// Entry is one position of a partition: its static row, a row or a range
// tombstone bound, with every sstable's versions of what is there.
type Entry struct {
	Kind       rows.Kind
	Clustering [][]byte          // rows
	Bound      clustering.Prefix // markers
	Versions   []Version
	// Output is what the merge writes there (a copy), nil when nothing
	// survives; Provenance names the sstable of each of its parts.
	Output     *rows.Unfiltered
	Provenance *Provenance
}

// Explanation is a partition's reconciliation: every version in every
// sstable and why each loser lost.
type Explanation struct {
	Key []byte
	// Holding lists the sstables that hold the partition.
	Holding []int
	// Options are the merge's (Now and GCBefore as it used them).
	Now, GCBefore int64
	Purge         bool
	// PartitionDeletion are the sstables' partition deletions.
	PartitionDeletion []Version
	// Merged is the partition deletion the merge keeps (LIVE for none).
	Merged  deletiontime.DeletionTime
	Entries []Entry
}

// recorder gathers an explanation while a partition merges.
type recorder struct {
	e     *Explanation
	entry *Entry // the position being merged
	// flush, when set, takes each position once merged, and the entries
	// are not kept (Scanner.Account).
	flush func(*Entry)
}

// done hands the positions recorded so far to flush.
func (r *recorder) done() {
	if r == nil || r.flush == nil {
		return
	}
	if r.entry != nil {
		r.flush(r.entry)
	}
	r.entry = nil
}

func (r *recorder) begin(kind rows.Kind, clust [][]byte, bound clustering.Prefix) {
	r.done()
	if r.flush != nil {
		// One position at a time, handed on before the sources move: the
		// entry and its versions' storage are reused, nothing is copied.
		if len(r.e.Entries) == 0 {
			r.e.Entries = append(r.e.Entries, Entry{})
		}
		e := &r.e.Entries[0]
		*e = Entry{Kind: kind, Clustering: clust, Bound: bound, Versions: e.Versions[:0]}
		r.entry = e
		return
	}
	r.e.Entries = append(r.e.Entries, Entry{Kind: kind, Clustering: cloneValues(clust),
		Bound: clustering.Prefix{Kind: bound.Kind, Values: cloneValues(bound.Values)}})
	r.entry = &r.e.Entries[len(r.e.Entries)-1]
}

func (r *recorder) add(v Version) {
	if r.flush == nil {
		// Kept past the sources' next rows; a flushed position is handed
		// on before they move (Partition.next).
		v.Cell.Path = slices.Clone(v.Cell.Path)
		v.Cell.Value = slices.Clone(v.Cell.Value)
	}
	r.entry.Versions = append(r.entry.Versions, v)
}

// output records what the merge wrote at the current position.
func (r *recorder) output(u *rows.Unfiltered, p *Provenance) {
	if r.flush != nil {
		return // the accounting needs the versions only
	}
	r.entry.Output = u.Clone()
	pc := p.clone()
	r.entry.Provenance = &pc
}

// mark changes the verdict of the winning version of an output part the
// purge step changed (expired, purged).
func (r *recorder) mark(src int, what What, col int, path []byte, verdict Reason) {
	if r == nil || r.entry == nil {
		return
	}
	for i := range r.entry.Versions {
		v := &r.entry.Versions[i]
		if v.SSTable == src && v.What == what && v.Verdict == Won && v.Column == col && bytes.Equal(v.Cell.Path, path) {
			v.Verdict = verdict
			return
		}
	}
}

func cloneValues(vs [][]byte) [][]byte {
	if vs == nil {
		return nil
	}
	out := make([][]byte, len(vs))
	for i, v := range vs {
		if v != nil {
			out[i] = append([]byte{}, v...)
		}
	}
	return out
}
