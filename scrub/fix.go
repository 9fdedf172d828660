package scrub

import (
	"fmt"
	"math"

	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/stats"
)

// legacyCap is AbstractCell.MAX_DELETION_TIME_2038_LEGACY_CAP
// (2038-01-19T03:14:06Z): where --reinsert-overflowed-ttl puts an
// overflowed expiration, as FixNegativeLocalDeletionTimeIterator does.
const legacyCap = stats.LegacyMaxDeletionTime

// timeFix is what scrub does to deletion times and expirations that
// Cassandra 5.0 reads as invalid (CASSANDRA-14092, CASSANDRA-14227).
//
// In the legacy layouts (ma..nc) a local deletion time is a signed int, and
// 3.x/4.x let an expiration past 2038 wrap to a negative one; 5.0 reads
// every negative one as Cell.INVALID_DELETION_TIME, which is also what an
// oa sstable stores for one. Then:
//
//   - an expiring row liveness or cell with such a time has overflowed.
//     With ReinsertOverflowedTTL it comes back as
//     FixNegativeLocalDeletionTimeIterator writes it: expiration at the
//     2038 cap, timestamp + 1 (so that it wins over any tombstone a
//     compaction made of it). Without, a legacy sstable's row is left out
//     (RowMergingSSTableIterator.computeFinalRow) and reported; an oa row
//     is kept as it is, as Cassandra keeps it.
//   - a tombstone, row deletion, range deletion or partition deletion with
//     a negative time (legacy only) is kept, with the 2038 cap as its
//     time: the largest a legacy sstable can hold, so it is not purged
//     before any time it could have meant (5.0 reads it as
//     INVALID_DELETION_TIME, early 2106, but a row body cannot hold that
//     beside times of today: deltas from the serialization header's
//     minimum are ints). Its timestamp, which is what shadows data, is
//     unchanged.
//   - an expiring cell with a negative TTL (a wrapped delta) makes its row
//     unreadable: it is left out.
type timeFix struct {
	reinsert   bool
	legacyRead bool // the source stores signed deletion times
}

func newTimeFix(from format.Version, reinsert bool) timeFix {
	return timeFix{reinsert: reinsert, legacyRead: !from.HasUIntDeletionTime}
}

// overflowed reports whether an expiration time is what 5.0 reads as
// INVALID_DELETION_TIME.
func (f timeFix) overflowed(t int64) bool {
	if f.legacyRead {
		return t < 0
	}
	return t == stats.InvalidDeletionTime
}

// deletion returns d with a negative legacy local deletion time replaced.
func (f timeFix) deletion(d deletiontime.DeletionTime, fixed *int64) deletiontime.DeletionTime {
	if f.legacyRead && !d.IsLive() && d != (deletiontime.DeletionTime{}) && d.LocalDeletionTime < 0 {
		*fixed++
		d.LocalDeletionTime = legacyCap
	}
	return d
}

// rowVerdict is what the fix made of one row.
type rowVerdict struct {
	drop       string // why the row is left out; "" to keep it
	reinserted bool   // an overflowed expiration was rewritten
}

// row fixes u in place (it must be the caller's copy) and says whether to
// keep it; fixed counts deletion times replaced.
func (f timeFix) row(u *rows.Unfiltered, fixed *int64) rowVerdict {
	if u.Kind == rows.KindMarker {
		if u.Bound.Kind.IsBoundary() {
			u.EndDeletion = f.deletion(u.EndDeletion, fixed)
			u.StartDeletion = f.deletion(u.StartDeletion, fixed)
		} else {
			u.Deletion = f.deletion(u.Deletion, fixed)
		}
		return rowVerdict{}
	}
	var v rowVerdict
	overflow := false
	lv := &u.Liveness
	for i := range u.Cells {
		// An expiring flag with the row's TTL on a row that does not
		// expire: Cassandra's Cell.deserialize reads no TTL and
		// NO_DELETION_TIME, a live cell (isExpiring is ttl != NO_TTL).
		if c := &u.Cells[i]; c.IsExpiring() && c.TTL == 0 && !c.IsTombstone() {
			c.Flags &^= rows.CellFlagExpiring
			c.LocalDeletionTime = 0
		}
	}
	if lv.HasTimestamp && lv.Expiring() && lv.TTL != expiredLivenessTTL {
		if lv.TTL < 0 {
			return rowVerdict{drop: "its liveness has a negative TTL (a wrapped delta)"}
		}
		overflow = overflow || f.overflowed(lv.LocalExpirationTime)
	}
	for i := range u.Cells {
		c := &u.Cells[i]
		switch {
		case c.IsExpiring():
			if c.TTL < 0 {
				return rowVerdict{drop: "a cell has a negative TTL (a wrapped delta)"}
			}
			overflow = overflow || f.overflowed(c.LocalDeletionTime)
		case c.IsTombstone():
			if f.legacyRead && c.LocalDeletionTime < 0 {
				*fixed++
				c.LocalDeletionTime = legacyCap
			}
		}
	}
	if overflow {
		if !f.reinsert {
			if f.legacyRead {
				return rowVerdict{drop: "its expiration overflowed past 2038 (CASSANDRA-14092); --reinsert-overflowed-ttl keeps it"}
			}
		} else {
			if lv.HasTimestamp && lv.Expiring() && lv.TTL != expiredLivenessTTL && f.overflowed(lv.LocalExpirationTime) {
				lv.Timestamp++
				lv.LocalExpirationTime = legacyCap
			}
			for i := range u.Cells {
				c := &u.Cells[i]
				if c.IsExpiring() && f.overflowed(c.LocalDeletionTime) {
					c.Timestamp++
					c.LocalDeletionTime = legacyCap
				}
			}
			v.reinserted = true
		}
	}
	if u.HasDeletion() {
		u.Deletion = f.deletion(u.Deletion, fixed)
	}
	if !u.ScyllaShadowable.IsLive() && u.ScyllaShadowable != (deletiontime.DeletionTime{}) {
		u.ScyllaShadowable = f.deletion(u.ScyllaShadowable, fixed)
	}
	for i := range u.ComplexDeletions {
		u.ComplexDeletions[i].Deletion = f.deletion(u.ComplexDeletions[i].Deletion, fixed)
	}
	return v
}

// bounds are what a row body can store against the output's serialization
// header: local deletion times and TTLs as int deltas from its minima.
type bounds struct {
	minLDT, minTTL int64
}

func (b *bounds) fits(v, minimum int64) bool { return v >= minimum && v-minimum <= math.MaxInt32 }

func (b *bounds) deletion(d deletiontime.DeletionTime) bool {
	return d.IsLive() || d == (deletiontime.DeletionTime{}) || b.fits(d.LocalDeletionTime, b.minLDT)
}

// check says why u cannot be written against the header ("" when it can):
// a value the damage left that no int delta reaches.
func (b *bounds) check(u *rows.Unfiltered) string {
	if b == nil {
		return ""
	}
	bad := func(what string, v int64) string {
		return fmt.Sprintf("its %s %d cannot be stored against the serialization header's minimum (a damaged value)", what, v)
	}
	if !b.deletion(u.Deletion) || !b.deletion(u.StartDeletion) || !b.deletion(u.EndDeletion) || !b.deletion(u.ScyllaShadowable) {
		return bad("deletion time", max(u.Deletion.LocalDeletionTime, u.StartDeletion.LocalDeletionTime, u.EndDeletion.LocalDeletionTime))
	}
	if lv := &u.Liveness; lv.HasTimestamp && lv.Expiring() {
		if !b.fits(lv.TTL, b.minTTL) {
			return bad("TTL", lv.TTL)
		}
		if !b.fits(lv.LocalExpirationTime, b.minLDT) {
			return bad("expiration time", lv.LocalExpirationTime)
		}
	}
	for _, cd := range u.ComplexDeletions {
		if !b.deletion(cd.Deletion) {
			return bad("complex deletion time", cd.Deletion.LocalDeletionTime)
		}
	}
	for i := range u.Cells {
		c := &u.Cells[i]
		if (c.IsExpiring() || c.IsTombstone()) && !b.fits(c.LocalDeletionTime, b.minLDT) {
			return bad("cell local deletion time", c.LocalDeletionTime)
		}
		if c.IsExpiring() && !b.fits(c.TTL, b.minTTL) {
			return bad("cell TTL", c.TTL)
		}
	}
	return ""
}
