package scrub

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/generate"
	"github.com/sstabletool/sstabletool/verify"
	"github.com/sstabletool/sstabletool/workload"
)

// generated writes a table of the named built-in profile with the
// project's writer.
func generated(t testing.TB, profile string, partitions int64, v string, o generate.Options) string {
	t.Helper()
	return generatedIn(t, filepath.Join(t.TempDir(), "gen"), profile, partitions, v, o)
}

func generatedIn(t testing.TB, dir, profile string, partitions int64, v string, o generate.Options) string {
	t.Helper()
	p, ok := workload.Builtin(profile)
	if profile == "demo" {
		var err error
		p, err = workload.ParseProfile([]byte(generate.DemoProfile), "demo")
		ok = err == nil
	}
	if !ok {
		t.Fatalf("no profile %s", profile)
	}
	p.Partitions = partitions
	if v == "da" {
		da, err := format.ParseFormatVersion(format.BTI, "da")
		if err != nil {
			t.Fatal(err)
		}
		o.Version = da
	} else {
		o.Version = format.MustVersion(v)
	}
	res, err := generate.Generate(p, dir, o)
	if err != nil {
		t.Fatal(err)
	}
	return res.DataPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if len(fuzzBases.paths) > 0 {
		os.RemoveAll(filepath.Dir(filepath.Dir(fuzzBases.paths[0])))
	}
	os.Exit(code)
}

// partitionText renders one partition's content (not its positions) for
// comparisons: the key, the deletion, every unfiltered's clustering,
// liveness, deletions and cells.
type partitionText struct {
	key   string
	start int64
	end   int64
	text  string
}

// contents decodes every partition of the sstable at path.
func contents(t testing.TB, path string) []partitionText {
	t.Helper()
	s, err := sstable.Open(path, sstable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var out []partitionText
	err = s.EachPartition(func(h *rows.PartitionHeader, dec *rows.Decoder) error {
		var b strings.Builder
		fmt.Fprintf(&b, "del=%+v\n", h.Deletion)
		for {
			u, err := dec.Next(false)
			if err != nil {
				return err
			}
			if u == nil {
				break
			}
			if u.Kind == rows.KindStaticRow && u.IsEmpty() {
				continue
			}
			fmt.Fprintf(&b, "%v %x %v %x lv=%+v del=%+v sh=%v end=%+v start=%+v cd=%+v\n", u.Kind, u.Clustering, u.Bound.Kind, u.Bound.Values,
				u.Liveness, u.Deletion, u.Shadowable, u.EndDeletion, u.StartDeletion, u.ComplexDeletions)
			for _, c := range u.Cells {
				fmt.Fprintf(&b, "  c%d f%x ts=%d ldt=%d ttl=%d p=%x v=%x\n", c.Column, c.Flags&(rows.CellFlagDeleted|rows.CellFlagExpiring),
					c.Timestamp, c.LocalDeletionTime, c.TTL, c.Path, c.Value)
			}
		}
		out = append(out, partitionText{key: fmt.Sprintf("%x", h.Key), start: h.Offset, end: dec.Pos(), text: b.String()})
		return nil
	})
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return out
}

func mustVerify(t testing.TB, path string) {
	t.Helper()
	if r := verify.SSTable(path, sstable.Options{}, nil); !r.OK() {
		t.Fatalf("%s does not verify: %v", path, r.Problems)
	}
}

func readAll(t testing.TB, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Type().IsRegular() {
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			out[e.Name()] = b
		}
	}
	return out
}

// fastTemp is a temporary directory in memory where there is one
// (/dev/shm): the crash tests' fsyncs then cost nothing.
func fastTemp(t testing.TB) string {
	t.Helper()
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		if dir, err := os.MkdirTemp("/dev/shm", "sstabletool-scrub-"); err == nil {
			t.Cleanup(func() { os.RemoveAll(dir) })
			return dir
		}
	}
	return t.TempDir()
}
