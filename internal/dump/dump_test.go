package dump

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/fixtures"
	"github.com/sstabletool/sstabletool/internal/generate"
	"github.com/sstabletool/sstabletool/reader"
	"github.com/sstabletool/sstabletool/workload"
)

// The dumper is held to the reference dumper (reference_test.go, the
// straightforward implementation it replaced): the same bytes and the same
// error, for every real sstable and for generated ones of every profile,
// in every output style, alone, on two workers, and on two workers given
// segment boundaries that are not partition starts.

var pinnedNow = func() time.Time { return time.Unix(1_700_003_000, 0) }

// realTables lists every Data.db of the real fixtures, the damaged and
// unsupported ones included (their errors must match too).
func realTables(t *testing.T) []string {
	var out []string
	for _, dir := range []string{"cassandra", "realworld"} {
		err := filepath.Walk(filepath.Join(fixtures.Dir(t), dir), func(p string, info os.FileInfo, err error) error {
			if err == nil && !info.IsDir() && strings.HasSuffix(p, "-Data.db") {
				out = append(out, p)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	sort.Strings(out)
	return out
}

// allTypesProfile has a column of every type the generator writes, a
// composite partition key, two clustering columns, static columns, every
// kind of deletion and TTLs.
const allTypesProfile = `
name: alltypes
seed: 7
ops: 6000
partitions: 300
schema:
  partition_key: [{name: k1, type: text, size: "uniform(1,10)", gen: hash}, {name: k2, type: int, gen: partition}]
  clustering: [{name: c1, type: timestamp, gen: row}, {name: c2, type: text, size: "uniform(0,8)", gen: random}]
  static: [{name: s1, type: ascii, size: "5"}, {name: s2, type: "map<int,text>", elements: "uniform(0,3)"}]
  columns:
    - {name: a_bigint, type: bigint}
    - {name: a_int, type: int}
    - {name: a_boolean, type: boolean}
    - {name: a_double, type: double}
    - {name: a_float, type: float}
    - {name: a_timestamp, type: timestamp}
    - {name: a_uuid, type: uuid}
    - {name: a_timeuuid, type: timeuuid}
    - {name: a_text, type: text, size: "uniform(0,30)"}
    - {name: a_ascii, type: ascii, size: "uniform(0,30)"}
    - {name: a_blob, type: blob, size: "uniform(0,20)"}
    - {name: l_int, type: "list<int>", elements: "uniform(0,4)"}
    - {name: s_text, type: "set<text>", size: "4", elements: "uniform(0,4)"}
    - {name: m_ts_double, type: "map<timestamp,double>", elements: "uniform(0,3)"}
    - {name: m_uuid_blob, type: "map<uuid,blob>", elements: "uniform(0,3)"}
rows_per_partition: "zipf(200,1.3)"
partition_order: uniform
mix: {insert: 0.6, overwrite: 0.2, delete_partition: 0.02, delete_row: 0.06, delete_cell: 0.06, delete_range: 0.06}
ttl: {fraction: 0.3, seconds: 3600}
`

// generatedTables writes one small sstable per built-in profile, the demo
// and allTypesProfile, in several versions, one of them uncompressed.
func generatedTables(t *testing.T) []string {
	type gen struct {
		name, version string
		partitions    int64
		uncompressed  bool
	}
	gens := []gen{
		{"demo", "oa", 200, false},
		{"alltypes", "nc", 150, false},
		{"alltypes", "oa", 60, true},
		{"deletes", "nb", 300, false},
		{"wide-partitions", "nc", 8, false},
		{"time-series-ttl", "oa", 150, false},
		{"small-partitions", "nc", 2000, false},
	}
	var out []string
	for i, g := range gens {
		var p *workload.Profile
		var err error
		switch g.name {
		case "demo":
			p, err = workload.ParseProfile([]byte(generate.DemoProfile), "demo")
		case "alltypes":
			p, err = workload.ParseProfile([]byte(allTypesProfile), "alltypes")
		default:
			var ok bool
			if p, ok = workload.Builtin(g.name); !ok {
				t.Fatalf("no profile %s", g.name)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		if raceEnabled {
			// Half the size under the race detector (CI's budget): the
			// shapes, not the counts, are what these tables add.
			g.partitions = max(4, g.partitions/2)
		}
		if g.partitions > 0 {
			p.Partitions = g.partitions
			p.Ops = min(p.Ops, 40*g.partitions)
		}
		dir := filepath.Join(t.TempDir(), fmt.Sprintf("ks/%s_%d-00000000000000000000000000000000", strings.ReplaceAll(g.name, "-", "_"), i))
		res, err := generate.Generate(p, dir, generate.Options{Version: format.MustVersion(g.version), Uncompressed: g.uncompressed})
		if err != nil {
			t.Fatalf("generate %s: %v", g.name, err)
		}
		out = append(out, res.DataPath)
	}
	return out
}

// result is a dump's output and error text.
type result struct {
	out []byte
	err string
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// refDump dumps with the reference the way the dump command did: Begin,
// every partition through EachPartition, End, or a flush after an error.
func refDump(s *sstable.SSTable, o Options, skip func([]byte) bool) result {
	var buf bytes.Buffer
	d := newRefDumper(&buf, s, o)
	d.Begin()
	err := s.EachPartition(func(h *rows.PartitionHeader, dec *rows.Decoder) error {
		if skip != nil && skip(h.Key) {
			return nil
		}
		return d.Partition(h, dec)
	})
	if err != nil {
		d.Flush()
	} else {
		err = d.End()
	}
	return result{buf.Bytes(), errText(err)}
}

// fastDump dumps with All, configured by setup.
func fastDump(s *sstable.SSTable, o Options, skip func([]byte) bool, setup func(*Dumper)) result {
	var buf bytes.Buffer
	d := NewDumper(&buf, s, o)
	if setup != nil {
		setup(d)
	}
	d.Begin()
	err := d.All(skip, nil)
	if err == nil {
		err = d.End()
	}
	return result{buf.Bytes(), errText(err)}
}

// partitionDump dumps through the Partition method, as tests and -k do.
func partitionDump(s *sstable.SSTable, o Options) result {
	var buf bytes.Buffer
	d := NewDumper(&buf, s, o)
	d.Begin()
	err := s.EachPartition(d.Partition)
	if err != nil {
		d.Flush()
	} else {
		err = d.End()
	}
	return result{buf.Bytes(), errText(err)}
}

// everyNBytes cuts segments every n bytes, whatever lies there.
func everyNBytes(n int64) func(send func(sstable.Cut) bool) {
	return func(send func(sstable.Cut) bool) {
		for pos := n; pos < 1<<40; pos += n {
			if !send(sstable.Cut{Data: pos, Index: -1}) {
				return
			}
		}
	}
}

func checkSame(t *testing.T, what string, got, want result) {
	t.Helper()
	if got.err != want.err {
		t.Errorf("%s: error %q, reference %q", what, got.err, want.err)
	}
	if !bytes.Equal(got.out, want.out) {
		i := 0
		for i < len(got.out) && i < len(want.out) && got.out[i] == want.out[i] {
			i++
		}
		t.Errorf("%s: output differs from the reference at byte %d (%d vs %d bytes):\n got %q\nwant %q",
			what, i, len(got.out), len(want.out), window(got.out, i), window(want.out, i))
	}
}

func window(b []byte, i int) []byte { return b[max(0, i-80):min(len(b), i+80)] }

var styles = []struct {
	name string
	o    Options
}{
	{"pretty", Options{}},
	{"jsonl", Options{JSONLines: true}},
	{"pretty-t", Options{RawTimestamps: true}},
	{"jsonl-t", Options{JSONLines: true, RawTimestamps: true}},
	{"debug", Options{Debug: true}},
}

func TestDumpMatchesReference(t *testing.T) {
	tables := realTables(t)
	if !testing.Short() {
		tables = append(tables, generatedTables(t)...)
	}
	for _, p := range tables {
		name := strings.TrimPrefix(p, fixtures.Root()+"/")
		if strings.Contains(p, os.TempDir()) {
			name = "generated/" + filepath.Base(filepath.Dir(p))
		}
		t.Run(name, func(t *testing.T) {
			s, err := sstable.Open(p, sstable.Options{Access: reader.Mmap})
			if err != nil {
				if strings.Contains(p, "-bti-") {
					t.Skipf("not readable yet: %v", err)
				}
				t.Fatal(err)
			}
			defer s.Close()
			for i, st := range styles {
				if raceEnabled && ((i%3 != 0 && !st.o.Debug) || (i > 0 && s.Data().Length() > 512<<10)) {
					continue // pretty, jsonl-t and debug only, pretty only for the largest
				}
				o := st.o
				o.Now = pinnedNow
				want := refDump(s, o, nil)
				if len(want.out) < 10 {
					t.Fatalf("%s: reference printed only %q (%s)", st.name, want.out, want.err)
				}
				o.Workers = 1
				checkSame(t, st.name+"/serial", fastDump(s, o, nil, nil), want)
				if !raceEnabled { // the serial path again, through Partition
					checkSame(t, st.name+"/Partition", partitionDump(s, o), want)
				}
				// Segments of a few partitions each (at most about 64).
				seg := max(1, s.Data().Length()/64)
				o.Workers = 2
				checkSame(t, st.name+"/parallel", fastDump(s, o, nil, func(d *Dumper) { d.segmentSize = seg }), want)
				if raceEnabled && s.Data().Length() > 512<<10 {
					// The cuts and skips are held on every smaller table;
					// under the race detector a large one costs tens of
					// seconds more each (CI's budget).
					continue
				}
				checkSame(t, st.name+"/parallel-bad-cuts", fastDump(s, o, nil, func(d *Dumper) {
					d.segmentSize, d.cuts = seg, everyNBytes(997)
				}), want)
				// Skipping every third partition (-x).
				n := 0
				skipped := map[string]bool{}
				_ = s.ScanPartitions(sstable.ScanOptions{SkipCells: true}, func(ps *sstable.PartitionSummary) error {
					if n++; n%3 == 1 {
						skipped[string(ps.Key)] = true
					}
					return nil
				})
				skip := func(k []byte) bool { return skipped[string(k)] }
				want = refDump(s, o, skip)
				o.Workers = 1
				checkSame(t, st.name+"/serial-skip", fastDump(s, o, skip, nil), want)
				o.Workers = 2
				checkSame(t, st.name+"/parallel-skip", fastDump(s, o, skip, func(d *Dumper) { d.segmentSize = seg }), want)
			}
		})
	}
}

// TestDumpAllCutsFromIndex runs the parallel dump with its real segment
// size on a generated table big enough to be cut from Index.db, and checks
// that it cut: several segments, each starting where the last ended.
func TestDumpAllCutsFromIndex(t *testing.T) {
	if testing.Short() {
		t.Skip("generates a table")
	}
	p, ok := workload.Builtin("wide-partitions")
	if !ok {
		t.Fatal("no wide-partitions profile")
	}
	p.Partitions, p.Ops = 60, 60000
	dir := filepath.Join(t.TempDir(), "ks", "wide-00000000000000000000000000000000")
	res, err := generate.Generate(p, dir, generate.Options{Version: format.MustVersion("nc")})
	if err != nil {
		t.Fatal(err)
	}
	s, err := sstable.Open(res.DataPath, sstable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Data().Length() < 4*segmentSize {
		t.Fatalf("table of %d bytes: too small to cut", s.Data().Length())
	}
	// The segments All walks: cut where its options say (Index.db's
	// entries past every segmentSize bytes), none walked alone.
	var cuts []int64
	o := NewDumper(io.Discard, s, Options{Workers: 2}).segmentOptions(nil)
	err = sstable.Segmented(s, o, func(*sstable.Segment) {},
		func(seg sstable.Segment, _ *rows.Decoder, r *sstable.Segment) error { *r = seg; return nil },
		func(*rows.PartitionHeader, *rows.Decoder, *sstable.Segment) error { return nil },
		func(seg *sstable.Segment) error {
			if seg.Serial {
				return fmt.Errorf("segment %+v walked alone", *seg)
			}
			if seg.Start > 0 {
				cuts = append(cuts, seg.Start)
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if len(cuts) < 3 {
		t.Fatalf("%d cuts in %d bytes", len(cuts), s.Data().Length())
	}
	starts := map[int64]bool{}
	_ = s.ScanPartitions(sstable.ScanOptions{SkipCells: true}, func(ps *sstable.PartitionSummary) error {
		starts[ps.Offset] = true
		return nil
	})
	for _, c := range cuts {
		if !starts[c] {
			t.Errorf("cut at %d is not a partition start", c)
		}
	}
	for i, st := range styles {
		if raceEnabled && i > 0 {
			break
		}
		o := st.o
		o.Now = pinnedNow
		want := refDump(s, o, nil)
		o.Workers = 2
		checkSame(t, st.name, fastDump(s, o, nil, nil), want)
		if !raceEnabled {
			o.Workers = 3
			checkSame(t, st.name+"/3 workers", fastDump(s, o, nil, nil), want)
		}
	}
}

// failingWriter fails after n bytes.
type failingWriter struct{ n int }

var errFull = errors.New("disk full")

func (w *failingWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		return 0, errFull
	}
	w.n -= len(p)
	return len(p), nil
}

// TestDumpStopsOnWriteError checks that a failed write ends the dump with
// that error, alone or in parallel, without hanging.
func TestDumpStopsOnWriteError(t *testing.T) {
	p := filepath.Join(fixtures.Table(t, "nc", "legacy_nc_clust"), "nc-1-big-Data.db")
	s, err := sstable.Open(p, sstable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, workers := range []int{1, 2} {
		d := NewDumper(&failingWriter{n: 1000}, s, Options{Workers: workers})
		d.segmentSize = 1
		d.Begin()
		if err := d.All(nil, nil); !errors.Is(err, errFull) {
			t.Errorf("%d workers: All returned %v, want %v", workers, err, errFull)
		}
		if err := d.End(); !errors.Is(err, errFull) {
			t.Errorf("%d workers: End returned %v, want %v", workers, err, errFull)
		}
	}
}

// fuzzTables are the real sstables whose schemas FuzzDumpMatchesReference
// decodes arbitrary bytes with: collections, counters, clustering, UDTs,
// composite keys, statics.
var fuzzTables = []string{
	"cassandra/nc/legacy_nc_clust/nc-1-big-Data.db",
	"cassandra/nc/legacy_nc_clust_counter/nc-1-big-Data.db",
	"cassandra/oa/legacy_oa_simple/oa-1-big-Data.db",
	"cassandra/me-collections/table_with_map-901f2c70a1c711eeae8c6d2c86545d91/me-1-big-Data.db",
	"cassandra/me-collections/table_with_list-90354c80a1c711eeae8c6d2c86545d91/me-1-big-Data.db",
	"realworld/scylla/3.x/uncompressed/legacy_udt_in_collection/mc-1-big-Data.db",
	"realworld/scylla/3.x/uncompressed/compound_static_row/mc-1-big-Data.db",
	"realworld/scylla/3.x/uncompressed/read_range_tombstone_boundaries_index/mc-1-big-Data.db",
	"realworld/scylla/3.x/uncompressed/collections/mc-1-big-Data.db",
	"realworld/scylla/3.x/uncompressed/deleted_cells/mc-1-big-Data.db",
}

// FuzzDumpMatchesReference decodes arbitrary bytes as Data.db with the
// schemas of real sstables and demands the same output and errors from
// the dumper's Partition and the reference's. The seeds are the start of
// each table's real Data.db.
func FuzzDumpMatchesReference(f *testing.F) {
	root := fixtures.Root()
	if root == "" {
		f.Skip("real sstables not found")
	}
	var tables []*sstable.SSTable
	for i, rel := range fuzzTables {
		s, err := sstable.Open(filepath.Join(root, rel), sstable.Options{})
		if err != nil {
			f.Fatal(err)
		}
		f.Cleanup(func() { s.Close() })
		tables = append(tables, s)
		seed := make([]byte, min(s.Data().Length(), 4096))
		if _, err := s.Data().ReadAt(seed, 0); err != nil && err != io.EOF {
			f.Fatal(err)
		}
		f.Add(uint8(i), uint8(0), seed)
		f.Add(uint8(i), uint8(3), seed)
	}
	f.Fuzz(func(t *testing.T, which, style uint8, data []byte) {
		o := styles[int(style)%len(styles)].o
		compareOnBytes(t, tables[int(which)%len(tables)], o, data)
	})
}

// compareOnBytes decodes data as Data.db with s's schema and demands the
// same output and error from the dumper's Partition and the reference's.
// It returns the reference's error text ("EOF" at the end of data).
func compareOnBytes(t *testing.T, s *sstable.SSTable, o Options, data []byte) string {
	t.Helper()
	o.Now = pinnedNow
	dump := func(d interface {
		Partition(*rows.PartitionHeader, *rows.Decoder) error
	}) string {
		dec := rows.NewDecoder(rows.NewBytesSource(data, 0), s.Schema())
		var h rows.PartitionHeader
		for n := 0; n < 50; n++ {
			if err := dec.ReadPartitionHeader(&h); err != nil {
				return errText(err)
			}
			if err := d.Partition(&h, dec); err != nil {
				return errText(err)
			}
			if dec.InPartition() {
				if err := dec.SkipRest(); err != nil {
					return errText(err)
				}
			}
		}
		return ""
	}
	var want, got bytes.Buffer
	rd := newRefDumper(&want, s, o)
	rd.Begin()
	// After an error the command flushes; it does not close the document.
	wantErr := dump(rd)
	if wantErr == "" {
		rd.End()
	} else {
		rd.Flush()
	}
	fd := NewDumper(&got, s, o)
	fd.Begin()
	gotErr := dump(fd)
	if gotErr == "" {
		fd.End()
	} else {
		fd.Flush()
	}
	checkSame(t, "Partition", result{got.Bytes(), gotErr}, result{want.Bytes(), wantErr})
	return wantErr
}

// TestDumpMatchesReferenceOnDamagedBytes runs FuzzDumpMatchesReference's
// comparison on the start of each of its tables' Data.db damaged at
// random (bytes changed, cut short, runs repeated): the fuzz target's work
// done in every test run.
func TestDumpMatchesReferenceOnDamagedBytes(t *testing.T) {
	root := fixtures.Dir(t)
	rng := rand.New(rand.NewSource(5))
	var clean, rendering int
	n := 300
	if raceEnabled || testing.Short() {
		n = 60
	}
	for _, rel := range fuzzTables {
		s, err := sstable.Open(filepath.Join(root, rel), sstable.Options{})
		if err != nil {
			t.Fatal(err)
		}
		orig := make([]byte, min(s.Data().Length(), 4096))
		if _, err := s.Data().ReadAt(orig, 0); err != nil && err != io.EOF {
			t.Fatal(err)
		}
		for i := 0; i < n; i++ {
			data := append([]byte(nil), orig...)
			for m := rng.Intn(4); m >= 0; m-- {
				switch p := rng.Intn(len(data)); rng.Intn(4) {
				case 0:
					data[p] = byte(rng.Intn(256))
				case 1:
					data[p] ^= 1 << rng.Intn(8)
				case 2:
					data = data[:p]
				default:
					q := min(len(data), p+1+rng.Intn(32))
					data = append(data[:q:q], data[p:]...)
				}
				if len(data) == 0 {
					break
				}
			}
			switch err := compareOnBytes(t, s, styles[i%len(styles)].o, data); {
			case err == "EOF":
				clean++
			case strings.Contains(err, "unfiltered at") || strings.Contains(err, "partition key at"):
				rendering++ // a value the renderers refuse
			}
		}
		s.Close()
	}
	// The comparison must have seen both outcomes for the test to mean anything.
	if clean == 0 || rendering == 0 {
		t.Errorf("%d damaged inputs dumped cleanly, %d failed on a value: want some of each", clean, rendering)
	}
	t.Logf("%d clean, %d value errors", clean, rendering)
}
