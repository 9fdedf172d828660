package verify

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/fixtures"
)

// recorder is a Follower that writes down what it is given.
type recorder struct{ taken []string }

type segmentLines struct{ lines []string }

func (f *recorder) Segment(sstable.Segment) SegmentReader { return &segmentLines{} }
func (f *recorder) Take(r SegmentReader)                  { f.taken = append(f.taken, r.(*segmentLines).lines...) }

func (s *segmentLines) Partition(h *rows.PartitionHeader) {
	s.lines = append(s.lines, fmt.Sprintf("partition %d %x %+v", h.Offset, h.Key, h.Deletion))
}
func (s *segmentLines) Unfiltered(u *rows.Unfiltered) {
	s.lines = append(s.lines, fmt.Sprintf("  %d kind %d, %d cells", u.Offset, u.Kind, len(u.Cells)))
}
func (s *segmentLines) End(pos int64) { s.lines = append(s.lines, fmt.Sprintf("end %d", pos)) }

// oneDecoder is what one decoder reads of path, as the recorder writes it
// down, up to its first error (returned).
func oneDecoder(t *testing.T, path string) ([]string, error) {
	t.Helper()
	s, err := sstable.Open(path, sstable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var r segmentLines
	d := s.Decoder(0)
	var h rows.PartitionHeader
	for {
		if err := d.ReadPartitionHeader(&h); err != nil {
			if err == io.EOF {
				err = nil
			}
			return r.lines, err
		}
		r.Partition(&h)
		for {
			u, err := d.Next(false)
			if err != nil {
				return r.lines, err
			}
			if u == nil {
				break
			}
			r.Unfiltered(u)
		}
		r.End(d.Pos())
	}
}

// followed verifies path with a recorder following, the walk cut and
// spread as o says.
func followed(path string, o sstable.SegmentOptions) (*Report, []string) {
	saved := segmentOptions
	defer func() { segmentOptions = saved }()
	segmentOptions = o
	f := &recorder{}
	return SSTableFollowed(path, sstable.Options{}, f), f.taken
}

// TestFollowerSeesOneDecoder: a Follower is given every partition and
// unfiltered of Data.db in order, as one decoder reads them, whether the
// walk runs on one worker or several, cut at Index.db's entries or at
// positions that are no partition start, and the report is the same
// whatever the workers; on whole sstables it is
// SSTableChecksumsAndStructure's. On damaged Data.db the follower is given
// what one decoder reads before the damage, and the report has problems
// when one decoder fails or SSTableChecksumsAndStructure finds any (the
// rows decoded for the follower are checked as decoded).
func TestFollowerSeesOneDecoder(t *testing.T) {
	paths := []string{demoTable(t, 80, false), demoTable(t, 80, true)}
	if fixtures.Root() != "" {
		paths = append(paths, fixtures.DataFiles(t)...)
	}
	whole := len(paths)
	// Damaged copies of the uncompressed table (CRC.db resealed, so the
	// damage reaches the decoder).
	clean, err := os.ReadFile(paths[1])
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < 12; i++ {
		b := append([]byte(nil), clean...)
		for j := range 4 {
			b[len(b)*i/12+j] ^= 0x5A
		}
		cp := fixtures.CopyTable(t, filepath.Dir(paths[1]))
		path := filepath.Join(cp, filepath.Base(paths[1]))
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		fixtures.ResealCRC(t, path)
		fixtures.RewriteDigest(t, path)
		paths = append(paths, path)
	}
	failed := 0
	for i, p := range paths {
		want, decErr := oneDecoder(t, p)
		skim := reportWith(t, p, sstable.SegmentOptions{Workers: 1}, true)
		serial, _ := followed(p, sstable.SegmentOptions{Workers: 1})
		if i < whole {
			sameReport(t, p+": followed", skim, serial)
		} else if serial.OK() != (decErr == nil && skim.OK()) {
			t.Errorf("%s: followed, problems %v; one decoder's error %v, without a follower %v", p, serial.Problems, decErr, skim.Problems)
		}
		if !serial.OK() {
			failed++
		}
		for _, c := range append([]struct {
			name string
			o    sstable.SegmentOptions
		}{{"serial", sstable.SegmentOptions{Workers: 1}}}, walkCases...) {
			got, taken := followed(p, c.o)
			sameReport(t, p+" "+c.name+": followed", serial, got)
			if got.OK() {
				if d := cmp.Diff(want, taken); d != "" {
					t.Errorf("%s %s: the follower was given (-one decoder +given):\n%s", p, c.name, d)
				}
			} else if len(taken) > len(want) || !cmp.Equal(want[:len(taken)], taken) {
				t.Errorf("%s %s: the follower was given what one decoder does not read:\n%s", p, c.name, strings.Join(taken, "\n"))
			}
		}
	}
	if failed == 0 {
		t.Error("no damage found: the test tests too little")
	}
}
