package verify

import (
	"errors"
	"io"
	"path/filepath"
	"testing"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/fixtures"
	"github.com/sstabletool/sstabletool/internal/format/index"
	"github.com/sstabletool/sstabletool/internal/generate"
	"github.com/sstabletool/sstabletool/workload"
)

// framesDigest is the digest of path as one decoder reads its frames
// (NextFrame and FrameBody, no cell decoded), and the number of
// partitions with a promoted index (where the walk decodes the rows).
func framesDigest(t *testing.T, path string) (d rows.Digest, indexed int, err error) {
	t.Helper()
	s, err := sstable.Open(path, sstable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Index() != nil {
		scan := index.NewScanner(s.Index(), s.IndexCodec(), 0, true)
		for scan.Next() {
			if scan.Entry().Indexed() {
				indexed++
			}
		}
	}
	dec := s.Decoder(0)
	var h rows.PartitionHeader
	for {
		if err := dec.ReadPartitionHeader(&h); err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			return d, indexed, err
		}
		d.Partition(h.Key, h.Deletion)
		for {
			f, prefix, err := dec.NextFrame()
			if err != nil {
				return d, indexed, err
			}
			if f == nil {
				break
			}
			d.Frame(prefix, f.BodyLen())
			if err := dec.FrameBody(d.Body); err != nil {
				return d, indexed, err
			}
		}
		d.End()
	}
}

// TestWrittenDigest: the digest SSTableWritten takes of Data.db is the
// one a single decoder takes of its frames, whether the walk runs on one
// worker or several, cut at Index.db's entries or elsewhere, and with
// partitions whose promoted index makes the walk decode their rows; it is
// the digest the statistics collection takes of the same sstable
// (CollectStats, the source's side of a conversion); and the report is
// SSTableChecksumsAndStructure's.
func TestWrittenDigest(t *testing.T) {
	wide, ok := workload.Builtin("wide-partitions")
	if !ok {
		t.Fatal("no wide-partitions profile")
	}
	wide.Partitions = 6
	gen, err := generate.Generate(wide, filepath.Join(t.TempDir(), "wide"), generate.Options{Version: format.MustVersion("nc")})
	if err != nil {
		t.Fatal(err)
	}
	paths := []string{demoTable(t, 80, false), demoTable(t, 80, true), gen.DataPath}
	if fixtures.Root() != "" {
		paths = append(paths, fixtures.DataFiles(t)...)
	}
	indexedTables := 0
	for _, p := range paths {
		want, indexed, err := framesDigest(t, p)
		plain := reportWith(t, p, sstable.SegmentOptions{Workers: 1}, true)
		if err != nil || !plain.OK() {
			continue // damaged on purpose (some fixtures are): no digest to hold
		}
		if indexed > 0 {
			indexedTables++
		}
		if want.Partitions() != plain.Partitions {
			t.Fatalf("%s: %d partitions in the digest, %d in the report", p, want.Partitions(), plain.Partitions)
		}
		s, err := sstable.Open(p, sstable.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var collected rows.Digest
		_, err = s.CollectStats(sstable.SegmentOptions{Workers: 2, Size: 1}, nil, &collected)
		s.Close()
		if err != nil {
			t.Fatal(err)
		}
		if !collected.Same(&want) {
			t.Errorf("%s: the statistics collection's digest is not the frames' (%d and %d partitions)", p, collected.Partitions(), want.Partitions())
		}
		for _, c := range append([]struct {
			name string
			o    sstable.SegmentOptions
		}{{"serial", sstable.SegmentOptions{Workers: 1}}}, walkCases...) {
			var got rows.Digest
			saved := segmentOptions
			segmentOptions = c.o
			r := SSTableWritten(p, sstable.Options{}, Written{Content: &got})
			segmentOptions = saved
			sameReport(t, p+" "+c.name+": with a digest", plain, r)
			if !got.Same(&want) {
				t.Errorf("%s %s: the walk's digest is not one decoder's (%d and %d partitions)", p, c.name, got.Partitions(), want.Partitions())
			}
		}
	}
	if indexedTables == 0 {
		t.Error("no table with a promoted index: the rows the walk decodes went undigested")
	}
}
