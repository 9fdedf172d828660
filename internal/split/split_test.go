package split

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/dump"
	"github.com/sstabletool/sstabletool/internal/fixtures"
	"github.com/sstabletool/sstabletool/verify"
)

// positions are the Data.db offsets sstabledump prints: an output's
// partitions start elsewhere than the source's.
var positions = regexp.MustCompile(`"position":[0-9]+,?`)

// partitionLines dumps an sstable as sstabledump's JSON lines (one line a
// partition, raw timestamps, positions left out): the independent view
// the tests compare sources and outputs in.
func partitionLines(t testing.TB, path string) []string {
	t.Helper()
	s, err := sstable.Open(path, sstable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var buf bytes.Buffer
	d := dump.NewDumper(&buf, s, dump.Options{JSONLines: true, RawTimestamps: true, Workers: 1,
		Now: func() time.Time { return time.Unix(1700000000, 0) }})
	if err := d.All(nil, nil); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if l != "" {
			out = append(out, positions.ReplaceAllString(l, ""))
		}
	}
	return out
}

// outputLines is the partition lines of the outputs one after the other.
func outputLines(t testing.TB, res *Result) []string {
	var out []string
	for _, o := range res.Outputs {
		out = append(out, partitionLines(t, o.Data)...)
	}
	return out
}

func mustVerify(t testing.TB, path string) {
	t.Helper()
	if r := verify.SSTable(path, sstable.Options{}, nil); !r.OK() {
		t.Fatalf("%s does not verify: %v", path, r.Problems)
	}
}

// TestSplitFixtures splits every real sstable into pieces of about a
// third of its Data.db: every output holds whole partitions and fits the
// size (or holds one partition), the outputs verify, keep the source's
// version, and hold exactly the source's partitions in its order.
func TestSplitFixtures(t *testing.T) {
	for _, src := range fixtures.DataFiles(t) {
		name := filepath.Base(filepath.Dir(src))
		t.Run(name, func(t *testing.T) {
			fi, err := os.Stat(src)
			if err != nil {
				t.Fatal(err)
			}
			size := max(fi.Size()/3, 1)
			out := filepath.Join(t.TempDir(), "out")
			res, err := Write(src, out, Options{MaxSize: size, ResetLevel: true})
			if err != nil {
				t.Fatal(err)
			}
			if res.Unchanged {
				if !strings.Contains(res.Why, "single partition") {
					t.Fatalf("unchanged: %s", res.Why)
				}
				return
			}
			if !res.Verified || len(res.Outputs) < 2 {
				t.Fatalf("verified %v, %d outputs", res.Verified, len(res.Outputs))
			}
			d, _, _ := format.ParseDescriptor(src)
			var parts int64
			for _, o := range res.Outputs {
				od, _, err := format.ParseDescriptor(o.Data)
				if err != nil || od.Version.Name != d.Version.Name || od.Version.Format != d.Version.Format {
					t.Fatalf("%s: not in the source's version %s", o.Data, d.Version.Name)
				}
				fi, err := os.Stat(o.Data)
				if err != nil {
					t.Fatal(err)
				}
				if fi.Size() != o.DataSize || o.DataSize > size && o.Partitions > 1 {
					t.Fatalf("%s: Data.db %d bytes (reported %d) for %d partitions, size %d", o.Data, fi.Size(), o.DataSize, o.Partitions, size)
				}
				parts += o.Partitions
				mustVerify(t, o.Data)
			}
			want := partitionLines(t, src)
			got := outputLines(t, res)
			if strings.Join(got, "\n") != strings.Join(want, "\n") || parts != int64(len(want)) {
				t.Fatalf("the outputs hold %d partitions (%d counted), the source %d, or they differ", len(got), parts, len(want))
			}
		})
	}
}
