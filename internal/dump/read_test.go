package dump

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/fixtures"
	"github.com/sstabletool/sstabletool/internal/generate"
	"github.com/sstabletool/sstabletool/workload"
)

// The reader is the renderer's inverse: whatever a Dumper writes reads
// back into partitions that the renderer writes the same way, byte for
// byte, in both styles, with and without -t.

// readBack reads doc against t and renders what it read again.
func readBack(t Table, doc []byte, o Options) ([]byte, error) {
	var out bytes.Buffer
	d := NewTableDumper(&out, t, o)
	d.Begin()
	rd := NewReader(bytes.NewReader(doc), t)
	rd.JSONLines = o.JSONLines
	for {
		p, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		h := &rows.PartitionHeader{Key: p.Key, Deletion: p.Deletion, Offset: p.Position}
		if err := d.PartitionFrom(h, &readSource{rd: rd, t: t}); err != nil {
			return nil, err
		}
	}
	if err := d.End(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// readSource hands the renderer what the reader reads, with the read
// positions as offsets and each counter's total as a context of one
// global shard (what the renderer totals again).
type readSource struct {
	rd *Reader
	t  Table
}

func (s *readSource) Next(bool) (*rows.Unfiltered, error) {
	u, pos, err := s.rd.Unfiltered()
	if u == nil || err != nil {
		return nil, err
	}
	u.Offset = pos
	cols := s.t.Schema().Regular
	if u.Kind == rows.KindStaticRow {
		cols = s.t.Schema().Static
	}
	for i := range u.Cells {
		c := &u.Cells[i]
		if cols[c.Column].Counter && !c.IsTombstone() {
			c.Value = cqltype.AppendGlobalCounter(nil, [16]byte{1}, 1, int64(binary.BigEndian.Uint64(c.Value)))
		}
	}
	return u, nil
}

func dumpAll(t *testing.T, s *sstable.SSTable, o Options) []byte {
	t.Helper()
	var buf bytes.Buffer
	o.Now, o.Workers = pinnedNow, 1
	d := NewDumper(&buf, s, o)
	d.Begin()
	if err := d.All(nil, nil); err != nil {
		t.Fatalf("%s: %v", s.Path("Data.db"), err)
	}
	if err := d.End(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func checkReadBack(t *testing.T, s *sstable.SSTable, name string) {
	t.Helper()
	styles := []Options{{}, {RawTimestamps: true}, {JSONLines: true}, {JSONLines: true, RawTimestamps: true}}
	if raceEnabled && s.Data().Length() > 256<<10 {
		// One style for a large table under the race detector (CI's
		// budget: each costs tens of seconds); the smaller ones hold all four.
		styles = styles[:1]
	}
	for _, o := range styles {
		doc := dumpAll(t, s, o)
		o.Now = pinnedNow
		got, err := readBack(s, doc, o)
		if err != nil {
			t.Fatalf("%s %+v: reading the dump back: %v", name, o, err)
		}
		if !bytes.Equal(got, doc) {
			i := 0
			for i < len(got) && i < len(doc) && got[i] == doc[i] {
				i++
			}
			lo := max(0, i-200)
			t.Fatalf("%s %+v: read back and rendered again, the dump differs at byte %d:\n%s\n--- want ---\n%s", name, o, i, got[lo:min(len(got), i+200)], doc[lo:min(len(doc), i+200)])
		}
	}
}

// TestReaderInvertsDumperOnRealTables: every real sstable dump reads.
func TestReaderInvertsDumperOnRealTables(t *testing.T) {
	n := 0
	for _, p := range realTables(t) {
		s, err := sstable.Open(p, sstable.Options{})
		if err != nil {
			continue
		}
		var probe bytes.Buffer
		if err := NewDumper(&probe, s, Options{Workers: 1, Now: pinnedNow}).All(nil, nil); err != nil {
			s.Close()
			continue // the damaged ones dump cannot read
		}
		rel, _ := filepath.Rel(fixtures.Dir(t), p)
		checkReadBack(t, s, rel)
		s.Close()
		n++
	}
	if n < 40 {
		t.Fatalf("only %d real sstables dumped", n)
	}
}

// TestReaderInvertsDumperOnGeneratedTables covers what no fixture has:
// every type the generator writes, composite keys, TTLs, every deletion.
func TestReaderInvertsDumperOnGeneratedTables(t *testing.T) {
	checkReadBack(t, generatedTable(t, 60), "alltypes")
}

// generatedTable is the all-types profile's table of n partitions.
func generatedTable(tb testing.TB, n int64) *sstable.SSTable {
	p, err := workload.ParseProfile([]byte(allTypesProfile), "alltypes")
	if err != nil {
		tb.Fatal(err)
	}
	p.Partitions = n
	res, err := generate.Generate(p, tb.TempDir(), generate.Options{Version: format.MustVersion("oa")})
	if err != nil {
		tb.Fatal(err)
	}
	s, err := sstable.Open(res.DataPath, sstable.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// TestReaderErrorsSayWhereAndWhat: bad input names the byte, the line and
// column, and what was expected there.
func TestReaderErrorsSayWhereAndWhat(t *testing.T) {
	s := openFixture(t, "cassandra/oa/legacy_oa_clust")
	good := string(dumpAll(t, s, Options{RawTimestamps: true}))
	for _, c := range []struct{ name, doc, want string }{
		{"truncated", good[:400], "unexpected EOF"},
		{"not json", "[ { \"partition\" : ", "unexpected EOF"},
		{"syntax", strings.Replace(good, `"position" : 0`, `"position" : 0,,`, 1), "invalid JSON"},
		{"unknown member", strings.Replace(good, `"liveness_info"`, `"liveness"`, 1), `found "liveness"`},
		{"unknown column", strings.Replace(good, `"name" : "val"`, `"name" : "vall"`, 1), `expected one of the table's columns (val), found "vall"`},
		{"bad value", strings.Replace(good, `"tstamp" : "1689932014404000"`, `"tstamp" : "yesterday"`, 1), `expected the liveness "tstamp": a JSON string holding microseconds`},
		{"wrong count", strings.Replace(good, `"clustering" : [ "0`, `"clustering" : [ "x", "0`, 1), "expected 1 clustering values, found more"},
		{"rows first", `{"rows":[],"partition":{"key":["0"]}}`, `expected "partition" before "rows"`},
		{"array with jsonl", good, "found an array"},
	} {
		rd := NewReader(strings.NewReader(c.doc), s)
		rd.JSONLines = c.name == "array with jsonl"
		var err error
		for err == nil {
			if _, err = rd.Next(); err == nil {
				for {
					var u *rows.Unfiltered
					if u, _, err = rd.Unfiltered(); u == nil || err != nil {
						break
					}
				}
			}
		}
		if errors.Is(err, io.EOF) {
			t.Errorf("%s: read without error", c.name)
			continue
		}
		err = Locate(err, "in.json", strings.NewReader(c.doc))
		var ie *InputError
		if !errors.As(err, &ie) || ie.Line == 0 || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "in.json:") {
			t.Errorf("%s: %v, want an InputError located in in.json, containing %q", c.name, err, c.want)
		}
	}
}

func openFixture(t *testing.T, rel string) *sstable.SSTable {
	t.Helper()
	matches, _ := filepath.Glob(filepath.Join(fixtures.Dir(t), rel, "*-Data.db"))
	if len(matches) != 1 {
		t.Skipf("no fixture %s", rel)
	}
	s, err := sstable.Open(matches[0], sstable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// FuzzReader reads arbitrary input against a table with a column of most
// kinds: never a panic; and whatever reads whole renders to a document
// that reads back to the same rendering.
func FuzzReader(f *testing.F) {
	s := generatedTable(f, 5)
	for _, o := range []Options{{}, {RawTimestamps: true}, {JSONLines: true}} {
		var buf bytes.Buffer
		o.Now, o.Workers = pinnedNow, 1
		d := NewDumper(&buf, s, o)
		d.Begin()
		if err := d.All(nil, nil); err != nil {
			f.Fatal(err)
		}
		d.End()
		doc := buf.Bytes()
		f.Add(doc[:min(len(doc), 3000)])
	}
	f.Add([]byte(`{"partition":{"key":["a"],"position":0},"rows":[{"type":"range_tombstone_bound","start":{"type":"inclusive","clustering":["*"],"deletion_info":{"marked_deleted":"1","local_delete_time":"2"}}}]}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		o := Options{Now: pinnedNow, RawTimestamps: true}
		first, err := readBack(s, doc, o)
		if err != nil {
			var ie *InputError
			if !errors.As(err, &ie) && !strings.Contains(err.Error(), "Data.db") {
				t.Fatalf("an error that is not an InputError: %v", err)
			}
			return
		}
		again, err := readBack(s, first, o)
		if err != nil || !bytes.Equal(again, first) {
			t.Fatalf("the rendering of what was read does not read back the same: %v\n%s\n---\n%s", err, first, again)
		}
	})
}
