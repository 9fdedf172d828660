package generate

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/stats"
	"github.com/sstabletool/sstabletool/internal/writer"
)

// A TWCS-like history (HistoryOptions.Window) is what a time series
// under TimeWindowCompactionStrategy leaves on disk: sstable k
// (generation k+1) holds the writes of time window k and nothing else,
// every row inserted with the same TTL and never overwritten or deleted,
// its timestamps inside the window: window k starts Window seconds after
// window k-1, the first at the profile's timestamp_start. Each partition
// gets its rows in every window, under clustering values k*1000+r, so the
// windows overlap in keys but not in time.
//
// With LateWindow L, one more sstable (generation SSTables+1) holds rows
// written after the last window but with timestamps at the start of
// window L and no TTL: a client writing with the event's time (USING
// TIMESTAMP), or old data streamed in by a repair. That sstable never
// expires and its oldest timestamp is in window L, so once windows L, L+1,
// ... have expired it keeps them from being dropped: the sstables
// expired-blockers is about.
//
// The history's Now is the end of the last window: at that time with
// gc_grace_seconds 0, window k has expired when (k+1)*Window + TTL <=
// SSTables*Window.

// windows writes a TWCS-like history; the caller set up h, the partitions
// in token order and the compression.
func (h *history) windows(dir string, o HistoryOptions, order []int64, comp *writer.Compression, res *HistoryResult) (*HistoryResult, error) {
	t := h.t
	if t.counters {
		return nil, errors.New("a TWCS-like history writes rows with a TTL: counter tables cannot have one")
	}
	if o.LateWindow < 0 || o.LateWindow > h.n {
		return nil, fmt.Errorf("the late window must be one of the %d windows, got %d", h.n, o.LateWindow)
	}
	ttl := o.TTL
	if ttl <= 0 {
		ttl = 2 * o.Window
	}
	win := o.Window * 1_000_000
	res.Now = (h.w0 + int64(h.n)*win) / 1_000_000
	n := int64(len(order))
	total := int64(h.n) * n
	write := func(gen int, rowsOf func(p int64) int64, row func(p, r int64) *rows.Unfiltered, at int64) error {
		w, err := writer.NewSSTableWriter(dir, writer.Config{Version: o.Version, Generation: strconv.Itoa(gen), Header: t.header,
			Schema: t.schema, Partitioner: stats.Murmur3Partitioner, Compression: comp, ColumnIndexSize: o.ColumnIndexSize, ExpectedKeys: n})
		if err != nil {
			return err
		}
		if gen == 1 {
			res.Recovered = w.Staging().Recovered()
		}
		for i, p := range order {
			nr := rowsOf(p)
			if nr == 0 {
				continue
			}
			h.key = t.key(h.key[:0], p)
			if err := w.StartPartition(h.key, deletiontime.Live); err != nil {
				w.Abort()
				return err
			}
			for r := int64(0); r < nr; r++ {
				h.vals = h.vals[:0]
				if err := w.Add(row(p, r)); err != nil {
					w.Abort()
					return err
				}
				res.Rows++
			}
			if err := w.EndPartition(); err != nil {
				w.Abort()
				return err
			}
			if o.Progress != nil && i%256 == 0 {
				o.Progress(at+int64(i), total)
			}
		}
		path, err := w.Finish()
		if err != nil {
			return err
		}
		res.DataPaths = append(res.DataPaths, path)
		return nil
	}
	rowsOf := h.rows
	if len(t.ck) == 0 {
		rowsOf = func(int64) int64 { return 1 } // a partition is one row
	}
	for k := 0; k < h.n; k++ {
		start := h.w0 + int64(k)*win
		err := write(k+1, rowsOf, func(p, r int64) *rows.Unfiltered {
			ts := start + int64(t.h(70, uint64(p), uint64(r), uint64(k))%uint64(win))
			return h.windowRow(p, int64(k)*1000+r, uint64(k), ts, ttl)
		}, int64(k)*n)
		if err != nil {
			return nil, err
		}
	}
	if L := o.LateWindow; L > 0 {
		start := h.w0 + int64(L-1)*win
		// One partition in five gets one late row, its timestamp a few
		// microseconds into window L.
		late := func(p int64) int64 {
			if t.h(71, uint64(p), 0, 0)%5 == 0 {
				return 1
			}
			return 0
		}
		err := write(h.n+1, late, func(p, r int64) *rows.Unfiltered {
			return h.windowRow(p, int64(L-1)*1000+999, uint64(L-1), start+1+p%1000, 0)
		}, total)
		if err != nil {
			return nil, err
		}
	}
	return res, nil
}

// windowRow is an INSERT of every regular column of row ck (its
// clustering value) of partition p at ts, with ttl (0: none). k varies
// the values.
func (h *history) windowRow(p, ck int64, k uint64, ts, ttl int64) *rows.Unfiltered {
	u := h.reset(rows.KindRow)
	u.Clustering = h.clustering(ck)
	u.Liveness = rows.Liveness{HasTimestamp: true, Timestamp: ts}
	if ttl != 0 {
		u.Liveness.TTL, u.Liveness.LocalExpirationTime = ttl, seconds(ts)+ttl
	}
	h.cells = h.cells[:0]
	for ci, c := range h.t.regular {
		h.cells = h.valueCells(h.cells, c, ci, uint64(p), uint64(ck), k, ts, ttl, true)
	}
	u.Cells = h.cells
	return u.Clone()
}
