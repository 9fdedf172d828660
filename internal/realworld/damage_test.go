package realworld_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sstabletool/sstabletool/convert"
	"github.com/sstabletool/sstabletool/corrupt"
	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/format/stats"
	"github.com/sstabletool/sstabletool/internal/fixtures"
	"github.com/sstabletool/sstabletool/internal/inspect"
	"github.com/sstabletool/sstabletool/reader"
	"github.com/sstabletool/sstabletool/verify"
)

// Issue 17: what a damage campaign found reads taking for data, each on a
// mutated copy of a real fixture.

// scanKeys is the oracle: every key of Data.db and where it starts.
func scanKeys(t *testing.T, data string) ([][]byte, map[string]int64) {
	t.Helper()
	s, err := sstable.Open(data, sstable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var keys [][]byte
	at := map[string]int64{}
	if err := s.ScanPartitions(sstable.ScanOptions{SkipCells: true}, func(p *sstable.PartitionSummary) error {
		keys = append(keys, append([]byte(nil), p.Key...))
		at[string(p.Key)] = p.Offset
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return keys, at
}

// probeKeys are a few keys of the table and a few of the same length it
// does not hold (a byte of a real key moved up or down).
func probeKeys(keys [][]byte, at map[string]int64) [][]byte {
	var out [][]byte
	for _, i := range []int{0, len(keys) / 2, len(keys) - 1} {
		if !slices.ContainsFunc(out, func(k []byte) bool { return bytes.Equal(k, keys[i]) }) {
			out = append(out, keys[i])
		}
	}
	absent := 0
	for _, k := range keys {
		for _, d := range []int{1, -1} {
			c := append([]byte(nil), k...)
			c[len(c)-1] += byte(d)
			if _, ok := at[string(c)]; !ok && absent < 3 && len(k) > 0 {
				out = append(out, c)
				absent++
			}
		}
	}
	return out
}

// mutations of b: one bit flipped every stride bytes, 8 bytes zeroed at the
// same places, and b cut at a few lengths.
func mutations(b []byte, stride int) map[string][]byte {
	out := map[string][]byte{}
	for pos := 0; pos < len(b); pos += stride {
		f := append([]byte(nil), b...)
		f[pos] ^= 1 << (pos % 8)
		out[fmt.Sprintf("flip@%d", pos)] = f
		z := append([]byte(nil), b...)
		copy(z[pos:], make([]byte, 8))
		out[fmt.Sprintf("zero@%d", pos)] = z[:len(b)]
	}
	for _, n := range []int{0, len(b) / 3, len(b) / 2, len(b) - 1} {
		out[fmt.Sprintf("cut@%d", n)] = append([]byte(nil), b[:n]...)
	}
	return out
}

// Lookups through a damaged Summary.db, Index.db, Partitions.db or Rows.db
// give a scan's answer, or (without OnIndexDamage) an error that names the
// component: never another partition, never "absent" for a key Data.db
// holds. dump -k printed key 1 for key 0 on me's table_with_map with a
// zeroed Index.db range, and "absent" in 89 campaign cases.
func TestLookupsThroughDamagedIndexAnswerAsAScan(t *testing.T) {
	root := fixtures.Dir(t)
	tables := []struct {
		dir   string
		comps []string
	}{
		{"cassandra/nc/legacy_nc_simple", []string{format.ComponentIndex, format.ComponentSummary}},
		{"cassandra/nc/legacy_nc_clust", []string{format.ComponentIndex, format.ComponentSummary}},
		{"cassandra/me-collections/table_with_map-901f2c70a1c711eeae8c6d2c86545d91", []string{format.ComponentIndex, format.ComponentSummary}},
		{"realworld/scylla/summary_test", []string{format.ComponentIndex, format.ComponentSummary}},
		{"cassandra/da/legacy_da_simple", []string{format.ComponentPartitions}},
		{"cassandra/da/legacy_da_clust", []string{format.ComponentPartitions, format.ComponentRows}},
	}
	for _, tb := range tables {
		src := filepath.Join(root, tb.dir)
		keys, at := scanKeys(t, dataOf(src))
		probes := probeKeys(keys, at)
		dir := fixtures.CopyTable(t, src)
		dd, _, _ := format.ParseDescriptor(dataOf(dir))
		for _, comp := range tb.comps {
			orig, err := os.ReadFile(dd.Path(comp))
			if err != nil {
				t.Fatal(err)
			}
			stride := max(1, len(orig)/24)
			for name, b := range mutations(orig, stride) {
				os.WriteFile(dd.Path(comp), b, 0o644)
				for _, fallback := range []bool{false, true} {
					var warned []error
					o := sstable.Options{}
					if fallback {
						o.OnIndexDamage = func(err error) { warned = append(warned, err) }
					}
					s, err := sstable.Open(dataOf(dir), o)
					if err != nil {
						continue // a clear refusal, with its file named
					}
					for _, k := range probes {
						e, ok, err := s.Find(k)
						want, present := at[string(k)]
						switch {
						case err != nil && fallback:
							t.Errorf("%s %s %s: Find(%x) with the scan to fall back on: %v", tb.dir, comp, name, k, err)
						case err != nil:
							var ce *corrupt.Error
							if !errors.As(err, &ce) || ce.File == "" || ce.Component == "" {
								t.Errorf("%s %s %s: Find(%x): %v, want an error naming file and component", tb.dir, comp, name, k, err)
							}
						case ok != present || (ok && e.Position != want):
							got := int64(-1)
							if e != nil {
								got = e.Position
							}
							t.Errorf("%s %s %s: Find(%x) = %v at %d, Data.db holds it: %v at %d", tb.dir, comp, name, k, ok, got, present, want)
						}
					}
					if fallback {
						got, err := s.FindPositions(probes)
						var wantPos []int64
						for _, k := range probes {
							if p, ok := at[string(k)]; ok {
								wantPos = append(wantPos, p)
							}
						}
						slices.Sort(wantPos)
						if err != nil || !slices.Equal(got, wantPos) {
							t.Errorf("%s %s %s: FindPositions = %v, %v; want %v", tb.dir, comp, name, got, err, wantPos)
						}
						for _, w := range warned {
							var ce *corrupt.Error
							if !errors.As(w, &ce) || ce.Component == "" {
								t.Errorf("%s %s %s: warning %v names no component", tb.dir, comp, name, w)
							}
						}
					}
					s.Close()
				}
			}
			os.WriteFile(dd.Path(comp), orig, 0o644)
		}
	}
}

// A zeroed uncompressed length in CompressionInfo.db read as an empty table
// (dump, dump -d and partitions printed nothing, exit 0). The chunks say
// otherwise: the length is theirs, the data reads whole, and verify names
// the field. Covered: many chunks (nc), a trailing empty chunk (ScyllaDB's
// summary_test), a single chunk (nc simple).
func TestZeroedCompressionLengthReadsTheChunks(t *testing.T) {
	root := fixtures.Dir(t)
	for _, dir := range []string{"cassandra/nc/legacy_nc_clust", "realworld/scylla/summary_test", "cassandra/nc/legacy_nc_simple", "cassandra/oa/legacy_oa_simple_counter"} {
		src := filepath.Join(root, dir)
		want := dumpAll(t, dataOf(src))
		cp := fixtures.CopyTable(t, src)
		d, _, _ := format.ParseDescriptor(dataOf(cp))
		p := d.Path(format.ComponentCompressionInfo)
		b, _ := os.ReadFile(p)
		ci, err := reader.DecodeCompressionInfo(b, d.Version.HasMaxCompressedLength)
		if err != nil {
			t.Fatal(err)
		}
		binary.BigEndian.PutUint64(b[ci.DataLengthOffset():], 0)
		os.WriteFile(p, b, 0o644)
		if got := dumpAll(t, dataOf(cp)); !bytes.Equal(got, want) {
			t.Errorf("%s: dump with a zeroed data length differs (%d bytes, want %d)", dir, len(got), len(want))
		}
		found := false
		for _, q := range problems(t, dataOf(cp)) {
			found = found || strings.Contains(q, fmt.Sprintf("CompressionInfo.db: uncompressed data length 0, but the chunks hold %d bytes", ci.DataLength))
		}
		if !found {
			t.Errorf("%s: verify does not name the zeroed length: %q", dir, problems(t, dataOf(cp)))
		}
	}
}

// ScyllaDB writes crc_check_chance among the compressor options; every
// command refused the file ("unknown compression option"). Cassandra 3.0
// to 5.0 drop the option when they read it. The copy here is a real
// compressed fixture whose CompressionInfo.db (which has no checksum of its
// own) gains the option.
func TestCRCCheckChanceOptionIsRead(t *testing.T) {
	for _, dir := range []string{"realworld/scylla/summary_test", "cassandra/nc/legacy_nc_clust"} {
		src := filepath.Join(fixtures.Dir(t), dir)
		want := dumpAll(t, dataOf(src))
		cp := fixtures.CopyTable(t, src)
		d, _, _ := format.ParseDescriptor(dataOf(cp))
		p := d.Path(format.ComponentCompressionInfo)
		b, _ := os.ReadFile(p)
		ci, err := reader.DecodeCompressionInfo(b, d.Version.HasMaxCompressedLength)
		if err != nil {
			t.Fatal(err)
		}
		ci.Options[reader.CRCCheckChanceOption] = "1.0"
		ci.OptionKeys = append(ci.OptionKeys, reader.CRCCheckChanceOption)
		os.WriteFile(p, ci.Encode(d.Version.HasMaxCompressedLength), 0o644)

		if got := dumpAll(t, dataOf(cp)); !bytes.Equal(got, want) {
			t.Errorf("%s: dump differs with crc_check_chance among the options", dir)
		}
		s, err := sstable.Open(dataOf(cp), sstable.Options{})
		if err != nil {
			t.Fatal(err)
		}
		m, err := inspect.ReadMetadata(s)
		s.Close()
		if err != nil {
			t.Fatal(err)
		}
		if m.Compression == nil || m.Compression.Options[reader.CRCCheckChanceOption] != "1.0" || !slices.Equal(m.Compression.NonCassandraOptions, []string{reader.CRCCheckChanceOption}) {
			t.Errorf("%s: metadata compression %+v", dir, m.Compression)
		}
		r := verify.SSTable(dataOf(cp), sstable.Options{}, nil)
		if !r.OK() || len(r.Notes) != 1 || !strings.Contains(r.Notes[0].Message, "crc_check_chance=1.0 is not Cassandra's") {
			t.Errorf("%s: verify problems %v, notes %v; want none and one note", dir, r.Problems, r.Notes)
		}
		// A rewrite does not carry it: Cassandra would not write it.
		res, err := convert.Convert(dataOf(cp), filepath.Join(t.TempDir(), "oa"), convert.Options{To: format.MustVersion("oa"), Verify: true})
		if err != nil {
			t.Fatalf("%s: convert: %v", dir, err)
		}
		out, err := sstable.Open(res.Output, sstable.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := out.Data().Info().Options[reader.CRCCheckChanceOption]; ok {
			t.Errorf("%s: convert wrote crc_check_chance again", dir)
		}
		out.Close()
	}
}

// Blind spots of verify that left every read unchanged: each damage below
// decodes, and verify must name it.
func TestVerifyCatchesDerivedDamage(t *testing.T) {
	root := fixtures.Dir(t)
	type damage struct {
		name, dir, comp string
		edit            func(t *testing.T, d format.Descriptor, b []byte) []byte
		want            string
	}
	i32 := func(at int, v uint32) func(*testing.T, format.Descriptor, []byte) []byte {
		return func(_ *testing.T, _ format.Descriptor, b []byte) []byte {
			binary.BigEndian.PutUint32(b[at:], v)
			return b
		}
	}
	editStats := func(edit func(st *stats.Stats)) func(*testing.T, format.Descriptor, []byte) []byte {
		return func(t *testing.T, d format.Descriptor, b []byte) []byte {
			st, err := stats.Decode(b, d.Version)
			if err != nil {
				t.Fatal(err)
			}
			edit(st.Stats)
			out, err := st.Encode(d.Version)
			if err != nil {
				t.Fatal(err)
			}
			return out
		}
	}
	me := "cassandra/me-collections/table_with_map-901f2c70a1c711eeae8c6d2c86545d91"
	cases := []damage{
		{"filter bit", "cassandra/nc/legacy_nc_clust", format.ComponentFilter, func(_ *testing.T, _ format.Descriptor, b []byte) []byte {
			// The first bitset byte no key sets a bit of.
			for i := 8; i < len(b); i++ {
				if b[i] != 0xFF {
					b[i] |= ^b[i] & -^b[i]
					return b
				}
			}
			return b
		}, "Filter.db: bits"},
		{"filter hash count", "cassandra/nc/legacy_nc_clust", format.ComponentFilter, i32(0, 6), "Filter.db: 6 hash functions, where bloom_filter_fp_chance 0.01 (Statistics.db) gives 5"},
		{"summary interval", "realworld/scylla/summary_test", format.ComponentSummary, i32(0, 64), "Summary.db: 2 samples; min index interval 64 and sampling level 128 sample Index.db's entries into 3"},
		{"summary full size", "realworld/scylla/summary_test", format.ComponentSummary, i32(20, 7), "Summary.db: size at full sampling 7; Index.db's entries at min index interval 128 give 2"},
		{"max compressed length", "cassandra/nc/legacy_nc_clust", format.ComponentCompressionInfo, i32(23, 1<<31-2), "CompressionInfo.db: expected a max compressed length of 2147483647"},
		{"CRC.db chunk size", me, format.ComponentCRC, i32(0, 65536|1<<20), "CRC.db: expected a chunk size that is a power of two"},
		{"total rows", me, format.ComponentStatistics, editStats(func(st *stats.Stats) { st.TotalRows = 1 }), "Statistics.db: totalRows 1 is below Data.db's 2"},
		{"min timestamp", me, format.ComponentStatistics, editStats(func(st *stats.Stats) { st.MinTimestamp += 1 }), "Statistics.db: timestamps"},
		{"max local deletion time", me, format.ComponentStatistics, editStats(func(st *stats.Stats) { st.MaxLocalDeletionTime = st.MinLocalDeletionTime }),
			"Statistics.db: local deletion times 1703358898..1703358898 do not cover Data.db's 1703358898..none: compaction drops a whole sstable"},
		{"max TTL", me, format.ComponentStatistics, editStats(func(st *stats.Stats) { st.MaxTTL = -1 }), "Statistics.db: TTLs 0..-1 do not cover Data.db's 0..0"},
		{"partition sizes", me, format.ComponentStatistics, editStats(func(st *stats.Stats) { st.PartitionSizes.Buckets[20]++ }), "Statistics.db: partition size histogram: 1 partitions in the bucket of"},
		{"cells per partition", me, format.ComponentStatistics, editStats(func(st *stats.Stats) { st.CellsPerPartition.Buckets[3] = 1 << 40 }), "Statistics.db: cells per partition histogram counts"},
		{"header type class", me, format.ComponentStatistics, func(_ *testing.T, _ format.Descriptor, b []byte) []byte {
			i := bytes.LastIndex(b, []byte("marshal.Int32Type"))
			b[i+len("marshal.")] = 'H'
			return b
		}, `type class "org.apache.cassandra.db.marshal.Hnt32Type", which is not one of Cassandra's`},
	}
	for _, c := range cases {
		src := filepath.Join(root, c.dir)
		want := dumpAll(t, dataOf(src))
		if p := problems(t, dataOf(src)); c.dir == me && len(p) != 0 {
			t.Fatalf("%s: the fixture itself has problems %q", c.dir, p)
		}
		cp := fixtures.CopyTable(t, src)
		d, _, _ := format.ParseDescriptor(dataOf(cp))
		b, _ := os.ReadFile(d.Path(c.comp))
		os.WriteFile(d.Path(c.comp), c.edit(t, d, b), 0o644)
		if c.comp != format.ComponentStatistics || c.name != "header type class" {
			if got := dumpAll(t, dataOf(cp)); !bytes.Equal(got, want) {
				t.Errorf("%s: the damage changes the dump: not a blind spot of verify alone", c.name)
			}
		}
		p := problems(t, dataOf(cp))
		found := false
		for _, q := range p {
			found = found || strings.Contains(q, c.want)
		}
		if !found {
			t.Errorf("%s: verify problems %q, want one containing %q", c.name, p, c.want)
		}
	}
}
