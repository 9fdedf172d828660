package scrub

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sstabletool/sstabletool/convert"
	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/fixtures"
)

// table3 is Cassandra's own test data for CASSANDRA-14092 (TTLTest,
// COMPLEX_NOCLUSTERING: k int PRIMARY KEY, a int, b set<text>), written by
// 3.11 with a TTL of 20 years that overflowed the signed int expiration.
func table3(t *testing.T) string {
	t.Helper()
	p := filepath.Join(fixtures.Dir(t), "realworld", "cassandra", "negative-local-expiration", "table3", "mc-1-big-Data.db")
	if _, err := os.Stat(p); err != nil {
		t.Skipf("Cassandra's negative-local-expiration table3 is not in the test data: %v", err)
	}
	return p
}

type expiring struct {
	what         string
	ts, ldt, ttl int64
	isExpiring   bool
}

// expirings lists every row liveness and cell of the sstable, in order.
func expirings(t *testing.T, path string) map[string][]expiring {
	t.Helper()
	s, err := sstable.Open(path, sstable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	out := map[string][]expiring{}
	err = s.EachPartition(func(h *rows.PartitionHeader, dec *rows.Decoder) error {
		k := string(h.Key)
		for {
			u, err := dec.Next(false)
			if err != nil || u == nil {
				return err
			}
			if u.Liveness.HasTimestamp {
				out[k] = append(out[k], expiring{what: "liveness", ts: u.Liveness.Timestamp, ldt: u.Liveness.LocalExpirationTime, ttl: u.Liveness.TTL, isExpiring: u.Liveness.Expiring()})
			}
			for _, c := range u.Cells {
				out[k] = append(out[k], expiring{what: "cell " + string(c.Path), ts: c.Timestamp, ldt: c.LocalDeletionTime, ttl: c.TTL, isExpiring: c.IsExpiring()})
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// With --reinsert-overflowed-ttl, table3 comes back readable, with the
// same partitions, every overflowed expiration at 2038-01-19T03:14:06Z
// and its timestamp one microsecond later (FixNegativeLocalDeletionTime-
// Iterator), verifies, and converts to oa.
func TestReinsertOverflowedTTL(t *testing.T) {
	src := table3(t)
	before := expirings(t, src)
	out := t.TempDir()
	rep, err := Scrub(src, out, Options{ReinsertOverflowedTTL: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep.RowsFixed != 2 || rep.PartitionsKept != 2 || rep.PartitionsLost != 0 || len(rep.Outputs) != 1 || !rep.Verified {
		t.Fatalf("report: %d rows fixed (Cassandra: \"Fixed 2 rows\"), %d kept, %d lost, outputs %v, verified %v", rep.RowsFixed, rep.PartitionsKept, rep.PartitionsLost, rep.Outputs, rep.Verified)
	}
	mustVerify(t, rep.Outputs[0])
	after := expirings(t, rep.Outputs[0])
	if len(after) != len(before) || len(before) != 2 {
		t.Fatalf("%d partitions after, %d before", len(after), len(before))
	}
	cap := time.Date(2038, 1, 19, 3, 14, 6, 0, time.UTC).Unix()
	fixed := 0
	for k, bs := range before {
		as := after[k]
		if len(as) != len(bs) {
			t.Fatalf("partition %x: %d cells after, %d before", k, len(as), len(bs))
		}
		for i, b := range bs {
			a := as[i]
			if !b.isExpiring {
				if a != b {
					t.Errorf("partition %x %s changed: %+v -> %+v", k, b.what, b, a)
				}
				continue
			}
			if b.ldt >= 0 {
				t.Fatalf("partition %x %s: source expiration %d did not overflow", k, b.what, b.ldt)
			}
			fixed++
			if a.ldt != cap || a.ts != b.ts+1 || a.ttl != b.ttl {
				t.Errorf("partition %x %s: %+v -> %+v, want expiration %d, timestamp + 1, same TTL", k, b.what, b, a, cap)
			}
		}
	}
	if fixed == 0 {
		t.Fatal("nothing expiring in table3")
	}
	conv, err := convert.Convert(rep.Outputs[0], filepath.Join(t.TempDir(), "oa"), convert.Options{To: format.MustVersion("oa"), Verify: true})
	if err != nil {
		t.Fatalf("the scrubbed table does not convert to oa: %v", err)
	}
	mustVerify(t, conv.Output)
	// The source refuses to convert, which is why this option exists.
	if _, err := convert.Convert(src, filepath.Join(t.TempDir(), "refused"), convert.Options{To: format.MustVersion("oa")}); err == nil {
		t.Error("the unscrubbed table converts to oa")
	}
}

// Without the option the overflowed rows are left out and reported, as
// Cassandra's scrub leaves them out ("No valid partitions found"): here
// every row overflowed, so nothing is written.
func TestOverflowedTTLLeftOut(t *testing.T) {
	src := table3(t)
	out := t.TempDir()
	rep, err := Scrub(src, out, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.PartitionsKept != 0 || rep.PartitionsLost != 2 || len(rep.Outputs) != 0 {
		t.Fatalf("report: %d kept, %d lost, outputs %v", rep.PartitionsKept, rep.PartitionsLost, rep.Outputs)
	}
	dropped := 0
	for _, r := range rep.Rows {
		if r.Action == "dropped" {
			dropped++
		}
	}
	if dropped != 2 {
		t.Errorf("%d rows reported dropped, want 2: %+v", dropped, rep.Rows)
	}
	if !rep.Repaired() {
		t.Error("not reported as repaired")
	}
	if ents, _ := os.ReadDir(out); len(ents) != 0 {
		t.Errorf("%d entries written", len(ents))
	}
}
