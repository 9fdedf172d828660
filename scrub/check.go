package scrub

import (
	"fmt"
	"io"

	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/stats"
)

// check decodes the whole of Data.db, cells included, for what verify
// does not look at and Cassandra's scrubber rewrites: rows out of
// clustering order, duplicate rows, and times timeFix would change. It
// says why Data.db cannot be kept ("" when it can) and counts the
// partitions.
func (sc *scrubber) check() (string, error) {
	dec := sc.decoder()
	order := sc.order()
	fix := newTimeFix(sc.from, sc.o.ReinsertOverflowedTTL)
	part := sc.src.Partitioner()
	var h rows.PartitionHeader
	var prev heldClustering
	var prevKey []byte
	var n, cells int64
	// What verify compares only when it decodes cells: Statistics.db's
	// bounds and counts against the rows (a kept Statistics.db must still
	// say what Data.db holds; where it does not, it is rebuilt with the
	// rows' own, as Cassandra's writer collects them).
	col := stats.NewBoundsCollector(sc.src.ClusteringTypes())
	// The index and filter a rebuild would make are built on the way, in
	// memory, so that the rebuild does not walk Data.db again.
	var ib *indexBuild
	if p := sc.plan(); sc.to.Name == sc.from.Name && (p.index != "" || p.filter != "") {
		primary := &capped{}
		var rowsBuf *capped
		var rowsOut io.Writer
		if sc.from.IsBTI() {
			rowsBuf = &capped{}
			rowsOut = rowsBuf
		}
		if b, err := sc.newIndexBuild(&p, sc.verified.Partitions, primary, rowsOut); err == nil {
			ib, b.primary, b.rows = b, primary, rowsBuf
		}
	}
	keep := func(err error) {
		if err != nil {
			ib = nil // too large, or a key out of order: the rebuild walks again
		}
	}
	for {
		err := dec.ReadPartitionHeader(&h)
		if err == io.EOF {
			sc.count = n
			sc.statsAgree(col)
			if ib != nil && n == sc.verified.Partitions {
				built := map[string][]byte{}
				if ib.finish(sc.from, built) == nil {
					sc.prebuilt = built
				}
			}
			return "", nil
		}
		if err != nil {
			return err.Error(), nil
		}
		if prevKey != nil && part.CompareKeys(prevKey, h.Key) >= 0 {
			return fmt.Sprintf("partition %s at byte %d does not sort after the one before it", keyString(sc.src.KeyType(), h.Key), h.Offset), nil
		}
		prevKey = append(prevKey[:0], h.Key...)
		if fix.changesDeletion(h.Deletion) {
			return fmt.Sprintf("partition %s has an invalid deletion time", keyString(sc.src.KeyType(), h.Key)), nil
		}
		prev.set = false
		if ib != nil {
			ib.partition(&h)
		}
		col.PartitionDeletion(h.Deletion)
		cells = 0
		for {
			u, err := dec.Next(false)
			if err != nil {
				return err.Error(), nil
			}
			if u == nil {
				break
			}
			if ib != nil {
				keep(ib.unfiltered(u))
			}
			cells += col.Unfiltered(u)
			if fix.changes(u) {
				return fmt.Sprintf("partition %s: the row at byte %d has a deletion time or expiration to fix", keyString(sc.src.KeyType(), h.Key), u.Offset), nil
			}
			if u.Kind == rows.KindStaticRow {
				continue
			}
			if prev.set {
				switch c := order.Compare(u, &prev.u); {
				case c < 0:
					return fmt.Sprintf("partition %s: the unfiltered at byte %d sorts before the one before it", keyString(sc.src.KeyType(), h.Key), u.Offset), nil
				case c == 0 && u.Kind == rows.KindRow && prev.u.Kind == rows.KindRow:
					return fmt.Sprintf("partition %s: the row at byte %d duplicates the one before it", keyString(sc.src.KeyType(), h.Key), u.Offset), nil
				}
			}
			prev.keep(u)
		}
		if ib != nil {
			keep(ib.end(dec.Pos()))
		}
		col.EndPartition(dec.Pos()-h.Offset, cells)
		n++
		if n%1024 == 0 {
			sc.progress(dec.Pos())
		}
	}
}

// statsAgree compares Statistics.db's bounds and counts with the rows'
// (stats.CompareCollected): what differs, wider or narrower, makes the
// rebuild write Statistics.db anew with the rows' own.
func (sc *scrubber) statsAgree(col *stats.Collector) {
	st := sc.src.Stats().Stats
	if st == nil {
		return
	}
	var scanned stats.Stats
	col.Fill(&scanned)
	sc.statsDiff = stats.CompareCollected(st, &scanned, sc.from, sc.src.ClusteringTypes())
	if len(sc.statsDiff) > 0 {
		sc.collected = &scanned
	}
}

// heldClustering keeps the previous unfiltered's clustering (its kind and
// values, copied) for the order check, without allocating per row.
type heldClustering struct {
	set  bool
	u    rows.Unfiltered
	buf  []byte
	vals [][]byte
}

func (h *heldClustering) keep(u *rows.Unfiltered) {
	kind, vals := prefixOf(u)
	h.buf = h.buf[:0]
	for _, v := range vals {
		h.buf = append(h.buf, v...)
	}
	h.vals = h.vals[:0]
	off := 0
	for _, v := range vals {
		if v == nil {
			h.vals = append(h.vals, nil)
			continue
		}
		h.vals = append(h.vals, h.buf[off:off+len(v):off+len(v)])
		off += len(v)
	}
	h.u.Kind = u.Kind
	h.u.Clustering, h.u.Bound.Values = nil, nil
	if u.Kind == rows.KindMarker {
		h.u.Bound.Kind, h.u.Bound.Values = kind, h.vals
	} else {
		h.u.Clustering = h.vals
	}
	h.set = true
}

// changesDeletion reports whether deletion would replace d's time.
func (f timeFix) changesDeletion(d deletiontime.DeletionTime) bool {
	return f.legacyRead && !d.IsLive() && d != (deletiontime.DeletionTime{}) && d.LocalDeletionTime < 0
}

// changes reports whether row would change u or leave it out; it changes
// nothing and allocates nothing.
func (f timeFix) changes(u *rows.Unfiltered) bool {
	if u.Kind == rows.KindMarker {
		if u.Bound.Kind.IsBoundary() {
			return f.changesDeletion(u.EndDeletion) || f.changesDeletion(u.StartDeletion)
		}
		return f.changesDeletion(u.Deletion)
	}
	act := f.reinsert || f.legacyRead // an overflow is fixed, or the row left out
	lv := &u.Liveness
	if lv.HasTimestamp && lv.Expiring() && lv.TTL != expiredLivenessTTL && (lv.TTL < 0 || act && f.overflowed(lv.LocalExpirationTime)) {
		return true
	}
	for i := range u.Cells {
		c := &u.Cells[i]
		switch {
		case c.IsExpiring():
			if c.TTL < 0 || act && f.overflowed(c.LocalDeletionTime) {
				return true
			}
		case c.IsTombstone():
			if f.legacyRead && c.LocalDeletionTime < 0 {
				return true
			}
		}
	}
	if u.HasDeletion() && f.changesDeletion(u.Deletion) || f.changesDeletion(u.ScyllaShadowable) {
		return true
	}
	for _, cd := range u.ComplexDeletions {
		if f.changesDeletion(cd.Deletion) {
			return true
		}
	}
	return false
}
