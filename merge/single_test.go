package merge_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/dump"
	"github.com/sstabletool/sstabletool/internal/fixtures"
	"github.com/sstabletool/sstabletool/merge"
)

// A table of one sstable merges to the sstable itself (compaction passes
// a partition of one source through as it is): on every real sstable
// (Cassandra's and the realworld corpus, ScyllaDB's included), dump
// --merge as of a time before anything expired prints what dump prints,
// byte for byte. Sstables that dump refuses (damaged on purpose) are left
// out.
func TestOneSSTableMergesToItself(t *testing.T) {
	var paths []string
	for _, sub := range []string{"cassandra", "realworld"} {
		filepath.Walk(filepath.Join(fixtures.Dir(t), sub), func(p string, info os.FileInfo, err error) error {
			if err == nil && !info.IsDir() && strings.HasSuffix(p, "-Data.db") {
				paths = append(paths, p)
			}
			return nil
		})
	}
	opts := dump.Options{RawTimestamps: true, Workers: 1, Now: func() time.Time { return time.Unix(1, 0) }}
	compared := 0
	for _, p := range paths {
		s, err := sstable.Open(p, sstable.Options{})
		if err != nil {
			continue
		}
		var want bytes.Buffer
		d := dump.NewDumper(&want, s, opts)
		d.Begin()
		err = d.All(nil, nil)
		d.End()
		if err != nil {
			s.Close()
			continue
		}
		tbl, err := merge.New([]*sstable.SSTable{s})
		if err != nil {
			t.Errorf("%s: %v", p, err)
			s.Close()
			continue
		}
		var got bytes.Buffer
		md := dump.NewTableDumper(&got, tbl, opts)
		md.Begin()
		sc, err := tbl.Scan(merge.Options{Now: 1})
		if err != nil {
			t.Fatal(err)
		}
		for {
			part, err := sc.Next()
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			if part == nil {
				break
			}
			if err := md.PartitionFrom(&part.Header, partRows{part}); err != nil {
				t.Fatalf("%s: %v", p, err)
			}
		}
		md.End()
		if strings.Contains(want.String(), `"expired" : true`) {
			// Expired before 1970: local expiration times that overflowed
			// to negative values (CASSANDRA-14092). Compaction writes such
			// cells as tombstones; Cassandra lost this data the same way.
			// (An expired row liveness stays as it is.)
			for _, line := range strings.Split(got.String(), "\n") {
				if strings.Contains(line, `"name" :`) && strings.Contains(line, `"expired" : true`) {
					t.Errorf("%s: a cell expired long ago is not written as a tombstone: %s", p, line)
				}
			}
			if !strings.Contains(got.String(), `"deletion_info" : { "local_delete_time" : "-`) {
				t.Errorf("%s: no cell written as a tombstone of its (negative) write time:\n%s", p, got.String())
			}
			compared++
			s.Close()
			continue
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("%s: dump --merge of the sstable alone differs from its dump:\n%s", p, firstDiff(want.String(), got.String()))
		}
		compared++
		s.Close()
	}
	if compared < 20 {
		t.Fatalf("only %d sstables compared", compared)
	}
	t.Logf("%d sstables", compared)
}

func firstDiff(a, b string) string {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(la) && i < len(lb); i++ {
		if la[i] != lb[i] {
			return fmt.Sprintf("line %d:\n- %s\n+ %s", i+1, la[i], lb[i])
		}
	}
	return "lengths differ"
}
