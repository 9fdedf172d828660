package merge

import (
	"bytes"
	"math"

	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format/rows"
)

// The rules one version of a thing wins over another by, each from the
// Java it follows. They return which side won (0 left, 1 right) and why
// the other lost, so that the merge and explain share one reading.

// Cassandra's markers for "none" (LivenessInfo, Cell).
const (
	noTimestamp        = math.MinInt64 // LivenessInfo.NO_TIMESTAMP
	noExpirationTime   = math.MaxInt64 // LivenessInfo.NO_EXPIRATION_TIME, Cell.NO_DELETION_TIME
	expiredLivenessTTL = math.MaxInt32 // LivenessInfo.EXPIRED_LIVENESS_TTL: a primary key tombstone (views)
)

// Cells as Cassandra classifies them (AbstractCell, BufferCell): a cell
// with a local deletion time is a tombstone unless it has a TTL, in which
// case it is expiring, whatever the flags that brought the fields.
func hasDeletionTime(c *rows.Cell) bool {
	return c.Flags&(rows.CellFlagDeleted|rows.CellFlagExpiring) != 0
}

func isExpiring(c *rows.Cell) bool { return hasDeletionTime(c) && c.TTL != 0 }

func isTombstone(c *rows.Cell) bool { return hasDeletionTime(c) && c.TTL == 0 }

// isLiveCell is AbstractCell.isLive(nowInSec).
func isLiveCell(c *rows.Cell, now int64) bool {
	return !hasDeletionTime(c) || (c.TTL != 0 && now < c.LocalDeletionTime)
}

// resolveRegular is Cells.resolveRegular: the newer timestamp; on a tie,
// a tombstone or expiring cell over a live one (CASSANDRA-14592), a
// tombstone over an expiring cell, the later local deletion time, then
// the greater value bytes (unsigned); the left cell on a full tie.
func resolveRegular(l, r *rows.Cell) (int, Reason) {
	if l.Timestamp != r.Timestamp {
		if l.Timestamp > r.Timestamp {
			return 0, OlderTimestamp
		}
		return 1, OlderTimestamp
	}
	lx, rx := hasDeletionTime(l), hasDeletionTime(r)
	if lx || rx {
		if lx != rx {
			w, c := 0, l
			if rx {
				w, c = 1, r
			}
			if isTombstone(c) {
				return w, TieTombstoneWins
			}
			return w, TieExpiringWins
		}
		lt, rt := !isExpiring(l), !isExpiring(r)
		if lt != rt {
			if lt {
				return 0, TieTombstoneWins
			}
			return 1, TieTombstoneWins
		}
		if l.LocalDeletionTime != r.LocalDeletionTime {
			if l.LocalDeletionTime > r.LocalDeletionTime {
				return 0, TieLaterDeletionTime
			}
			return 1, TieLaterDeletionTime
		}
	}
	switch c := bytes.Compare(l.Value, r.Value); {
	case c > 0:
		return 0, TieGreaterValue
	case c < 0:
		return 1, TieGreaterValue
	}
	return 0, Duplicate
}

func livenessTimestamp(l *rows.Liveness) int64 {
	if !l.HasTimestamp {
		return noTimestamp
	}
	return l.Timestamp
}

// livenessExpiring is LivenessInfo.isExpiring (an expired liveness, a
// primary key tombstone, is expiring too).
func livenessExpiring(l *rows.Liveness) bool { return l.HasTimestamp && l.TTL != 0 }

func livenessExpired(l *rows.Liveness) bool { return l.HasTimestamp && l.TTL == expiredLivenessTTL }

func localExpirationTime(l *rows.Liveness) int64 {
	if livenessExpiring(l) {
		return l.LocalExpirationTime
	}
	return noExpirationTime
}

// livenessLive is LivenessInfo.isLive(nowInSec).
func livenessLive(l *rows.Liveness, now int64) bool {
	switch {
	case !l.HasTimestamp || livenessExpired(l):
		return false
	case livenessExpiring(l):
		return now < l.LocalExpirationTime
	}
	return true
}

// livenessSupersedes is LivenessInfo.supersedes, with why b lost when it
// does: the newer timestamp; on a tie an expired liveness (a primary key
// tombstone), then between two of a kind the later expiration, else the
// expiring one.
func livenessSupersedes(a, b *rows.Liveness) (bool, Reason) {
	at, bt := livenessTimestamp(a), livenessTimestamp(b)
	if at != bt {
		return at > bt, OlderTimestamp
	}
	if ae, be := livenessExpired(a), livenessExpired(b); ae != be {
		return ae, TieTombstoneWins
	}
	if livenessExpiring(a) == livenessExpiring(b) {
		return localExpirationTime(a) > localExpirationTime(b), TieLaterDeletionTime
	}
	return livenessExpiring(a), TieExpiringWins
}

// supersedes is DeletionTime.supersedes: the later markedForDeleteAt, on
// a tie the later local deletion time.
func supersedes(a, b deletiontime.DeletionTime) bool { return a.Supersedes(b) }

// deletionLoss is why deletion b lost to a, which supersedes it or
// equals it.
func deletionLoss(a, b deletiontime.DeletionTime) Reason {
	switch {
	case a.MarkedForDeleteAt != b.MarkedForDeleteAt:
		return OlderTimestamp
	case a.LocalDeletionTime != b.LocalDeletionTime:
		return TieLaterDeletionTime
	}
	return Duplicate
}

// deletes is DeletionTime.deletes(timestamp).
func deletes(d deletiontime.DeletionTime, ts int64) bool { return ts <= d.MarkedForDeleteAt }

// rowDeletion is a row's deletion, LIVE when it has none.
func rowDeletion(u *rows.Unfiltered) deletiontime.DeletionTime {
	if !u.HasDeletion() {
		return deletiontime.Live
	}
	return u.Deletion
}
