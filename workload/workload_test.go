package workload

import (
	"encoding/binary"
	"errors"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func be64(v uint64) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], v)
	return b[:]
}

func TestSmallPartitionsIsReadSmallPartitionsBench(t *testing.T) {
	p, ok := Builtin("small-partitions")
	if !ok {
		t.Fatal("small-partitions missing")
	}
	g, err := NewGenerator(p, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if s := g.Schema(); len(s.Columns) != 1 || s.Columns[0].Name != "commentid" || len(s.Clustering) != 1 {
		t.Fatalf("schema %+v", s)
	}
	var op Op
	for i := uint64(0); i < 1000; i++ {
		ok, err := g.Next(&op)
		if !ok || err != nil {
			t.Fatalf("op %d: %v %v", i, ok, err)
		}
		if op.Kind != OpWrite || string(op.Key) != string(be64(i)) || len(op.Clustering) != 1 ||
			string(op.Clustering[0]) != string(be64(i)) || len(op.Cells) != 1 || string(op.Cells[0].Value) != string(be64(i)) {
			t.Fatalf("op %d: key %x clustering %x cells %+v", i, op.Key, op.Clustering, op.Cells)
		}
		if !op.HasLiveness || op.Timestamp != p.TimestampStart+int64(i) || op.Cells[0].Timestamp != op.Timestamp {
			t.Fatalf("op %d: liveness %v ts %d cell ts %d", i, op.HasLiveness, op.Timestamp, op.Cells[0].Timestamp)
		}
	}
	if ok, _ := g.Next(&op); ok {
		t.Fatal("generator did not stop after 1000 ops")
	}
}

func streamHash(t *testing.T, p *Profile, n int64) uint64 {
	t.Helper()
	g, err := NewGenerator(p, n)
	if err != nil {
		t.Fatal(err)
	}
	h := fnv.New64a()
	var op Op
	for {
		ok, err := g.Next(&op)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		h.Write([]byte{byte(op.Kind), byte(op.Read), byte(op.Deletion)})
		h.Write(op.Key)
		for _, c := range op.Clustering {
			h.Write(c)
		}
		for _, c := range op.RangeEnd {
			h.Write(c)
		}
		for _, c := range op.Cells {
			h.Write(c.Path)
			h.Write(c.Value)
			h.Write(be64(uint64(c.Timestamp) ^ uint64(c.TTL)))
		}
	}
	return h.Sum64()
}

func TestDeterministicForSeed(t *testing.T) {
	for _, name := range BuiltinNames() {
		a, _ := Builtin(name)
		b, _ := Builtin(name)
		if streamHash(t, a, 3000) != streamHash(t, b, 3000) {
			t.Errorf("%s: same seed gave different streams", name)
		}
	}
	a, _ := Builtin("deletes")
	b, _ := Builtin("deletes")
	b.Seed = 2
	if streamHash(t, a, 3000) == streamHash(t, b, 3000) {
		t.Error("deletes: different seeds gave the same stream")
	}
}

func TestNoAllocationPerOp(t *testing.T) {
	for _, name := range BuiltinNames() {
		p, _ := Builtin(name)
		g, err := NewGenerator(p, 1<<40)
		if err != nil {
			t.Fatal(err)
		}
		var op Op
		for i := 0; i < 20000; i++ { // grow the reused buffers
			g.Next(&op)
		}
		if n := testing.AllocsPerRun(2000, func() { g.Next(&op) }); n != 0 {
			t.Errorf("%s: %.2f allocations per op, want 0", name, n)
		}
	}
}

func TestMixAndReads(t *testing.T) {
	p, _ := Builtin("deletes")
	p.Reads.Ratio = 0.1
	g, err := NewGenerator(p, 50000)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	var op Op
	for {
		ok, _ := g.Next(&op)
		if !ok {
			break
		}
		switch {
		case op.Kind == OpRead:
			counts["read"]++
		case op.Deletion == DelPartition:
			counts["partition"]++
		case op.Deletion == DelRow:
			counts["row"]++
		case op.Deletion == DelRange:
			counts["range"]++
			if len(op.RangeEnd) != 1 || string(op.RangeEnd[0]) < string(op.Clustering[0]) {
				t.Fatalf("range %x..%x", op.Clustering, op.RangeEnd)
			}
		case len(op.Cells) > 0 && op.Cells[0].Tombstone:
			counts["cell"]++
		case op.HasLiveness:
			counts["insert"]++
		default:
			counts["overwrite"]++
		}
	}
	// Expected shares of 50000: reads 10%, then of the 45000 writes the mix weights.
	want := map[string]float64{"read": 5000, "insert": 27000, "overwrite": 9000, "partition": 900, "row": 3600, "cell": 2250, "range": 2250}
	for k, w := range want {
		if got := float64(counts[k]); got < w*0.85 || got > w*1.15 {
			t.Errorf("%s: %v ops, want about %v (counts %v)", k, got, w, counts)
		}
	}
}

func TestReadPatternsFollowTheBenchmark(t *testing.T) {
	p, _ := Builtin("small-partitions")
	p.Partitions = 600
	p.Reads.Ops = 4000
	g, _ := NewGenerator(p, 600)
	var op Op
	seen := map[ReadPattern]int{}
	for {
		ok, _ := g.Next(&op)
		if !ok {
			break
		}
		if op.Kind != OpRead {
			continue
		}
		k := int64(binary.BigEndian.Uint64(op.Key))
		seen[op.Read]++
		switch op.Read {
		case ReadFixed:
			if k != 1234567890123%600 {
				t.Fatalf("fixed key %d", k)
			}
		case ReadInside:
			if k < 0 || k >= 600 {
				t.Fatalf("inside key %d", k)
			}
		case ReadPartlyOutside:
			if k < 0 || k >= 700 {
				t.Fatalf("partly outside key %d", k)
			}
		case ReadOutside:
			if k != 600+1234567 {
				t.Fatalf("outside key %d", k)
			}
		}
	}
	if len(seen) != 4 || seen[ReadFixed]+seen[ReadInside]+seen[ReadPartlyOutside]+seen[ReadOutside] != 4000 {
		t.Fatalf("patterns %v", seen)
	}
}

func TestDist(t *testing.T) {
	cases := []struct {
		in       string
		min, max int64
		mean     float64
	}{
		{"7", 7, 7, 7}, {"fixed(3)", 3, 3, 3}, {"uniform(2,5)", 2, 5, 3.5},
		{"zipf(100,1.5)", 1, 100, 0}, {"exp(10)", 0, 1 << 40, 10}, {"normal(50,5)", 0, 1 << 40, 50},
	}
	for _, c := range cases {
		d, err := ParseDist(c.in)
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		var sum float64
		const n = 20000
		for i := 0; i < n; i++ {
			v := d.Sample((float64(i) + 0.5) / n)
			if v < c.min || v > c.max {
				t.Fatalf("%s: sample %d outside %d..%d", c.in, v, c.min, c.max)
			}
			sum += float64(v)
		}
		if c.mean > 0 && (sum/n < c.mean*0.95 || sum/n > c.mean*1.05) {
			t.Errorf("%s: mean %.2f, want %.2f", c.in, sum/n, c.mean)
		}
		if d2, err := ParseDist(d.String()); err != nil || d2 != d {
			t.Errorf("%s: String() %q does not round-trip: %v", c.in, d.String(), err)
		}
	}
	// zipf is skewed: the smallest value is the most likely.
	d, _ := ParseDist("zipf(1000,1.2)")
	ones := 0
	for i := 0; i < 1000; i++ {
		if d.Sample((float64(i)+0.5)/1000) == 1 {
			ones++
		}
	}
	if ones < 100 {
		t.Errorf("zipf(1000,1.2): only %d of 1000 quantiles are 1", ones)
	}
	for _, bad := range []string{"", "x", "uniform(5,1)", "zipf(0,1)", "fixed(1,2)", "exp(NaN)", "-3", "normal(1)", "uniform(1,1e300)"} {
		if _, err := ParseDist(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestProfileErrorsNameTheField(t *testing.T) {
	cases := map[string]string{
		"partitions: 0\nschema: {partition_key: [{name: k, type: int}]}":                                   "partitions",
		"partitions: 5\nschema: {partition_key: [{name: k, type: wat}]}":                                   "schema.partition_key[0].type",
		"partitions: 5\nschema: {partition_key: [{name: k, type: int, gen: random}]}":                      "schema.partition_key[0].gen",
		"partitions: 5\nschema: {partition_key: [{name: k, type: int}]}\nbogus: 1":                         "bogus",
		"partitions: 5\nschema: {partition_key: [{name: k, type: int}], columns: [{name: k, type: int}]}":  "duplicate",
		"partitions: 5\nschema: {partition_key: [{name: k, type: int}]}\nrows_per_partition: uniform(3,1)": "rows_per_partition",
		"partitions: 5\nschema: {partition_key: [{name: k, type: int}]}\npartition_order: zipf(0.5)":       "partition_order",
		"partitions: 5\nschema: {partition_key: [{name: k, type: int}]}\nttl: {fraction: 0.5}":             "ttl.seconds",
		"": "empty profile",
	}
	for src, want := range cases {
		_, err := ParseProfile([]byte(src), "p.yaml")
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "p.yaml") {
			t.Errorf("%q: error %v, want it to mention %q and the file", src, err, want)
		}
		var pe *ProfileError
		if err != nil && !errors.As(err, &pe) {
			t.Errorf("%q: %T is not a *ProfileError", src, err)
		}
	}
}

func TestJSONProfile(t *testing.T) {
	src := `{"name":"j","partitions":10,"ops":25,"schema":{"partition_key":[{"name":"k","type":"text","size":"uniform(3,9)"}],
	"columns":[{"name":"m","type":"map<int,text>","elements":"2","size":"4"}]},"rows_per_partition":"1"}`
	p, err := ParseProfile([]byte(src), "j.json")
	if err != nil {
		t.Fatal(err)
	}
	g, _ := NewGenerator(p, -1)
	var op Op
	n := 0
	for {
		ok, _ := g.Next(&op)
		if !ok {
			break
		}
		n++
		if len(op.Key) < 3 || len(op.Key) > 9 || len(op.Cells) != 2 || len(op.Cells[0].Path) != 4 || len(op.Cells[0].Value) != 4 {
			t.Fatalf("op %d: key %q cells %+v", n, op.Key, op.Cells)
		}
	}
	if n != 25 {
		t.Fatalf("%d ops, want 25", n)
	}
}

func FuzzParseProfile(f *testing.F) {
	for _, n := range BuiltinNames() {
		f.Add([]byte(builtins[n]))
	}
	f.Add([]byte(`{"partitions":3,"schema":{"partition_key":[{"name":"k","type":"blob","size":"exp(5)"}]}}`))
	for _, name := range stressExamples {
		b, err := os.ReadFile(filepath.Join("testdata", "stress", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParseProfile(data, "fuzz")
		if err != nil {
			return
		}
		p.Partitions = min(p.Partitions, 1000)
		if st := p.Stress; st != nil {
			// Keep each input quick: levels below the first are drawn whole
			// for every partition, and a tiny select chance skips many.
			for _, c := range st.ck[min(1, len(st.ck)):] {
				if c.cluster.maxValue() > 1000 {
					return
				}
			}
			if st.selectRow.maxValue() < 0.01 {
				return
			}
		}
		g, err := NewGenerator(p, 50)
		if err != nil {
			t.Fatalf("valid profile rejected by NewGenerator: %v", err)
		}
		var op Op
		for i := 0; i < 60; i++ {
			if ok, err := g.Next(&op); err != nil || !ok {
				break
			}
		}
	})
}

func FuzzParseDist(f *testing.F) {
	for _, s := range []string{"1", "uniform(1,9)", "zipf(10,1.1)", "exp(3)", "normal(4,1)"} {
		f.Add(s, 0.5)
	}
	f.Fuzz(func(t *testing.T, s string, u float64) {
		d, err := ParseDist(s)
		if err != nil {
			return
		}
		if u < 0 || u >= 1 || u != u {
			u = 0.5
		}
		if v := d.Sample(u); v < 0 || v > 1<<40 {
			t.Fatalf("%s sample %d", s, v)
		}
	})
}
