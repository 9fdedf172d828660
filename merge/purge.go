package merge

import (
	"time"

	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format/clustering"
	"github.com/sstabletool/sstabletool/format/rows"
)

// DefaultGCGraceSeconds is gc_grace_seconds' default (TableParams).
const DefaultGCGraceSeconds = 864000

// Options says when the merge happens and whether it purges, as a major
// compaction of every sstable of the table at time Now would: with
// nothing outside the merge overlapping it, a tombstone is purgeable once
// its local deletion time is before Now - GCGraceSeconds
// (CompactionController.getPurgeEvaluator, PurgeFunction).
type Options struct {
	// Now is the compaction's nowInSec, seconds since the epoch: what has
	// expired. Zero means the current time.
	Now int64
	// Purge drops what the compaction would purge: tombstones, and
	// expired cells and liveness, deleted more than GCGraceSeconds before
	// Now. Without it nothing is purged, as before gc_grace has passed.
	Purge bool
	// GCGraceSeconds is the table's gc_grace_seconds (0 purges whatever
	// was deleted before Now). Callers that do not know the table's pass
	// DefaultGCGraceSeconds.
	GCGraceSeconds int64
	// OnlyPurgeRepaired is the compaction option
	// only_purge_repaired_tombstones: then nothing is purged unless every
	// sstable is repaired (Statistics.db's repairedAt).
	OnlyPurgeRepaired bool
}

// resolved is Options with its defaults applied for one merge.
type resolved struct {
	now, gcBefore int64
	purge         bool
}

func (t *Table) resolve(o Options) *resolved {
	r := &resolved{now: o.Now, purge: o.Purge}
	if r.now == 0 {
		r.now = time.Now().Unix()
	}
	r.gcBefore = r.now - o.GCGraceSeconds
	if o.OnlyPurgeRepaired {
		for _, s := range t.ssts {
			if st := s.Stats().Stats; st == nil || st.RepairedAt == 0 {
				r.purge = false
			}
		}
	}
	return r
}

// shouldPurge is the compaction's DeletionPurger: purging, deleted before
// gcBefore (and nothing outside the merge holds older data, which a
// major compaction of every sstable guarantees).
func (o *resolved) shouldPurge(ldt int64) bool { return o.purge && ldt < o.gcBefore }

func (o *resolved) shouldPurgeDeletion(dt deletiontime.DeletionTime) bool {
	return !dt.IsLive() && o.shouldPurge(dt.LocalDeletionTime)
}

// purgeRow is Row.purge (BTreeRow, ComplexColumnData, AbstractCell): it
// drops what is purgeable and writes expired cells as tombstones. It
// reports false when nothing of the row is left.
func (o *resolved) purgeRow(u *rows.Unfiltered, prov *Provenance, rec *recorder) bool {
	if !hasDeletionInfo(u) {
		return true // Row.hasDeletion(nowInSec) is false: nothing to purge
	}
	if l := &u.Liveness; l.HasTimestamp && !livenessLive(l, o.now) {
		switch {
		case o.shouldPurge(localExpirationTime(l)):
			rec.mark(prov.Liveness, WhatLiveness, -1, nil, Purged)
			*l = rows.Liveness{}
			prov.Liveness = -1
		case livenessExpiring(l) && !livenessExpired(l):
			rec.mark(prov.Liveness, WhatLiveness, -1, nil, Expired)
		}
	}
	if u.HasDeletion() && o.shouldPurgeDeletion(u.Deletion) {
		rec.mark(prov.Deletion, WhatRowDeletion, -1, nil, Purged)
		u.Deletion, u.Shadowable = deletiontime.Live, false
		prov.Deletion = -1
		u.Flags &^= rows.FlagHasDeletion
		u.ExtFlags &^= rows.ExtFlagShadowableDel
	}
	if u.ExtFlags&rows.ExtFlagScyllaShadowable != 0 && o.shouldPurgeDeletion(u.ScyllaShadowable) {
		rec.mark(prov.ShadowableDeletion, WhatRowDeletion, -1, nil, Purged)
		u.ScyllaShadowable = deletiontime.DeletionTime{}
		prov.ShadowableDeletion = -1
		u.ExtFlags &^= rows.ExtFlagScyllaShadowable
	}
	kept := 0
	for i := range u.Cells {
		c := u.Cells[i]
		src := prov.Cells[i]
		if !isLiveCell(&c, o.now) {
			if o.shouldPurge(c.LocalDeletionTime) {
				rec.mark(src, WhatCell, c.Column, c.Path, Purged)
				continue
			}
			if isExpiring(&c) {
				// Written as a tombstone of when it was written.
				c.Flags = rows.CellFlagDeleted | rows.CellFlagEmptyValue
				c.LocalDeletionTime -= c.TTL
				c.TTL, c.Value = 0, emptyValue
				if o.shouldPurge(c.LocalDeletionTime) {
					rec.mark(src, WhatCell, c.Column, c.Path, Purged)
					continue
				}
				rec.mark(src, WhatCell, c.Column, c.Path, Expired)
			}
		}
		u.Cells[kept] = c
		prov.Cells[kept] = src
		kept++
	}
	u.Cells, prov.Cells = u.Cells[:kept], prov.Cells[:kept]
	kept = 0
	for i, cd := range u.ComplexDeletions {
		if o.shouldPurgeDeletion(cd.Deletion) {
			rec.mark(prov.ComplexDeletions[i], WhatComplexDeletion, cd.Column, nil, Purged)
			continue
		}
		u.ComplexDeletions[kept] = cd
		prov.ComplexDeletions[kept] = prov.ComplexDeletions[i]
		kept++
	}
	u.ComplexDeletions, prov.ComplexDeletions = u.ComplexDeletions[:kept], prov.ComplexDeletions[:kept]
	if !u.Liveness.HasTimestamp && !u.HasDeletion() && u.ExtFlags&rows.ExtFlagScyllaShadowable == 0 && len(u.Cells) == 0 && len(u.ComplexDeletions) == 0 {
		return false
	}
	setRowFlags(u)
	return true
}

var emptyValue = []byte{}

// hasDeletionInfo is BTreeRow.hasDeletion's test made timeless: whether
// the row holds any deletion or TTL (purgeRow then checks each part
// against now, which gives the same result).
func hasDeletionInfo(u *rows.Unfiltered) bool {
	if u.HasDeletion() || u.ExtFlags&rows.ExtFlagScyllaShadowable != 0 || len(u.ComplexDeletions) > 0 || livenessExpiring(&u.Liveness) {
		return true
	}
	for i := range u.Cells {
		if hasDeletionTime(&u.Cells[i]) {
			return true
		}
	}
	return false
}

// setRowFlags derives a row's flags from its content, as the encoder
// would write them (the dump renderer reads HasDeletion from them).
func setRowFlags(u *rows.Unfiltered) {
	f := u.Flags &^ (rows.FlagHasTimestamp | rows.FlagHasTTL | rows.FlagHasDeletion | rows.FlagHasComplexDelete | rows.FlagHasAllColumns | rows.FlagExtension)
	if u.Liveness.HasTimestamp {
		f |= rows.FlagHasTimestamp
		if livenessExpiring(&u.Liveness) {
			f |= rows.FlagHasTTL
		}
	}
	if !u.Deletion.IsLive() && u.Deletion != (deletiontime.DeletionTime{}) {
		f |= rows.FlagHasDeletion
	}
	if len(u.ComplexDeletions) > 0 {
		f |= rows.FlagHasComplexDelete
	}
	if u.ExtFlags != 0 {
		f |= rows.FlagExtension
	}
	u.Flags = f
	u.ColumnsPresent = countColumns(u)
}

// purgeMarker is PurgeFunction.applyToMarker: a bound whose deletion is
// purgeable goes; a boundary keeps the side that is not.
func (o *resolved) purgeMarker(m *rows.Unfiltered, prov *Provenance, rec *recorder) bool {
	if !m.Bound.Kind.IsBoundary() {
		if o.shouldPurgeDeletion(m.Deletion) {
			rec.markRange(Purged)
			return false
		}
		return true
	}
	pc, po := o.shouldPurgeDeletion(m.EndDeletion), o.shouldPurgeDeletion(m.StartDeletion)
	switch {
	case pc && po:
		rec.markRange(Purged)
		return false
	case pc: // the boundary's open side alone
		m.Bound.Kind = pick(m.Bound.Kind == clustering.ExclEndInclStartBoundary, clustering.InclStartBound, clustering.ExclStartBound)
		m.Deletion = m.StartDeletion
		prov.Deletion = prov.Start
	case po: // its close side alone
		m.Bound.Kind = pick(m.Bound.Kind == clustering.ExclEndInclStartBoundary, clustering.ExclEndBound, clustering.InclEndBound)
		m.Deletion = m.EndDeletion
		prov.Deletion = prov.End
	default:
		return true
	}
	m.EndDeletion, m.StartDeletion = deletiontime.DeletionTime{}, deletiontime.DeletionTime{}
	prov.End, prov.Start = -1, -1
	return true
}

// markRange marks the winning range tombstone versions of the current
// position purged.
func (r *recorder) markRange(verdict Reason) {
	if r == nil || r.entry == nil {
		return
	}
	for i := range r.entry.Versions {
		if v := &r.entry.Versions[i]; v.What == WhatRangeTombstone && v.Verdict == Won {
			v.Verdict = verdict
		}
	}
}
