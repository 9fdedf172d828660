package sstable

import (
	"encoding/binary"
	"math/rand"
	"os"
	"strings"
	"testing"

	"github.com/sstabletool/sstabletool/format/rows"
)

// BenchmarkLookupTrieVsIndex looks up the same random keys in the same
// data stored twice: as big format (Summary.db binary search, then at most
// one summary interval of Index.db entries) and as BTI (one walk down
// Partitions.db's trie, then the key confirmed in Data.db). Each lookup
// also reads the partition's header, as `dump -k` does. "absent" looks up
// keys the table does not hold (present keys with a byte appended).
//
// It runs on SSTABLE_BENCH_LOOKUP=<oa Data.db>,<da Data.db>, e.g.
//
//	sstabletool generate --profile small-partitions --partitions 1000000 --format oa --out /tmp/lk/oa
//	sstabletool convert --to da --out /tmp/lk/da /tmp/lk/oa
//	SSTABLE_BENCH_LOOKUP=/tmp/lk/oa/oa-1-big-Data.db,/tmp/lk/da/da-1-bti-Data.db \
//	  go test ./format/sstable -run '^$' -bench LookupTrieVsIndex -cpu 1
//
// and skips without it.
func BenchmarkLookupTrieVsIndex(b *testing.B) {
	env := os.Getenv("SSTABLE_BENCH_LOOKUP")
	if env == "" {
		b.Skip("set SSTABLE_BENCH_LOOKUP=<big Data.db>,<da Data.db> (the same data in both formats)")
	}
	paths := strings.Split(env, ",")
	if len(paths) != 2 {
		b.Fatalf("SSTABLE_BENCH_LOOKUP: want two Data.db paths, got %q", env)
	}
	keys := benchKeys(b, paths[0])
	if n := benchKeys(b, paths[1]); len(n) != len(keys) {
		b.Fatalf("%s holds %d partitions, %s %d: not the same data", paths[0], len(keys), paths[1], len(n))
	}
	absent := make([][]byte, len(keys))
	for i, k := range keys {
		absent[i] = binary.BigEndian.AppendUint32(append([]byte(nil), k...), 0xFFFFFFFF)
	}
	for _, p := range paths {
		for _, a := range accesses {
			s, err := Open(p, Options{Access: a})
			if err != nil {
				b.Fatal(err)
			}
			name := s.Version().Name + "/" + a.String()
			b.Run(name+"/present", func(b *testing.B) {
				rng := rand.New(rand.NewSource(1))
				var h rows.PartitionHeader
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					k := keys[rng.Intn(len(keys))]
					e, ok, err := s.Find(k)
					if err != nil || !ok {
						b.Fatalf("key %x: ok=%v err=%v", k, ok, err)
					}
					if _, err := s.PartitionAt(e.Position, &h); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "lookups/s")
			})
			b.Run(name+"/absent", func(b *testing.B) {
				rng := rand.New(rand.NewSource(2))
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					k := absent[rng.Intn(len(absent))]
					if _, ok, err := s.Find(k); err != nil || ok {
						b.Fatalf("absent key %x: ok=%v err=%v", k, ok, err)
					}
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "lookups/s")
			})
			s.Close()
		}
	}
}

func benchKeys(b *testing.B, p string) [][]byte {
	s, err := Open(p, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	var keys [][]byte
	if err := s.ScanPartitions(ScanOptions{SkipCells: true}, func(ps *PartitionSummary) error {
		keys = append(keys, append([]byte(nil), ps.Key...))
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	if len(keys) == 0 {
		b.Fatalf("%s holds no partition", p)
	}
	return keys
}
