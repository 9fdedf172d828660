package rows

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/internal/fixtures"
)

// FuzzFastRowBodyMatchesSlow decodes arbitrary bytes with and without the
// row body fast path: the unfiltereds and any error must be the same.
func FuzzFastRowBodyMatchesSlow(f *testing.F) {
	if r := fixtures.Root(); r != "" {
		for _, n := range []string{"table_with_set-8fe7efd0a1c711eeae8c6d2c86545d91", "table_with_map-901f2c70a1c711eeae8c6d2c86545d91"} {
			if b, err := os.ReadFile(filepath.Join(r, "cassandra", "me-collections", n, "me-1-big-Data.db")); err == nil {
				f.Add(b)
			}
		}
	}
	f.Add([]byte{0, 1, 'k', 0x80, 0x24, 0, 4, 0, 0, 0, 0, 1})
	f.Add([]byte{0, 1, 'k', 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0x80, 0, 0, 0, 0, 0, 0, 0,
		0x7c, 0, 1, 2, 0x10, 0, 0x81, 0, 0x80, 0x82, 3, 0x84, 0x01, 0x08, 0, 0, 0, 7, 0x02, 0x82, 0, 5, 6, 0x40, 1, 9, 1})
	// A row with fixed-width clustering (odd length: [8, 4]), timestamp,
	// all columns: a fixed cell, a variable one and an empty complex one.
	f.Add([]byte{0, 1, 'k', 0x7f, 0xff, 0xff, 0xff, 0x80, 0, 0, 0, 0, 0, 0, 0,
		0x24, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 11, 0,
		5, 0x08, 1, 2, 3, 4, 0x08, 1, 9, 0, 1, 0})
	// Variable clustering (even length); row with timestamp, TTL, complex
	// deletions, all columns: an expiring tombstone with its own times, a
	// deleted empty cell, and two complex cells, one on the row's
	// timestamp and TTL and one with its own (a 2-byte timestamp vint).
	f.Add([]byte{0, 1, 'k', 0x7f, 0xff, 0xff, 0xff, 0x80, 0, 0, 0, 0, 0, 0, 0,
		0x6c, 0, 1, 'c', 31, 0,
		5, 6, 7,
		0x03, 7, 9, 10, 1, 2, 3, 4,
		0x05, 6, 2,
		3, 4, 2,
		0x18, 1, 'p', 1, 'v',
		0x02, 0x81, 0, 3, 4, 1, 'q', 0,
		1})
	// Fixed-width clustering (odd length); a row whose size, a value
	// length (201) and a path length (130) take two vint bytes each.
	long := []byte{0, 1, 'k', 0x7f, 0xff, 0xff, 0xff, 0x80, 0, 0, 0, 0, 0, 0, 0,
		0x24, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0x81, 0x59, 0,
		0, 0x08, 1, 2, 3, 4, 0x08, 0x80, 201}
	long = append(long, make([]byte, 201)...)
	long = append(long, 1, 0x0C, 0x80, 130)
	long = append(long, make([]byte, 130)...)
	f.Add(append(long, 1))
	// A ScyllaDB shadowable row deletion, then a row the fast path takes:
	// its ScyllaShadowable must be empty, not the previous row's.
	ck := []byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	scylla := []byte{0, 1, 'k', 0x7f, 0xff, 0xff, 0xff, 0x80, 0, 0, 0, 0, 0, 0, 0, 0x80 | 0x20, 0x80}
	scylla = append(append(scylla, ck...), 12, 0, 5, 3, 0x08, 1, 2, 3, 4, 0x08, 1, 'v', 0, 0x20)
	scylla = append(append(scylla, ck...), 10, 28, 0x08, 1, 2, 3, 4, 0x08, 1, 'w', 0, 1)
	f.Add(scylla)
	f.Fuzz(func(t *testing.T, b []byte) {
		clusteringFixed := []int{-1}
		if len(b)%2 == 1 {
			clusteringFixed = []int{8, 4} // all fixed-width: the clustering shortcut
		}
		// The minima and the version decide how deltas are cast and added
		// (32-bit wrap for me, checked casts for oa); a minimum near the
		// top of an int makes small deltas wrap, a negative one makes every
		// sum suspect: the fast path must hand all of those to the general one.
		variant := len(b) / 2 % 3
		minLDT, minTTL, version := int64(50), int64(7), "me"
		switch variant {
		case 1:
			minLDT, minTTL = 0x7FFFFF00, 0x7FFFFFF0
		case 2:
			minLDT, minTTL, version = -3, -1, "oa"
		}
		s := &Schema{
			Version:              format.MustVersion(version),
			ClusteringFixed:      clusteringFixed,
			Static:               []Column{{Name: "st", Fixed: -1}},
			Regular:              []Column{{Name: "a", Fixed: 4}, {Name: "b", Fixed: -1}, {Name: "s", Fixed: -1, Complex: true}},
			MinTimestamp:         1000,
			MinLocalDeletionTime: minLDT,
			MinTTL:               minTTL,
		}
		walk := func(slow bool) ([]*Unfiltered, string) {
			d := NewDecoder(NewBytesSource(b, 0), s)
			d.slowOnly = slow
			var out []*Unfiltered
			var h PartitionHeader
			for i := 0; i < 50; i++ {
				if err := d.ReadPartitionHeader(&h); err != nil {
					return out, err.Error()
				}
				for {
					u, err := d.Next(false)
					if err != nil {
						return out, err.Error()
					}
					if u == nil {
						break
					}
					out = append(out, u.Clone())
				}
			}
			return out, ""
		}
		fast, fastErr := walk(false)
		slow, slowErr := walk(true)
		if fastErr != slowErr {
			t.Fatalf("errors differ: fast %q, slow %q", fastErr, slowErr)
		}
		if diff := cmp.Diff(slow, fast); diff != "" {
			t.Fatalf("fast path differs (-slow +fast):\n%s", diff)
		}
	})
}
