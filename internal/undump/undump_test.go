package undump

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/dump"
	"github.com/sstabletool/sstabletool/internal/fixtures"
	"github.com/sstabletool/sstabletool/internal/inspect"
	"github.com/sstabletool/sstabletool/internal/writer"
	"github.com/sstabletool/sstabletool/verify"
)

var pinnedNow = func() time.Time { return time.Unix(1_700_003_000, 0) }

// dumpOf is `dump -t` (or -l) of an sstable, with a fixed now.
func dumpOf(t testing.TB, path string, lines bool) []byte {
	t.Helper()
	s, err := sstable.Open(path, sstable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var buf bytes.Buffer
	d := dump.NewDumper(&buf, s, dump.Options{RawTimestamps: true, JSONLines: lines, Now: pinnedNow, Workers: 1})
	d.Begin()
	if err := d.All(nil, nil); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if err := d.End(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// dumpable lists the real sstables dump reads whole (the damaged ones
// excepted), fixtures then realworld; it skips without testdata.
func dumpable(t testing.TB) []string {
	var out []string
	for _, dir := range []string{"cassandra", "realworld"} {
		root := filepath.Join(fixtures.Dir(t), dir)
		paths, err := format.FindSSTables([]string{root}, true)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range paths {
			s, err := sstable.Open(p, sstable.Options{})
			if err != nil {
				continue
			}
			var buf bytes.Buffer
			err = dump.NewDumper(&buf, s, dump.Options{Workers: 1}).All(nil, nil)
			s.Close()
			if err == nil {
				out = append(out, p)
			}
		}
	}
	if len(out) < 40 {
		t.Fatalf("only %d real sstables dump", len(out))
	}
	return out
}

// likeOptions are the options --like the sstable gives: its header,
// partitioner, version and compression.
func likeOptions(t testing.TB, path string) Options {
	t.Helper()
	s, err := sstable.Open(path, sstable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	h, part, err := HeaderOfReference(s)
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Version: s.Version(), Header: h, Reference: true, Partitioner: part, Verify: true}
	if info := s.Data().Info(); info != nil {
		o.Compression = writer.CompressionFrom(info)
	}
	return o
}

func writeJSON(t testing.TB, doc []byte, dest string, o Options) *Result {
	t.Helper()
	in := filepath.Join(t.TempDir(), "in.json")
	if err := os.WriteFile(in, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := Write(Input{Name: in, R: f, Size: int64(len(doc))}, dest, o)
	if err != nil {
		t.Fatalf("write: %v", err)
	}
	return res
}

// roundTripSample are the real sstables the round-trip tests write back
// (relative to the testdata directory): few and small, so that the tests
// stay cheap under -race, and each for something the write must get
// right. BenchmarkRoundTripEveryFixture does every fixture and realworld
// sstable dump reads.
var roundTripSample = []string{
	"cassandra/nc/legacy_nc_clust_counter/nc-1-big-Data.db",                                     // counters, one global shard each
	"cassandra/da/legacy_da_simple/da-1-bti-Data.db",                                            // BTI
	"cassandra/oa/legacy_oa_clust/oa-1-big-Data.db",                                             // oa, LZ4
	"realworld/scylla/3.x/snappy/partition_key_with_values_of_different_types/mc-1-big-Data.db", // Snappy, a composite key
	"realworld/scylla/3.x/uncompressed/range_tombstones_simple/mc-1-big-Data.db",                // range tombstone markers
	"realworld/scylla/wrong_counter_shard_order/mc-2-big-Data.db",                               // three shards fitted to a run's size
	"realworld/cassandra/negative-local-expiration/table3/mc-1-big-Data.db",                     // data verify flags, written as it is
}

// schemaSample are the sstables TestRoundTripFromSchema writes back from
// CQL alone.
var schemaSample = []string{
	"realworld/scylla/3.x/uncompressed/counters/mc-1-big-Data.db",                 // a header minimum below the data's: searched for
	"realworld/scylla/3.x/uncompressed/legacy_udt_in_collection/mc-1-big-Data.db", // a UDT in a collection
	"realworld/scylla/3.x/uncompressed/compound_static_row/mc-1-big-Data.db",      // static rows, a compound key
}

// TestRoundTripLikeTheOriginal: dump -t of real sstables, written back
// --like the original, dumps to the same bytes, and verifies (the
// pretty document and JSON lines in turn).
func TestRoundTripLikeTheOriginal(t *testing.T) {
	for i, rel := range roundTripSample {
		t.Run(rel, func(t *testing.T) {
			roundTripLike(t, filepath.Join(fixtures.Dir(t), rel), i%2 == 1)
		})
	}
}

// BenchmarkRoundTripEveryFixture is TestRoundTripLikeTheOriginal and
// TestRoundTripFromSchema on every sstable of ../shared/testdata's
// cassandra and realworld that dump reads (some eighty; too slow for a
// test under -race), both styles; a difference fails it:
//
//	go test ./internal/undump -run '^$' -bench RoundTripEveryFixture -benchtime 1x
func BenchmarkRoundTripEveryFixture(b *testing.B) {
	paths := dumpable(b)
	for range b.N {
		for _, p := range paths {
			rel, _ := filepath.Rel(fixtures.Dir(b), p)
			b.Run(rel, func(b *testing.B) {
				roundTripLike(b, p, false)
				roundTripLike(b, p, true)
				roundTripSchema(b, p)
			})
		}
	}
}

// roundTripLike writes dump -t (-l with lines) of p back --like p and
// holds the output to the input, and verify's findings to the original's.
func roundTripLike(t testing.TB, p string, lines bool) {
	t.Helper()
	dataProblems := dataProblemsOf(p)
	doc := dumpOf(t, p, lines)
	o := likeOptions(t, p)
	o.JSONLines = lines
	o.Verify = len(dataProblems) == 0
	res := writeJSON(t, doc, t.TempDir(), o)
	if got := dumpOf(t, res.DataPath, lines); !bytes.Equal(got, doc) {
		t.Fatalf("dump of the written sstable differs from the input (%s):\n%s", res.Positions, firstDiff(got, doc))
	}
	if !res.PositionsKept || res.Verified != o.Verify {
		t.Errorf("positions %s, verified %v", res.Positions, res.Verified)
	}
	var got []string
	for _, p := range verify.SSTable(res.DataPath, sstable.Options{}, nil).Problems {
		got = append(got, p.Component+": "+p.Message)
	}
	if !slices.Equal(got, dataProblems) {
		t.Errorf("verify: %q; the original's data has %q", got, dataProblems)
	}
}

// dataProblemsOf lists what verify finds in an sstable's Data.db, each as
// its component and message: the problems of the data itself, which a
// written copy of the data has too (a real sstable's missing components
// or damaged checksums are not written again).
func dataProblemsOf(path string) []string {
	var out []string
	for _, p := range verify.SSTable(path, sstable.Options{}, nil).Problems {
		if p.Component == "Data.db" {
			out = append(out, p.Component+": "+p.Message)
		}
	}
	return out
}

func firstDiff(got, want []byte) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	lo := max(0, i-300)
	return string(got[lo:min(len(got), i+200)]) + "\n--- want ---\n" + string(want[lo:min(len(want), i+200)])
}

// TestRoundTripFromSchema: the same round trip with the table's columns
// and types from CQL (what `schema` prints for the sstable), so that the
// header's columns and EncodingStats come from the data alone, and the
// input's positions are kept by fitting (counter shards, minima).
func TestRoundTripFromSchema(t *testing.T) {
	for _, rel := range schemaSample {
		t.Run(rel, func(t *testing.T) {
			roundTripSchema(t, filepath.Join(fixtures.Dir(t), rel))
		})
	}
}

func roundTripSchema(t testing.TB, p string) {
	t.Helper()
	s, err := sstable.Open(p, sstable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	names := inspect.DefaultNames(s)
	// schema prints no CREATE TYPE for the UDTs the columns use:
	// they come first, from the header's types.
	cql := createTypes(names.Keyspace, append(append(append([]*cqltype.Type{}, s.StaticTypes()...), s.RegularTypes()...), s.ClusteringTypes()...)) +
		inspect.CreateTable(s, names)
	part := s.Stats().Validation.Partitioner
	v := s.Version()
	s.Close()
	sch, err := cqltype.ParseSchema(cql)
	if err != nil || len(sch.Tables) != 1 {
		t.Fatalf("the schema %q: %v", cql, err)
	}
	h, err := HeaderOfTable(sch.Tables[0])
	if err != nil {
		t.Fatal(err)
	}
	dataProblems := dataProblemsOf(p)
	doc := dumpOf(t, p, false)
	res := writeJSON(t, doc, t.TempDir(), Options{Version: v, Header: h, Partitioner: part, Verify: len(dataProblems) == 0})
	if got := dumpOf(t, res.DataPath, false); !bytes.Equal(got, doc) {
		t.Fatalf("dump of the written sstable differs from the input (%s, %d passes):\n%s", res.Positions, res.Passes, firstDiff(got, doc))
	}
	if !res.PositionsKept {
		t.Errorf("positions %s", res.Positions)
	}
}

// createTypes is CREATE TYPE statements in keyspace ks for every UDT the
// types use, each after the UDTs its fields use.
func createTypes(ks string, types []*cqltype.Type) string {
	var b strings.Builder
	seen := map[string]bool{}
	var walk func(t *cqltype.Type)
	walk = func(t *cqltype.Type) {
		for _, p := range t.Params {
			walk(p)
		}
		if t.Kind != cqltype.UDT || seen[t.Name] {
			return
		}
		seen[t.Name] = true
		fmt.Fprintf(&b, "CREATE TYPE %s.%s (", ks, t.Name)
		for i, f := range t.FieldNames {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s %s", f, t.Params[i].CQL())
		}
		b.WriteString(");\n")
	}
	for _, t := range types {
		walk(t)
	}
	return b.String()
}
