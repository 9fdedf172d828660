package split

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/sstabletool/sstabletool/convert"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/format/txnlog"
	"github.com/sstabletool/sstabletool/internal/testindexes"
)

// indexedNode is newNode with a complete SAI build of an index val_sai
// beside both sstables (internal/testindexes).
func indexedNode(t *testing.T, partitions int64) *node {
	t.Helper()
	n := newNode(t, partitions)
	for _, p := range []string{n.big, n.small} {
		s, err := sstable.Open(p, sstable.Options{})
		if err != nil {
			t.Fatal(err)
		}
		wide := len(s.ClusteringTypes()) > 0
		s.Close()
		if _, err := testindexes.SAI(p, wide, "val_sai"); err != nil {
			t.Fatal(err)
		}
	}
	return n
}

// listing is the names in dir.
func listing(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// TestIndexNotesBeforeWriting: a split or filter in place says what
// becomes of each index before any file of the rewrite exists, counting
// only the sstables it will replace (the small sstable, under the size or
// holding no key the filter drops, keeps its index files), and after the
// run how many sstables it wrote in their place.
func TestIndexNotesBeforeWriting(t *testing.T) {
	for _, tc := range []struct {
		name  string
		o     func(n *node) Options
		words convert.NoteWords
		want  []string // in the one note heard
	}{
		{"split", func(n *node) Options { return Options{MaxSize: 8 << 10} },
			convert.NoteWords{What: "the split", Verb: "splits"},
			[]string{"index ks.events.val_sai (SAI) covers 2 sstables; after the split Cassandra rebuilds it at startup for the sstables written in place of the 1 sstable it splits (the other keeps its files; "}},
		{"filter", func(n *node) Options {
			keys, _, _ := keysOf(t, n.big)
			return Options{Filter: dropKeys(keys[3])}
		}, convert.NoteWords{What: "the filter", Verb: "filters", AtMost: true},
			[]string{"in place of the 1 sstable it filters (the other keeps its files; at most "}},
		{"nothing", func(n *node) Options { return Options{MaxSize: 1 << 30} },
			convert.NoteWords{What: "the split", Verb: "splits"},
			[]string{"covers 2 sstables; the split rewrites none of them, so their index files stay and the index stays valid"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := indexedNode(t, 40)
			before := listing(t, n.table)
			var heard []string
			o := InPlaceOptions{Options: tc.o(n), Op: txnlog.OpUnknown, Force: true, Words: tc.words,
				Notes: func(line string) {
					heard = append(heard, line)
					if now := listing(t, n.table); !slices.Equal(now, before) {
						t.Errorf("when the index was named, the table directory held %v, before the run %v", now, before)
					}
				}}
			rep, err := InPlace([]string{n.data}, o)
			if err != nil || len(rep.Failed) != 0 {
				t.Fatalf("%v %+v", err, rep.Failed)
			}
			if len(heard) != 1 || len(rep.Indexes) != 1 {
				t.Fatalf("heard %q; notes %+v", heard, rep.Indexes)
			}
			for _, w := range tc.want {
				if !strings.Contains(heard[0], w) {
					t.Errorf("the note %q does not say %q", heard[0], w)
				}
			}
			written, rewritten := 0, 0
			for _, r := range rep.SSTables {
				if !r.Unchanged {
					rewritten++
					written += len(r.Outputs)
				}
			}
			d := rep.Indexes[0].Done
			if d == nil || d.Rewritten != rewritten || d.Written != written {
				t.Fatalf("done %+v; the run rewrote %d sstables into %d", d, rewritten, written)
			}
			if tc.name != "nothing" && (rewritten != 1 || written < 1) {
				t.Fatalf("the run rewrote %d sstables into %d", rewritten, written)
			}
			if _, err := os.Stat(strings.Replace(n.small, "Data.db", "SAI+aa+val_sai+Meta.db", 1)); err != nil {
				t.Fatalf("the sstable left as it was lost its index files: %v", err)
			}
		})
	}
}
