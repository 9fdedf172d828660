package scrub

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/merge"
)

// partitionSink receives what scrub keeps of one partition, in order.
type partitionSink interface {
	start(key []byte, del deletiontime.DeletionTime) error
	static(u *rows.Unfiltered) error
	add(u *rows.Unfiltered) error
	end() error
}

// discard is the sink of the first, checking pass over a partition.
type discard struct{}

func (discard) start([]byte, deletiontime.DeletionTime) error { return nil }
func (discard) static(*rows.Unfiltered) error                 { return nil }
func (discard) add(*rows.Unfiltered) error                    { return nil }
func (discard) end() error                                    { return nil }

// held is a partition, or the out-of-order rest of one, kept in memory for
// the second sstable (Cassandra's scrubber keeps them in memory too).
type held struct {
	key    []byte
	pos    int64
	del    deletiontime.DeletionTime
	static *rows.Unfiltered // nil when none
	rows   []*rows.Unfiltered
}

// pipeline is what happens to one partition's rows, in the order of
// Cassandra's scrubber: the times fixed (timeFix, with
// FixNegativeLocalDeletionTimeIterator's and computeFinalRow's rules),
// adjacent versions of a row merged (RowMergingSSTableIterator), and from
// the first unfiltered that sorts before the previous one, the rest held
// back for the second sstable (OrderCheckerIterator).
type pipeline struct {
	order     clusteringOrder
	merger    *merge.RowMerger
	fix       timeFix
	hasStatic bool
	keyType   *cqltype.Type
	// bounds, when set, leaves out rows the output's header cannot hold.
	bounds *bounds
	// rep hears what is dropped, merged and fixed (the writing pass); nil
	// for the checking pass.
	rep *Report
}

// partResult is what the pipeline made of one partition.
type partResult struct {
	kept    bool   // the sink got the partition
	emptied string // why nothing of it was kept, when it was not
	tail    *held  // the rows held back for the second sstable
}

// run reads the partition whose header h the decoder has just read and
// gives what is kept to sink; with whole, all of it is held back instead
// (a partition out of order).
func (p *pipeline) run(dec *rows.Decoder, h *rows.PartitionHeader, sink partitionSink, whole bool) (partResult, error) {
	var res partResult
	var fixed int64
	key := append([]byte(nil), h.Key...)
	del := p.fix.deletion(h.Deletion, &fixed)
	var static, pending, last *rows.Unfiltered
	var tail *held
	dropped := 0
	started := false
	begin := func() error {
		if started {
			return nil
		}
		started = true
		if err := sink.start(key, del); err != nil {
			return err
		}
		if p.hasStatic {
			st := static
			if st == nil {
				st = &rows.Unfiltered{Kind: rows.KindStaticRow}
			}
			return sink.static(st)
		}
		return nil
	}
	hold := func(u *rows.Unfiltered) {
		if tail == nil {
			tail = &held{key: key, pos: h.Offset, del: del}
			if static != nil {
				tail.static = static
			}
		}
		tail.rows = append(tail.rows, u)
	}
	flush := func(u *rows.Unfiltered) error {
		if whole || tail != nil {
			hold(u)
			return nil
		}
		if last != nil && p.order.Compare(u, last) < 0 {
			if p.rep != nil {
				p.rep.OutOfOrder = append(p.rep.OutOfOrder, OutOfOrder{Key: p.keyString(key), Position: h.Offset, Rows: true,
					Reason: fmt.Sprintf("row %s sorts before %s, the one before it", p.clusteringString(u), p.clusteringString(last))})
			}
			hold(u)
			return nil
		}
		if err := begin(); err != nil {
			return err
		}
		last = u
		return sink.add(u)
	}
	for {
		u, err := dec.Next(false)
		if err != nil {
			return res, err
		}
		if u == nil {
			break
		}
		c := u.Clone()
		v := p.fix.row(c, &fixed)
		if v.drop == "" {
			v.drop = p.bounds.check(c)
		}
		if v.drop != "" {
			dropped++
			if p.rep != nil {
				p.rep.row(RowChange{Key: p.keyString(key), Clustering: p.clusteringString(c), Action: "dropped", Reason: v.drop})
			}
			if c.Kind == rows.KindStaticRow {
				static = nil
			}
			continue
		}
		if v.reinserted && p.rep != nil {
			p.rep.RowsFixed++
		}
		if c.Kind == rows.KindStaticRow {
			static = c
			continue
		}
		if pending != nil && p.order.sameRow(pending, c) {
			m, err := p.merger.Merge(pending, c)
			if err != nil {
				return res, fmt.Errorf("partition %s, row %s: %w", p.keyString(key), p.clusteringString(c), err)
			}
			if p.rep != nil {
				p.rep.row(RowChange{Key: p.keyString(key), Clustering: p.clusteringString(c), Action: "merged",
					Reason: "a duplicate of the row before it (reconciled as Rows.merge does)"})
			}
			pending = m // nil: nothing of the two survived
			continue
		}
		if pending != nil {
			if err := flush(pending); err != nil {
				return res, err
			}
			pending = nil
		}
		if c.Kind == rows.KindRow {
			pending = c
			continue
		}
		if err := flush(c); err != nil {
			return res, err
		}
	}
	if pending != nil {
		if err := flush(pending); err != nil {
			return res, err
		}
	}
	if p.rep != nil {
		p.rep.DeletionTimesFixed += fixed
	}
	res.tail = tail
	if whole {
		if tail == nil {
			tail = &held{key: key, pos: h.Offset, del: del, static: static}
			res.tail = tail
		}
		return res, nil
	}
	if !started && (static != nil && !static.IsEmpty() || !del.IsLive()) {
		if err := begin(); err != nil {
			return res, err
		}
	}
	if !started {
		if tail == nil {
			res.emptied = "nothing left in it"
			if dropped > 0 {
				res.emptied = fmt.Sprintf("every row of it was dropped (%d)", dropped)
			}
		}
		return res, nil
	}
	res.kept = true
	return res, sink.end()
}

func (p *pipeline) keyString(key []byte) string { return keyString(p.keyType, key) }

// keyString renders a key as Cassandra's scrubber names it
// (AbstractType.getString), or its hex when it does not decode.
func keyString(t *cqltype.Type, key []byte) string {
	if t != nil {
		if s, err := t.Format(key); err == nil {
			return s
		}
	}
	return fmt.Sprintf("0x%x", key)
}

func (p *pipeline) clusteringString(u *rows.Unfiltered) string {
	kind, vals := prefixOf(u)
	if u.Kind == rows.KindStaticRow {
		return "STATIC"
	}
	if u.Kind == rows.KindRow && len(vals) == 0 {
		return "" // the one row of a table without clustering columns
	}
	parts := make([]string, len(vals))
	for i, v := range vals {
		switch {
		case v == nil:
			parts[i] = "null"
		case i < len(p.order.types):
			s, err := p.order.types[i].Format(v)
			if err != nil {
				s = fmt.Sprintf("0x%x", v)
			}
			parts[i] = s
		default:
			parts[i] = fmt.Sprintf("0x%x", v)
		}
	}
	s := "(" + strings.Join(parts, ", ") + ")"
	if u.Kind == rows.KindMarker {
		s = kind.String() + s
	}
	return s
}

// sortHeld puts held-back rows in clustering order and merges the versions
// of a row that meet (ImmutableBTreePartition.create over an unordered
// iterator).
func (p *pipeline) sortHeld(h *held) error {
	slices.SortStableFunc(h.rows, p.order.Compare)
	out := h.rows[:0]
	for _, u := range h.rows {
		if n := len(out); n > 0 && p.order.sameRow(out[n-1], u) {
			m, err := p.merger.Merge(out[n-1], u)
			if err != nil {
				return fmt.Errorf("partition %s, row %s: %w", p.keyString(h.key), p.clusteringString(u), err)
			}
			if p.rep != nil {
				p.rep.row(RowChange{Key: p.keyString(h.key), Clustering: p.clusteringString(u), Action: "merged",
					Reason: "a duplicate row among those out of order"})
			}
			if m == nil {
				out = out[:n-1]
			} else {
				out[n-1] = m
			}
			continue
		}
		out = append(out, u)
	}
	h.rows = out
	return nil
}

// mergeHeld folds b (the same key) into a: the larger partition deletion,
// the static rows merged, the rows together.
func (p *pipeline) mergeHeld(a, b *held) error {
	if b.del.Supersedes(a.del) {
		a.del = b.del
	}
	switch {
	case a.static == nil:
		a.static = b.static
	case b.static != nil:
		m, err := p.merger.Merge(a.static, b.static)
		if err != nil {
			return fmt.Errorf("partition %s, static row: %w", p.keyString(a.key), err)
		}
		a.static = m // nil: nothing of the two survived
	}
	a.rows = append(a.rows, b.rows...)
	return nil
}

// writeHeld gives one held partition, sorted, to sink.
func (p *pipeline) writeHeld(h *held, sink partitionSink) error {
	if err := p.sortHeld(h); err != nil {
		return err
	}
	if err := sink.start(h.key, h.del); err != nil {
		return err
	}
	if p.hasStatic {
		st := h.static
		if st == nil {
			st = &rows.Unfiltered{Kind: rows.KindStaticRow}
		}
		if err := sink.static(st); err != nil {
			return err
		}
	}
	for _, u := range h.rows {
		if err := sink.add(u); err != nil {
			return err
		}
	}
	return sink.end()
}
