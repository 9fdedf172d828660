package convert

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/fixtures"
	"github.com/sstabletool/sstabletool/internal/generate"
	"github.com/sstabletool/sstabletool/workload"
)

// Where a conversion's output cannot be compared by frames (its header
// reads the bodies otherwise), the verification decodes the output once:
// its comparison with the source rides on verify's walk of the output, a
// segment at a time on every core (checkFollowed). On a table of several segments the walk carries the whole
// comparison (nothing is compared again on its own), and it finds a cell
// changed in place in the output, checksums resealed so that verify
// itself passes, in any partition: the first, the last, either side of a
// segment's start. A damaged output fails verify. Where the walk is not
// cut where the rewrite recorded (here: no record), the comparison runs
// on its own and finds the same.
func TestVerificationRidesOnVerify(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2)) // verify's walk on two workers, whatever -cpu says
	// About 3 MB of Data.db: three segments of verify's walk.
	src, res, o := convertedDemo(t, 1000)
	if len(res.segments) < 2 {
		t.Fatalf("%d segment starts recorded in %d bytes: the test needs several", len(res.segments), res.DataUncompressed.After)
	}
	alone := *res
	alone.segments = nil

	check := func(what, data string, r *Result, wantAlone bool, wantDiff string) {
		t.Helper()
		rep, f, err := checkFollowed(src, data, o, r)
		if !rep.OK() {
			t.Fatalf("%s: verify found problems: %v", what, rep.Problems)
		}
		// The comparison stops at a difference: then only one found by
		// the walk says whether it rode on it.
		switch {
		case wantAlone && wantDiff == "" && !f.alone:
			t.Errorf("%s: the walk compared what it was not told where to", what)
		case !wantAlone && f.alone:
			t.Errorf("%s: compared on its own, not along verify's walk", what)
		case !wantAlone && wantDiff == "" && f.parallel < 2:
			t.Errorf("%s: %d segments compared by the walk's workers", what, f.parallel)
		}
		switch {
		case wantDiff == "" && err != nil:
			t.Errorf("%s: %v", what, err)
		case wantDiff != "" && (err == nil || !strings.Contains(err.Error(), wantDiff)):
			t.Errorf("%s: got %v, want a difference (%q)", what, err, wantDiff)
		}
	}
	check("the output", res.Output, res, false, "")
	check("the output, compared on its own", res.Output, &alone, true, "")

	mid := res.segments[len(res.segments)/2]
	for _, k := range []int64{0, res.segments[0].n - 1, res.segments[0].n, mid.n, res.Partitions - 1} {
		changed := changeCellInPlace(t, res.Output, k)
		check(fmt.Sprintf("a cell changed in partition %d", k), changed, res, false, "differs")
		check(fmt.Sprintf("a cell changed in partition %d, compared on its own", k), changed, &alone, true, "differs")
	}

	// A damaged output (a byte of Data.db changed, CRC.db not resealed)
	// fails verify, and with it the conversion's verdict.
	dir := fixtures.CopyTable(t, filepath.Dir(res.Output))
	damaged := filepath.Join(dir, filepath.Base(res.Output))
	b, err := os.ReadFile(damaged)
	if err != nil {
		t.Fatal(err)
	}
	b[mid.b+3] ^= 0x20
	if err := os.WriteFile(damaged, b, 0o644); err != nil {
		t.Fatal(err)
	}
	var r Result
	if err := verifyOutput(src, damaged, o, &r); err == nil || !strings.Contains(err.Error(), "problems") || len(r.Problems) == 0 {
		t.Errorf("a damaged output: got %v, problems %v", err, r.Problems)
	}
}

// changeCellInPlace copies the (uncompressed) sstable of dataPath and
// changes one byte of a cell value of partition k in the copy, CRC.db and
// Digest.crc32 resealed: the same layout, different content.
func changeCellInPlace(t *testing.T, dataPath string, k int64) string {
	t.Helper()
	dir := fixtures.CopyTable(t, filepath.Dir(dataPath))
	path := filepath.Join(dir, filepath.Base(dataPath))
	s, err := sstable.Open(path, sstable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	at := int64(-1)
	var value []byte
	d := s.Decoder(0)
	var h rows.PartitionHeader
	for n := int64(0); at < 0 && d.ReadPartitionHeader(&h) == nil; n++ {
		for {
			u, err := d.Next(false)
			if err != nil {
				t.Fatal(err)
			}
			if u == nil {
				break
			}
			if n != k || at >= 0 {
				continue
			}
			for _, c := range u.Cells {
				if len(c.Value) >= 4 {
					at, value = u.Offset, bytes.Clone(c.Value)
					break
				}
			}
		}
	}
	s.Close()
	if at < 0 {
		t.Fatalf("partition %d has no cell value of 4 bytes or more", k)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(b[at:], value)
	if i < 0 {
		t.Fatalf("partition %d: value %x not found after byte %d", k, value, at)
	}
	b[at+int64(i)+int64(len(value))-1] ^= 1
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	fixtures.ResealCRC(t, path)
	fixtures.RewriteDigest(t, path)
	return path
}

// Where the output's rows read as the source's (a Cassandra-written nc
// converted to oa: the same serialization header), convert's verification
// compares the digest of the source's content, taken as the statistics
// collection decoded it, with the digest verify's walk takes of the
// output: it finds a cell changed in place (checksums resealed, so verify
// passes) in the first, the last and the partitions around the halves'
// cut, described frame by frame and cell by cell, and a damaged output
// fails verify. A header whose minima differ from the source's is
// compared cell by cell instead.
func TestVerificationByFrames(t *testing.T) {
	src, res, o := convertedDemo(t, 400)
	if !bodiesReadAlike(src, res) {
		t.Fatal("an nc table converted to oa: the header does not read the bodies alike")
	}
	other := *res
	st := *res.stats
	h := *st.Header
	h.MinTimestamp++
	st.Header, other.stats = &h, &st
	if bodiesReadAlike(src, &other) {
		t.Error("a header with another minimum timestamp reads the bodies alike")
	}

	rep, f, err := checkConverted(src, res.Output, o, res)
	if !rep.OK() || err != nil || f != nil {
		t.Fatalf("the output: problems %v, comparison %v, follower %v (want none: compared by frames)", rep.Problems, err, f)
	}
	if res.content == nil || res.content.Partitions() != res.Partitions {
		t.Fatalf("the source's digest: %v, want one of %d partitions", res.content, res.Partitions)
	}
	cut := middle(res.segments)
	for _, k := range []int64{0, cut.n - 1, cut.n, res.Partitions - 1} {
		if k < 0 {
			continue
		}
		changed := changeCellInPlace(t, res.Output, k)
		rep, _, err := checkConverted(src, changed, o, res)
		if !rep.OK() {
			t.Fatalf("a cell changed in partition %d: verify found problems: %v", k, rep.Problems)
		}
		if err == nil || !strings.Contains(err.Error(), "differs") {
			t.Errorf("a cell changed in partition %d: got %v, want a difference", k, err)
		}
	}
	dir := fixtures.CopyTable(t, filepath.Dir(res.Output))
	damaged := filepath.Join(dir, filepath.Base(res.Output))
	b, err := os.ReadFile(damaged)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x20
	if err := os.WriteFile(damaged, b, 0o644); err != nil {
		t.Fatal(err)
	}
	r := *res
	if err := verifyOutput(src, damaged, o, &r); err == nil || !strings.Contains(err.Error(), "problems") {
		t.Errorf("a damaged output: got %v", err)
	}
}

// convertedDemo generates an uncompressed nc sstable of the demo profile
// with the given number of partitions, converts it to oa with
// verification, and returns the source opened (closed with the test), the
// conversion's result and its options.
func convertedDemo(t *testing.T, partitions int64) (*sstable.SSTable, *Result, Options) {
	t.Helper()
	p, err := workload.ParseProfile([]byte(generate.DemoProfile), "demo")
	if err != nil {
		t.Fatal(err)
	}
	p.Partitions = partitions
	tmp := t.TempDir()
	gen, err := generate.Generate(p, filepath.Join(tmp, "gen"), generate.Options{Version: format.MustVersion("nc"), Uncompressed: true})
	if err != nil {
		t.Fatal(err)
	}
	o := Options{To: format.MustVersion("oa"), Verify: true}
	res, err := Convert(gen.DataPath, filepath.Join(tmp, "oa"), o)
	if err != nil {
		t.Fatal(err)
	}
	src, err := sstable.Open(gen.DataPath, sstable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	return src, res, o
}
