package merge

import (
	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format/rows"
)

// Reclaim attributes the bytes of Data.db (uncompressed) that a merge
// does not write to why, as docs/merge.md defines it: each sstable's row
// (or marker) at each position is re-encoded as it was, then with the
// versions that lost removed one reason at a time in this order, and each
// step's shrinkage is that reason's; a row left with nothing takes its
// framing with the step that emptied it. What remains is what the merge
// keeps of each sstable's row; Merging is the rest of the reduction
// (several sstables' partition headers and row framing written once, and
// the re-encoding), so that the reasons add up to the whole.
type Reclaim struct {
	// DroppedColumns: cells (and collection deletions) of dropped
	// columns written before the drop, which are not read at all
	// (Table.DropColumns).
	DroppedColumns int64 `json:"dropped_columns,omitempty"`
	// Overwritten: versions that lost to a newer (or, on a tie, a
	// preferred) version of the same cell, liveness or deletion.
	Overwritten int64 `json:"overwritten"`
	// Data shadowed by each kind of deletion.
	ShadowedByPartitionDeletion int64 `json:"shadowed_by_partition_deletions"`
	ShadowedByRangeDeletion     int64 `json:"shadowed_by_range_deletions"`
	ShadowedByRowDeletion       int64 `json:"shadowed_by_row_deletions"`
	ShadowedByCollectionDelete  int64 `json:"shadowed_by_collection_deletions"`
	// Expired: cells whose TTL ran out, written as tombstones (their
	// values and TTLs).
	Expired int64 `json:"expired_ttls"`
	// Purged: tombstones and expired data deleted before gc_grace.
	Purged int64 `json:"purgeable_tombstones"`
	// Merging is the rest: the inputs' Data.db bytes less the output's and
	// less the reasons above.
	Merging int64 `json:"merging"`

	t        *Table
	encoders []*rows.Encoder // per sstable, with its EncodingStats minima
	buf      []byte
	bySrc    [][]*Version // scratch: an entry's versions by sstable
	row      rows.Unfiltered
}

// Account makes the scan attribute what it drops to acc (a second,
// slower path: every version is recorded as for Explain, position by
// position, and re-encoded).
func (sc *Scanner) Account(acc *Reclaim) {
	sc.acc = acc
	acc.t = sc.t
	acc.encoders = make([]*rows.Encoder, len(sc.t.ssts))
	for i, s := range sc.t.ssts {
		sch := sc.t.SchemaFor(s.Version())
		h := s.Stats().Header
		sch.MinTimestamp, sch.MinLocalDeletionTime, sch.MinTTL = h.MinTimestamp, h.MinLocalDeletionTime, h.MinTTL
		acc.encoders[i] = rows.NewEncoder(sch)
	}
}

// Finish sets Merging from the Data.db reduction the merge made.
func (a *Reclaim) Finish(dataReduction int64) {
	a.Merging = dataReduction - a.Total() + a.Merging
}

// Total adds up every reason.
func (a *Reclaim) Total() int64 {
	return a.DroppedColumns + a.Overwritten + a.ShadowedByPartitionDeletion + a.ShadowedByRangeDeletion + a.ShadowedByRowDeletion +
		a.ShadowedByCollectionDelete + a.Expired + a.Purged + a.Merging
}

// step is a removal step: which verdicts it takes out.
type step struct {
	count *int64
	takes func(Reason) bool
}

func (a *Reclaim) steps() []step {
	return []step{
		{&a.DroppedColumns, func(r Reason) bool { return r == DroppedColumn }},
		// A counter context merged by shard (CounterMerged) is kept: the
		// merged context is in the output (Merging has the difference).
		{&a.Overwritten, func(r Reason) bool {
			return r >= OlderTimestamp && r <= CounterShardsSuperseded || r == ShadowableShadowed
		}},
		{&a.ShadowedByPartitionDeletion, func(r Reason) bool { return r == ShadowedByPartitionDeletion }},
		{&a.ShadowedByRangeDeletion, func(r Reason) bool { return r == ShadowedByRangeDeletion }},
		{&a.ShadowedByRowDeletion, func(r Reason) bool { return r == ShadowedByRowDeletion }},
		{&a.ShadowedByCollectionDelete, func(r Reason) bool { return r == ShadowedByComplexDeletion }},
		{&a.Expired, func(r Reason) bool { return r == Expired }},
		{&a.Purged, func(r Reason) bool { return r == Purged }},
	}
}

// entry attributes one position's losers.
func (a *Reclaim) entry(e *Entry) {
	lost := false
	for i := range e.Versions {
		lost = lost || e.Versions[i].Verdict != Won
	}
	if !lost {
		return // every part kept: nothing to attribute
	}
	if len(a.bySrc) < len(a.encoders) {
		a.bySrc = make([][]*Version, len(a.encoders))
	}
	for i := range a.bySrc {
		a.bySrc[i] = a.bySrc[i][:0]
	}
	for i := range e.Versions {
		v := &e.Versions[i]
		a.bySrc[v.SSTable] = append(a.bySrc[v.SSTable], v)
	}
	steps := a.steps()
	for src, vs := range a.bySrc {
		lost := false
		for _, v := range vs {
			lost = lost || v.Verdict != Won
		}
		if !lost {
			continue
		}
		if e.Kind == rows.KindMarker {
			for _, v := range vs {
				if v.Verdict == Won {
					continue
				}
				m := rows.Unfiltered{Kind: rows.KindMarker, Bound: e.Bound, Deletion: v.Deletion}
				m.Bound.Kind = v.Bound
				if m.Bound.Kind.IsBoundary() {
					m.EndDeletion, m.StartDeletion = v.Deletion, v.Deletion
				}
				a.charge(v.Verdict, int64(a.size(src, &m)))
			}
			continue
		}
		prev := a.size(src, a.rebuild(e, vs, nil))
		for _, st := range steps {
			takes := false
			for _, v := range vs {
				takes = takes || st.takes(v.Verdict)
			}
			if !takes {
				continue
			}
			cur := a.size(src, a.rebuild(e, vs, st.takes))
			*st.count += int64(prev - cur)
			prev = cur
			// Later steps see this one's removals (an expired cell stays,
			// as a tombstone; an expired liveness stays as it is).
			for _, v := range vs {
				switch {
				case v.Verdict == Expired && st.takes(Expired):
					v.Verdict = tombstoned
				case st.takes(v.Verdict):
					v.Verdict = removed
				}
			}
		}
	}
}

// removed marks a version a step has taken out, tombstoned an expired
// one the Expired step has turned into what the merge writes.
const (
	removed    Reason = 255
	tombstoned Reason = 254
)

func (a *Reclaim) charge(r Reason, n int64) {
	for _, st := range a.steps() {
		if st.takes(r) {
			*st.count += n
			return
		}
	}
}

// rebuild is an sstable's row at the entry from its versions, less those
// already removed and those drop takes (expired cells become tombstones).
func (a *Reclaim) rebuild(e *Entry, vs []*Version, drop func(Reason) bool) *rows.Unfiltered {
	u := &a.row
	*u = rows.Unfiltered{Kind: e.Kind, Clustering: e.Clustering, Deletion: deletiontime.Live, Cells: u.Cells[:0], ComplexDeletions: u.ComplexDeletions[:0]}
	for _, v := range vs {
		gone := v.Verdict == removed || drop != nil && drop(v.Verdict)
		expire := v.Verdict == tombstoned || gone && v.Verdict == Expired
		gone = gone || expire
		if gone && !expire {
			continue
		}
		switch v.What {
		case WhatLiveness:
			u.Liveness = v.Liveness // an expired liveness stays
		case WhatRowDeletion:
			u.Deletion, u.Shadowable = v.Deletion, v.Shadowable
		case WhatComplexDeletion:
			u.ComplexDeletions = append(u.ComplexDeletions, rows.ComplexDeletion{Column: v.Column, Deletion: v.Deletion})
		case WhatCell:
			c := v.Cell
			if expire {
				// AbstractCell.purge: a tombstone of when it was written.
				c = rows.Cell{Column: c.Column, Flags: rows.CellFlagDeleted, Timestamp: c.Timestamp,
					LocalDeletionTime: c.LocalDeletionTime - c.TTL, Path: c.Path}
			}
			u.Cells = append(u.Cells, c)
		}
	}
	return u
}

// size is u's encoded width in sstable src, 0 when u holds nothing.
func (a *Reclaim) size(src int, u *rows.Unfiltered) int {
	if u.Kind != rows.KindMarker && u.IsEmpty() {
		return 0
	}
	b, err := a.encoders[src].AppendUnfiltered(a.buf[:0], u, 0)
	if err != nil {
		return 0
	}
	a.buf = b
	return len(b)
}

// Add adds o's bytes to a's (totals over tables).
func (a *Reclaim) Add(o *Reclaim) {
	a.DroppedColumns += o.DroppedColumns
	a.Overwritten += o.Overwritten
	a.ShadowedByPartitionDeletion += o.ShadowedByPartitionDeletion
	a.ShadowedByRangeDeletion += o.ShadowedByRangeDeletion
	a.ShadowedByRowDeletion += o.ShadowedByRowDeletion
	a.ShadowedByCollectionDelete += o.ShadowedByCollectionDelete
	a.Expired += o.Expired
	a.Purged += o.Purged
	a.Merging += o.Merging
}

// ReclaimReason is one line of Reasons.
type ReclaimReason struct {
	Reason string
	Bytes  int64
}

// Reasons lists the reasons with their wording, in docs/merge.md's order
// (dropped columns only when there were some).
func (a *Reclaim) Reasons() []ReclaimReason {
	var dropped []ReclaimReason
	if a.DroppedColumns != 0 {
		dropped = []ReclaimReason{{"cells of dropped columns (before the drop)", a.DroppedColumns}}
	}
	return append(dropped, []ReclaimReason{
		{"overwritten cells (older versions)", a.Overwritten},
		{"shadowed by partition deletions", a.ShadowedByPartitionDeletion},
		{"shadowed by range deletions", a.ShadowedByRangeDeletion},
		{"shadowed by row deletions", a.ShadowedByRowDeletion},
		{"shadowed by collection deletions", a.ShadowedByCollectionDelete},
		{"expired TTLs (values dropped)", a.Expired},
		{"purgeable tombstones (gc_grace passed)", a.Purged},
		{"merging (headers and row framing written once)", a.Merging},
	}...)
}
