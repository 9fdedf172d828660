package memsim

import (
	"fmt"
	"io"

	"github.com/sstabletool/sstabletool/format/clustering"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/workload"
)

// SSTableSource replays every partition, row and cell of the given
// sstables (all of one table) as writes: a partition deletion, then each
// static row and row with its liveness, deletion, complex (collection)
// deletions and cells, and each range tombstone (an open marker and its
// close) as a range deletion. It also returns the sstables' partitioner.
func SSTableSource(paths []string) (SourceFunc, Partitioner, error) {
	if len(paths) == 0 {
		return nil, 0, fmt.Errorf("no sstables given")
	}
	first, err := sstable.Open(paths[0], sstable.Options{})
	if err != nil {
		return nil, 0, err
	}
	schema := schemaOf(first)
	part, ok := PartitionerFor(first.Partitioner())
	first.Close()
	if !ok {
		return nil, 0, fmt.Errorf("%s: memsim models Murmur3Partitioner and ByteOrderedPartitioner memtables, not %s", paths[0], first.Partitioner().Name())
	}
	open := func() (workload.Source, int64, error) {
		return &sstableSource{paths: paths, schema: schema}, -1, nil
	}
	return open, part, nil
}

func schemaOf(s *sstable.SSTable) *workload.Schema {
	ws := &workload.Schema{PartitionKey: []string{"key"}}
	for i := range s.Schema().ClusteringFixed {
		ws.Clustering = append(ws.Clustering, fmt.Sprintf("c%d", i))
	}
	for _, c := range s.Schema().Static {
		ws.Columns = append(ws.Columns, workload.Column{Name: c.Name, Static: true, Complex: c.Complex})
	}
	for _, c := range s.Schema().Regular {
		ws.Columns = append(ws.Columns, workload.Column{Name: c.Name, Complex: c.Complex})
	}
	return ws
}

type sstableSource struct {
	paths  []string
	schema *workload.Schema
	next   int // index of the next sstable to open

	s      *sstable.SSTable
	dec    *rows.Decoder
	inPart bool
	h      rows.PartitionHeader

	openStart [][]byte
	openDel   struct{ at, ldt int64 }
	hasOpen   bool
}

func (src *sstableSource) Schema() *workload.Schema { return src.schema }

// Close releases the sstable being read, if any.
func (src *sstableSource) Close() error {
	src.closeCurrent()
	return nil
}

func (src *sstableSource) closeCurrent() {
	if src.s != nil {
		src.s.Close()
		src.s, src.dec = nil, nil
	}
}

// Next fills op with the next write.
func (src *sstableSource) Next(op *workload.Op) (bool, error) {
	for {
		if src.s == nil {
			if src.next >= len(src.paths) {
				return false, nil
			}
			p := src.paths[src.next]
			src.next++
			s, err := sstable.Open(p, sstable.Options{})
			if err != nil {
				return false, err
			}
			if got := schemaOf(s); !sameColumns(got, src.schema) {
				s.Close()
				return false, fmt.Errorf("%s: columns differ from %s's; --from-sstable replays one table", p, src.paths[0])
			}
			src.s, src.dec, src.inPart = s, s.Decoder(0), false
		}
		if !src.inPart {
			err := src.dec.ReadPartitionHeader(&src.h)
			if err == io.EOF {
				src.closeCurrent()
				continue
			}
			if err != nil {
				src.closeCurrent()
				return false, err
			}
			src.inPart, src.hasOpen = true, false
			if !src.h.Deletion.IsLive() {
				op.Reset()
				op.Key = append(op.Key[:0], src.h.Key...)
				op.Deletion, op.DeletedAt, op.LocalDeletionTime = workload.DelPartition, src.h.Deletion.MarkedForDeleteAt, src.h.Deletion.LocalDeletionTime
				return true, nil
			}
		}
		u, err := src.dec.Next(false)
		if err != nil {
			src.closeCurrent()
			return false, err
		}
		if u == nil {
			src.inPart = false
			continue
		}
		op.Reset()
		op.Key = append(op.Key[:0], src.h.Key...)
		if u.Kind == rows.KindMarker {
			if src.marker(op, u) {
				return true, nil
			}
			continue
		}
		src.row(op, u)
		return true, nil
	}
}

// marker turns a close (or boundary) marker into a range deletion from the
// matching open marker.
func (src *sstableSource) marker(op *workload.Op, u *rows.Unfiltered) bool {
	k := u.Bound.Kind
	emitted := false
	if src.hasOpen && (k == clustering.ExclEndBound || k == clustering.InclEndBound || u.IsBoundary()) {
		op.Clustering = copyValues(op.Clustering[:0], src.openStart)
		op.RangeEnd = copyValues(op.RangeEnd[:0], u.Bound.Values)
		op.Deletion, op.DeletedAt, op.LocalDeletionTime = workload.DelRange, src.openDel.at, src.openDel.ldt
		src.hasOpen = false
		emitted = true
	}
	if k == clustering.InclStartBound || k == clustering.ExclStartBound || u.IsBoundary() {
		d := u.Deletion
		if u.IsBoundary() {
			d = u.StartDeletion
		}
		src.openStart = copyValues(src.openStart[:0], u.Bound.Values)
		src.openDel.at, src.openDel.ldt = d.MarkedForDeleteAt, d.LocalDeletionTime
		src.hasOpen = true
	}
	return emitted
}

func copyValues(dst [][]byte, vals [][]byte) [][]byte {
	for _, v := range vals {
		var i int
		dst, i = workload.AddValue(dst)
		dst[i] = append(dst[i], v...)
	}
	return dst
}

func (src *sstableSource) row(op *workload.Op, u *rows.Unfiltered) {
	static := u.Kind == rows.KindStaticRow
	op.Static = static
	op.Clustering = copyValues(op.Clustering[:0], u.Clustering)
	if u.Liveness.HasTimestamp {
		op.HasLiveness, op.Timestamp = true, u.Liveness.Timestamp
		if u.Liveness.Expiring() {
			op.TTL, op.LocalExpirationTime = int32(u.Liveness.TTL), u.Liveness.LocalExpirationTime
		}
	}
	if u.HasDeletion() {
		op.Deletion, op.DeletedAt, op.LocalDeletionTime = workload.DelRow, u.Deletion.MarkedForDeleteAt, u.Deletion.LocalDeletionTime
	}
	base := 0
	if !static {
		base = len(src.s.Schema().Static)
	}
	for _, cd := range u.ComplexDeletions {
		op.ComplexDeletions = append(op.ComplexDeletions, workload.ComplexDeletion{Column: base + cd.Column,
			DeletedAt: cd.Deletion.MarkedForDeleteAt, LocalDeletionTime: cd.Deletion.LocalDeletionTime})
	}
	for i := range u.Cells {
		in := &u.Cells[i]
		c := op.AddCell()
		c.Column = base + in.Column
		c.Path = append(c.Path[:0], in.Path...)
		c.Value = append(c.Value[:0], in.Value...)
		c.Timestamp, c.TTL, c.LocalDeletionTime, c.Tombstone = in.Timestamp, int32(in.TTL), in.LocalDeletionTime, in.IsTombstone()
	}
}

func sameColumns(a, b *workload.Schema) bool {
	if len(a.Columns) != len(b.Columns) || len(a.Clustering) != len(b.Clustering) {
		return false
	}
	for i := range a.Columns {
		if a.Columns[i] != b.Columns[i] {
			return false
		}
	}
	return true
}
