package merge_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/generate"
	"github.com/sstabletool/sstabletool/merge"
	"github.com/sstabletool/sstabletool/reader"
	"github.com/sstabletool/sstabletool/workload"
)

// FuzzMerge merges a generated sstable with a second one whose Data.db is
// the fuzzer's (uncompressed, without CRC.db, so that every byte reaches
// the decoder): scans, lookups and explanations must end in partitions or
// an error, never a panic or a hang.
func FuzzMerge(f *testing.F) {
	p, err := workload.ParseProfile([]byte(generate.HistoryProfile), "fuzz")
	if err != nil {
		f.Fatal(err)
	}
	p.Partitions = 6
	dir := filepath.Join(f.TempDir(), "ks", "t-0123456789abcdef0123456789abcdef")
	res, err := generate.GenerateHistory(p, dir, generate.HistoryOptions{Options: generate.Options{Uncompressed: true, Seed: 3}, SSTables: 2})
	if err != nil {
		f.Fatal(err)
	}
	for _, c := range []string{"CRC.db", "Digest.crc32"} {
		if err := os.Remove(filepath.Join(dir, "oa-2-big-"+c)); err != nil {
			f.Fatal(err)
		}
	}
	data, err := os.ReadFile(res.DataPaths[1])
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add(data[:len(data)/2])
	f.Fuzz(func(t *testing.T, data []byte) {
		// One directory per fuzzing process, its second Data.db rewritten
		// for each input.
		if err := os.WriteFile(res.DataPaths[1], data, 0o644); err != nil {
			t.Fatal(err)
		}
		tbl, err := merge.Open(res.DataPaths, sstable.Options{Access: reader.Buffered})
		if err != nil {
			return
		}
		defer tbl.Close()
		o := merge.Options{Now: res.Now, Purge: true, GCGraceSeconds: 86400}
		sc, err := tbl.Scan(o)
		if err != nil {
			return
		}
		var keys [][]byte
		for {
			part, err := sc.Next()
			if err != nil || part == nil {
				break
			}
			keys = append(keys, append([]byte(nil), part.Header.Key...))
			for {
				u, err := part.Next()
				if err != nil || u == nil {
					break
				}
			}
		}
		for _, k := range keys {
			if _, err := tbl.Explain(k, o); err != nil {
				break
			}
		}
	})
}
