package undump

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/stats"
	"github.com/sstabletool/sstabletool/internal/dump"
)

// fuzzTables are the tables FuzzWrite writes into: one with a column of
// most kinds (static, text, a map, a list, a frozen tuple, a timestamp;
// a clustering column), and one of counters, whose contexts are fitted to
// the input's positions.
var fuzzTables = []string{
	`CREATE TABLE ks.t (pk text, ck int, s int static, v text, m map<text,int>, l list<int>,
	  u frozen<tuple<int,text>>, ts timestamp, PRIMARY KEY (pk, ck));`,
	`CREATE TABLE ks.c (pk int, ck text, c counter, d counter, PRIMARY KEY (pk, ck));`,
}

// fuzzSeeds are hand-written inputs for fuzzTables (by index); each is
// also added as the dump -t (positions and all) and dump -t -l of what it
// writes.
var fuzzSeeds = [][]string{
	{
		`{"partition":{"key":["a"]},"rows":[{"type":"static_block","cells":[{"name":"s","value":7,"tstamp":"5"}]},` +
			`{"type":"row","clustering":[1],"liveness_info":{"tstamp":"10","ttl":60,"expires_at":"1700000060"},` +
			`"cells":[{"name":"v","value":"x"},{"name":"m","path":["k"],"value":3},{"name":"l","path":["aaaaaaaa-0000-1000-8000-000000000000"],"value":4},` +
			`{"name":"u","value":[1,"y"]},{"name":"ts","value":"2024-01-01 00:00:00.000Z"}]},` +
			`{"type":"range_tombstone_bound","start":{"type":"exclusive","clustering":[1],"deletion_info":{"marked_deleted":"20","local_delete_time":"1700000000"}}},` +
			`{"type":"range_tombstone_bound","end":{"type":"inclusive","clustering":[5],"deletion_info":{"marked_deleted":"20","local_delete_time":"1700000000"}}}]}` + "\n" +
			`{"partition":{"key":["b"],"deletion_info":{"marked_deleted":"30","local_delete_time":"1700000001"}},"rows":[]}` + "\n",
		`[{"partition":{"key":["z"]},"rows":[{"type":"row","clustering":[2],"deletion_info":{"marked_deleted":"3","local_delete_time":"4"},` +
			`"cells":[{"name":"m","deletion_info":{"marked_deleted":"2","local_delete_time":"4"}},{"name":"v","deletion_info":{"local_delete_time":"4"},"tstamp":"1"}]}]},` +
			`{"partition":{"key":["y"]},"rows":[{"type":"row","clustering":[-1],"cells":[{"name":"v","value":"","tstamp":"2023-11-14T22:13:20Z"}]}]}]`,
	},
	{
		`{"partition":{"key":["1"]},"rows":[{"type":"row","clustering":["a"],"cells":[{"name":"c","value":5,"tstamp":"9"},{"name":"d","value":-2,"tstamp":"9"}]},` +
			`{"type":"row","clustering":["b"],"cells":[{"name":"c","deletion_info":{"local_delete_time":"1700000000"},"tstamp":"11"}]}]}` + "\n" +
			`{"partition":{"key":["2"]},"rows":[{"type":"row","clustering":["a"],"cells":[{"name":"c","value":9223372036854775807,"tstamp":"1"}]}]}` + "\n",
	},
}

// fuzzHeader is the header of fuzzTables[i].
func fuzzHeader(tb testing.TB, i int) *stats.Header {
	sch, err := cqltype.ParseSchema(fuzzTables[i])
	if err != nil || len(sch.Tables) != 1 {
		tb.Fatalf("%s: %v", fuzzTables[i], err)
	}
	h, err := HeaderOfTable(sch.Tables[0])
	if err != nil {
		tb.Fatal(err)
	}
	return h
}

// FuzzWrite writes arbitrary input as an sstable: never a panic; an input
// that is refused is refused with an InputError that names the file, the
// line and column; a written sstable that verify flags is not committed;
// and what is written dumps (-t) to a document that writes again into an
// sstable that dumps the same (the input's own bytes are not the measure:
// a hand-written input differs from its dump in spacing, order and what it
// leaves out).
func FuzzWrite(f *testing.F) {
	for i, docs := range fuzzSeeds {
		h := fuzzHeader(f, i)
		for _, doc := range docs {
			f.Add(uint8(i), []byte(doc))
			res, err := writeFuzz(f, []byte(doc), f.TempDir(), h)
			if err != nil {
				f.Fatalf("seed %q: %v", doc, err)
			}
			f.Add(uint8(i), dumpOf(f, res.DataPath, false))
			f.Add(uint8(i), dumpOf(f, res.DataPath, true))
		}
	}
	headers := make([]*stats.Header, len(fuzzTables))
	for i := range fuzzTables {
		headers[i] = fuzzHeader(f, i)
	}
	f.Fuzz(func(t *testing.T, table uint8, doc []byte) {
		h := headers[int(table)%len(headers)]
		res, err := writeFuzz(t, doc, t.TempDir(), h)
		if err != nil {
			var ie *dump.InputError
			var nv *NotVerifiedError
			switch {
			case errors.As(err, &nv):
			case !errors.As(err, &ie):
				t.Fatalf("an error that is not an InputError: %v", err)
			case ie.File == "" || ie.Line < 1 || ie.Column < 1 || ie.Offset < 0 || ie.Offset > int64(len(doc)):
				t.Fatalf("an InputError that does not locate itself in the input: %#v", ie)
			}
			return
		}
		first := dumpOf(t, res.DataPath, false)
		again, err := writeFuzz(t, first, t.TempDir(), h)
		if err != nil {
			t.Fatalf("the dump of the written sstable does not write: %v\n%s", err, first)
		}
		if !again.PositionsKept {
			t.Errorf("the dump of the written sstable wrote with positions %s", again.Positions)
		}
		if second := dumpOf(t, again.DataPath, false); string(second) != string(first) {
			t.Fatalf("written again, the dump differs:\n%s", firstDiff(second, first))
		}
	})
}

// writeFuzz writes doc (either style) as an oa sstable with header h into
// dest, uncompressed, verified.
func writeFuzz(tb testing.TB, doc []byte, dest string, h *stats.Header) (*Result, error) {
	in := filepath.Join(tb.TempDir(), "in.json")
	if err := os.WriteFile(in, doc, 0o644); err != nil {
		tb.Fatal(err)
	}
	fh, err := os.Open(in)
	if err != nil {
		tb.Fatal(err)
	}
	defer fh.Close()
	res, err := Write(Input{Name: in, R: fh, Size: int64(len(doc))}, dest, Options{
		Version: format.MustVersion("oa"), Header: h, Partitioner: stats.Murmur3Partitioner, Verify: true,
	})
	if err == nil && !strings.HasSuffix(res.DataPath, "-Data.db") {
		tb.Fatalf("written at %q", res.DataPath)
	}
	return res, err
}
