package memsim

import (
	"testing"

	"github.com/sstabletool/sstabletool/workload"
)

// opsFromBytes turns fuzz input into a short stream of writes over a small
// key space: every byte choice is a valid op, so the fuzzer explores
// sequences (overwrites, deletions, ranges, statics, collections).
func opsFromBytes(data []byte) []workload.Op {
	var ops []workload.Op
	next := func() byte {
		if len(data) == 0 {
			return 0
		}
		b := data[0]
		data = data[1:]
		return b
	}
	for len(data) > 0 && len(ops) < 200 {
		h := next()
		op := workload.Op{Key: []byte{next() % 8}, LocalExpirationTime: workload.NoDeletionTime, LocalDeletionTime: workload.NoDeletionTime}
		ts := int64(next())
		op.Clustering = [][]byte{{next() % 4}}
		switch h % 6 {
		case 0:
			op.Deletion, op.DeletedAt = workload.DelPartition, ts
			op.Clustering = nil
		case 1:
			op.Deletion, op.DeletedAt = workload.DelRow, ts
		case 2:
			op.Deletion, op.DeletedAt = workload.DelRange, ts
			op.RangeEnd = [][]byte{{next() % 4}}
		default:
			op.HasLiveness, op.Timestamp = h&8 != 0, ts
			if h&16 != 0 {
				op.TTL, op.LocalExpirationTime = 60, 1000
			}
			if h&32 != 0 {
				// A collection overwrite: the column's deletion just
				// before the row's cells.
				op.ComplexDeletions = append(op.ComplexDeletions, workload.ComplexDeletion{Column: 2, DeletedAt: ts - 1, LocalDeletionTime: 1})
			}
			for n := int(next() % 4); n > 0; n-- {
				c := workload.Cell{Column: int(next() % 3), Timestamp: ts, LocalDeletionTime: workload.NoDeletionTime}
				if c.Column == 2 {
					c.Path = []byte{next() % 3}
				}
				c.Value = make([]byte, next()%5)
				c.Tombstone = next()%7 == 0
				if c.Tombstone {
					c.Value = nil
				}
				op.Cells = append(op.Cells, c)
			}
		}
		ops = append(ops, op)
	}
	return ops
}

var fuzzSchema = &workload.Schema{PartitionKey: []string{"k"}, Clustering: []string{"c"},
	Columns: []workload.Column{{Name: "s", Static: true}, {Name: "v"}, {Name: "m", Complex: true}}}

func FuzzApply(f *testing.F) {
	f.Add([]byte{3, 1, 5, 0, 2, 1, 9, 0, 3, 1})
	f.Add([]byte{0, 1, 9, 0, 1, 1, 10, 2, 2, 1, 11, 0, 3, 4, 3, 2, 8, 1, 2, 0, 2, 1})
	// Collection writes with their deletions, overwritten later.
	f.Add([]byte{35, 1, 5, 0, 2, 2, 1, 3, 0, 2, 0, 4, 0, 35, 1, 9, 0, 1, 2, 2, 3, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		ops := opsFromBytes(data)
		var parts []int64
		for _, k := range Kinds {
			m, err := NewMemtable(Config{Kind: k, Shards: 2}, fuzzSchema)
			if err != nil {
				t.Fatal(err)
			}
			for i := range ops {
				if err := m.Apply(&ops[i]); err != nil {
					t.Fatalf("%s op %d %+v: %v", k, i, ops[i], err)
				}
			}
			a := m.Account()
			if a.Cells < 0 || a.Live < 0 {
				t.Fatalf("%s: negative counts %+v", k, a)
			}
			for _, at := range AllocTypes {
				if a.On[at] < 0 || a.Off[at] < 0 {
					t.Fatalf("%s %s: negative bytes on %d off %d", k, at, a.On[at], a.Off[at])
				}
			}
			for i := range ops {
				m.Read(ops[i].Key)
			}
			parts = append(parts, m.Partitions())
		}
		if parts[0] != parts[1] || parts[1] != parts[2] {
			t.Fatalf("partition counts differ between memtables: %v", parts)
		}
		// All kinds over one store, in batches, account each kind as it
		// alone, op by op, does.
		all, err := NewMemtable(Config{Kinds: Kinds, Shards: 2}, fuzzSchema)
		if err != nil {
			t.Fatal(err)
		}
		if err := all.ApplyBatch(ops, func(int) {}); err != nil {
			t.Fatalf("all kinds: %v", err)
		}
		for _, k := range Kinds {
			one, _ := NewMemtable(Config{Kind: k, Shards: 2}, fuzzSchema)
			for i := range ops {
				one.Apply(&ops[i])
			}
			if got, want := all.AccountOf(k), *one.Account(); got != want {
				t.Fatalf("%s: shared store accounts %+v, alone %+v", k, got, want)
			}
		}
	})
}
