package stats

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/sstabletool/sstabletool/corrupt"
	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/clustering"
	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/internal/fixtures"
)

// statsFile is one fixture's Statistics.db with its version.
type statsFile struct {
	path  string
	group string // nb, nc, oa, me-collections
	table string
	v     format.Version
	b     []byte
}

func statsFiles(t testing.TB) []statsFile {
	t.Helper()
	var out []statsFile
	for _, data := range fixtures.DataFiles(t) {
		p := strings.TrimSuffix(data, "Data.db") + ComponentName
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatalf("reading %s: %v", p, err)
		}
		d, _, err := format.ParseDescriptor(p)
		v := d.Version
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, statsFile{
			path: p, v: v, b: b,
			table: filepath.Base(filepath.Dir(p)),
			group: filepath.Base(filepath.Dir(filepath.Dir(p))),
		})
	}
	if len(out) == 0 {
		t.Skip("no fixture sstables")
	}
	return out
}

func fixture(t testing.TB, group, table string) statsFile {
	t.Helper()
	for _, f := range statsFiles(t) {
		if f.group == group && f.table == table {
			return f
		}
	}
	t.Fatalf("fixture %s/%s has no Statistics.db", group, table)
	return statsFile{}
}

var cmpStats = []cmp.Option{cmpopts.EquateNaNs(), cmpopts.IgnoreUnexported(cqltype.Type{})}

const utf8Type = "org.apache.cassandra.db.marshal.UTF8Type"

func TestFixturesRoundTripByteForByte(t *testing.T) {
	for _, f := range statsFiles(t) {
		t.Run(f.group+"/"+f.table, func(t *testing.T) {
			s, err := ReadFile(f.path, f.v)
			if err != nil {
				t.Fatal(err)
			}
			out, err := s.Encode(f.v)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out, f.b) {
				t.Fatalf("re-encoding differs: %d bytes, want %d; first difference at byte %d", len(out), len(f.b), firstDiff(out, f.b))
			}
			for _, tb := range [][]byte{s.Validation.TrailingBytes, s.Compaction.TrailingBytes, s.Stats.TrailingBytes, s.Header.TrailingBytes} {
				if tb != nil {
					t.Errorf("unexpected trailing bytes % x: Cassandra's size estimate should match", tb)
				}
			}
		})
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func TestFixtureValues(t *testing.T) {
	for _, f := range statsFiles(t) {
		t.Run(f.group+"/"+f.table, func(t *testing.T) {
			s, err := Decode(f.b, f.v)
			if err != nil {
				t.Fatal(err)
			}
			st, h := s.Stats, s.Header
			legacy := f.group != "me-collections"
			wantPart := Murmur3Partitioner
			if legacy {
				wantPart = ByteOrderedPartitioner
			}
			if s.Validation.Partitioner != wantPart {
				t.Errorf("partitioner %q, want %q", s.Validation.Partitioner, wantPart)
			}
			if s.Validation.BloomFilterFPChance != 0.01 {
				t.Errorf("bloom filter fp chance %v, want the default 0.01", s.Validation.BloomFilterFPChance)
			}
			if st.MinTimestamp <= 1_400_000_000_000_000 || st.MaxTimestamp < st.MinTimestamp {
				t.Errorf("timestamps %d..%d are not microseconds after 2014", st.MinTimestamp, st.MaxTimestamp)
			}
			if h.MinTimestamp != st.MinTimestamp {
				t.Errorf("EncodingStats min timestamp %d != stats min timestamp %d", h.MinTimestamp, st.MinTimestamp)
			}
			if st.MaxLocalDeletionTime != NoDeletionTime || st.MinTTL != 0 || st.MaxTTL != 0 {
				t.Errorf("no TTLs were written, yet max ldt %d, ttl %d..%d", st.MaxLocalDeletionTime, st.MinTTL, st.MaxTTL)
			}
			parts, cells := st.PartitionSizes.Count(), st.CellsPerPartition.Count()
			if parts != cells || parts < 1 {
				t.Errorf("partition-size histogram counts %d partitions, cells histogram %d", parts, cells)
			}
			card, err := s.Compaction.EstimatedCardinality()
			if err != nil || card != parts {
				t.Errorf("estimated cardinality %d (%v), want the %d partitions", card, err, parts)
			}
			if f.v.HasUIntDeletionTime != (len(st.PartitionSizes.Offsets) == 155) && f.v.Name != "nc" {
				t.Errorf("%d partition size offsets", len(st.PartitionSizes.Offsets))
			}
			if !slicesEqual(st.PartitionSizes.Offsets, NewOffsets(len(st.PartitionSizes.Offsets), false)) ||
				!slicesEqual(st.CellsPerPartition.Offsets, NewOffsets(len(st.CellsPerPartition.Offsets), false)) {
				t.Errorf("stored bucket offsets differ from NewOffsets")
			}
			if len(st.CommitLogIntervals) != 1 || st.CommitLogIntervals[0].Start != st.CommitLogLowerBound || st.CommitLogIntervals[0].End != st.CommitLogUpperBound {
				t.Errorf("commit log intervals %v do not span lower %v .. upper %v", st.CommitLogIntervals, st.CommitLogLowerBound, st.CommitLogUpperBound)
			}
			if st.OriginatingHostID == nil {
				t.Errorf("me and nb+ record the originating host id")
			}
			if !legacy {
				if h.KeyType.Class != "org.apache.cassandra.db.marshal.Int32Type" || h.KeyType.Type.Kind != cqltype.Int {
					t.Errorf("key type %q", h.KeyType.Class)
				}
				if st.TotalRows != parts {
					t.Errorf("%d rows in %d single-row partitions", st.TotalRows, parts)
				}
				return
			}
			if parts != 5 {
				t.Errorf("%d partitions, the legacy tables have 5", parts)
			}
			if h.KeyType.Class != utf8Type || h.KeyType.Type.Kind != cqltype.Text {
				t.Errorf("key type %q", h.KeyType.Class)
			}
			clust := strings.Contains(f.table, "clust")
			wantRows := int64(5)
			if clust {
				wantRows = 250
			}
			if st.TotalRows != wantRows {
				t.Errorf("total rows %d, want %d", st.TotalRows, wantRows)
			}
			if clust {
				if len(h.ClusteringTypes) != 1 || h.ClusteringTypes[0].Class != utf8Type {
					t.Errorf("header clustering types %v, want [UTF8Type]", h.ClusteringTypes)
				}
			} else if len(h.ClusteringTypes) != 0 {
				t.Errorf("header clustering types %v, want none", h.ClusteringTypes)
			}
			if len(h.RegularColumns) != 1 || string(h.RegularColumns[0].Name) != "val" {
				t.Fatalf("regular columns %v, want [val]", h.RegularColumns)
			}
			wantVal := utf8Type
			if strings.HasSuffix(f.table, "_counter") {
				wantVal = "org.apache.cassandra.db.marshal.CounterColumnType"
				if !h.RegularColumns[0].Type.Type.IsCounter() {
					t.Errorf("counter column not parsed as a counter")
				}
			}
			if h.RegularColumns[0].Type.Class != wantVal {
				t.Errorf("val type %q, want %q", h.RegularColumns[0].Type.Class, wantVal)
			}
			if f.v.HasImprovedMinMax {
				if clust != (len(st.ClusteringTypes) == 1) || clust && st.ClusteringTypes[0].Class != utf8Type {
					t.Errorf("stats clustering types %v", st.ClusteringTypes)
				}
			}
			cov := st.CoveredClustering
			if cov.Start.Kind != clustering.InclStartBound || cov.End.Kind != clustering.InclEndBound {
				t.Errorf("covered clustering kinds %s..%s", cov.Start.Kind, cov.End.Kind)
			}
			if clust {
				// ck is the row number then a long fixed string: 0... is the
				// smallest, 9... (row 9) the largest in text order.
				if len(cov.Start.Values) != 1 || !bytes.HasPrefix(cov.Start.Values[0], []byte("0012345")) ||
					len(cov.End.Values) != 1 || !bytes.HasPrefix(cov.End.Values[0], []byte("90123")) {
					t.Errorf("covered clustering %q..%q", cov.Start.Values, cov.End.Values)
				}
			} else if len(cov.Start.Values)+len(cov.End.Values) != 0 {
				t.Errorf("a table without clustering columns covers %q..%q", cov.Start.Values, cov.End.Values)
			}
			if f.v.HasKeyRange && (string(st.FirstKey) != "0" || string(st.LastKey) != "4") {
				t.Errorf("key range %q..%q, want '0'..'4'", st.FirstKey, st.LastKey)
			}
			// The oa fixtures were written outside unified compaction (NaN);
			// the da ones record the whole token space.
			if f.v.HasTokenSpaceCoverage && !f.v.IsBTI() && !math.IsNaN(st.TokenSpaceCoverage) {
				t.Errorf("token space coverage %v, want NaN outside unified compaction", st.TokenSpaceCoverage)
			}
			if f.v.IsBTI() && st.TokenSpaceCoverage != 1 {
				t.Errorf("token space coverage %v, want 1", st.TokenSpaceCoverage)
			}
			if st.HasLegacyCounterShards {
				t.Errorf("legacy counter shards in a table written by Cassandra 4+")
			}
		})
	}
}

func slicesEqual(a, b []int64) bool { return cmp.Equal(a, b) }

// TestChecksumsNameTheirOffset flips one byte in every checksummed region of
// an nc file: the error must be a checksum CorruptError at the CRC that
// covers the byte.
func TestChecksumsNameTheirOffset(t *testing.T) {
	f := fixture(t, "nc", "legacy_nc_clust")
	n := int(binary.BigEndian.Uint32(f.b))
	offs := []int{}
	for i := 0; i < n; i++ {
		offs = append(offs, int(binary.BigEndian.Uint32(f.b[8+8*i+4:])))
	}
	offs = append(offs, len(f.b))
	// flipped byte -> offset of the CRC expected to fail
	cases := map[int]int{
		2:                       4,            // the count
		12:                      8 + 8*n,      // a TOC entry
		8 + 8*n - 1:             8 + 8*n,      // the last TOC byte
		offs[0] + 3:             offs[1] - 4,  // validation
		offs[1]:                 offs[2] - 4,  // compaction
		offs[2] + 100:           offs[3] - 4,  // stats
		offs[3] + 7:             offs[4] - 4,  // header
		len(f.b) - 1:            len(f.b) - 4, // the last CRC itself
		offs[2] - 2:             offs[2] - 4,  // compaction's CRC
		(offs[2] + offs[3]) / 2: offs[3] - 4,  // middle of stats
	}
	for flip, crcAt := range cases {
		b := bytes.Clone(f.b)
		b[flip] ^= 0x40
		_, err := Decode(b, f.v)
		ce, ok := errors.AsType[*corrupt.Error](err)
		if !ok {
			t.Errorf("flip at %d: error %v, want a *corrupt.Error", flip, err)
			continue
		}
		if ce.Component != ComponentName || ce.Offset != int64(crcAt) || !errors.Is(err, ErrChecksum) {
			t.Errorf("flip at %d: %v; want a checksum error at byte %d", flip, err, crcAt)
		}
		// Callers that tell changed bytes from unparsable ones use reader's
		// sentinel for every component.
		if !errors.Is(err, corrupt.ErrChecksum) {
			t.Errorf("flip at %d: %v does not wrap corrupt.ErrChecksum", flip, err)
		}
		if !strings.Contains(err.Error(), "Statistics.db at byte") || !strings.Contains(err.Error(), "expected") {
			t.Errorf("flip at %d: message %q does not name the component, offset and expectation", flip, err)
		}
	}
	// ReadFile names the file too.
	p := filepath.Join(t.TempDir(), "nc-1-big-Statistics.db")
	b := bytes.Clone(f.b)
	b[offs[2]+100] ^= 1
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadFile(p, f.v)
	if ce, ok := errors.AsType[*corrupt.Error](err); !ok || ce.File != p {
		t.Errorf("ReadFile error %v does not name %s", err, p)
	}
}

// TestTruncationsFail cuts every fixture at many lengths: each cut must give
// a CorruptError inside the file, never a panic or success.
func TestTruncationsFail(t *testing.T) {
	for _, f := range statsFiles(t) {
		for cut := 0; cut < len(f.b); cut += 1 + cut/16 {
			_, err := Decode(f.b[:cut], f.v)
			ce, ok := errors.AsType[*corrupt.Error](err)
			if !ok {
				t.Fatalf("%s cut at %d: %v, want a CorruptError", f.table, cut, err)
			}
			if ce.Offset < 0 || ce.Offset > int64(cut) {
				t.Fatalf("%s cut at %d: error offset %d outside the input", f.table, cut, ce.Offset)
			}
		}
	}
}

// TestLegacyLayoutErrorsAtTheField corrupts a field of an un-checksummed me
// file so that the decoder itself must find and place the problem.
func TestLegacyLayoutErrorsAtTheField(t *testing.T) {
	f := fixture(t, "me-collections", "table_with_set-8fe7efd0a1c711eeae8c6d2c86545d91")
	statsAt := int(binary.BigEndian.Uint32(f.b[4+8*2+4:]))
	b := bytes.Clone(f.b)
	binary.BigEndian.PutUint32(b[statsAt:], 0x7fffffff) // partition-size bucket count
	_, err := Decode(b, f.v)
	ce, ok := errors.AsType[*corrupt.Error](err)
	if !ok || ce.Offset != int64(statsAt) || !strings.Contains(ce.Expected, "estimated partition size histogram bucket count") {
		t.Fatalf("got %v; want an error at byte %d about the bucket count", err, statsAt)
	}
	// A TOC naming a fifth component type.
	b = bytes.Clone(f.b)
	binary.BigEndian.PutUint32(b[4+8*3:], 7)
	if _, err := Decode(b, f.v); err == nil || !strings.Contains(err.Error(), "at byte 28") {
		t.Fatalf("bad type ordinal: %v", err)
	}
}

// TestOARoundTripThroughNC converts real oa statistics to nc and back: the
// bytes must be the original ones, and the nc encoding must decode as nc
// and be as long as the real nc file of the same table.
func TestOARoundTripThroughNC(t *testing.T) {
	nc := format.MustVersion("nc")
	oa := format.MustVersion("oa")
	for _, table := range []string{"simple", "simple_counter", "clust", "clust_counter"} {
		t.Run(table, func(t *testing.T) {
			f := fixture(t, "oa", "legacy_oa_"+table)
			s, err := Decode(f.b, oa)
			if err != nil {
				t.Fatal(err)
			}
			down, losses, err := s.Convert(nc)
			if err != nil || len(losses) != 0 {
				t.Fatalf("oa -> nc: %v, losses %v", err, losses)
			}
			ncBytes, err := down.Encode(nc)
			if err != nil {
				t.Fatal(err)
			}
			realNC := fixture(t, "nc", "legacy_nc_"+table)
			if len(ncBytes) != len(realNC.b) {
				t.Errorf("oa -> nc encodes %d bytes, the real nc file has %d", len(ncBytes), len(realNC.b))
			}
			if got := tocOffsets(ncBytes); !cmp.Equal(got, tocOffsets(realNC.b)) {
				t.Errorf("nc table of contents %v, real nc %v", got, tocOffsets(realNC.b))
			}
			back, err := Decode(ncBytes, nc)
			if err != nil {
				t.Fatalf("decoding our nc: %v", err)
			}
			if d := cmp.Diff(down, back, cmpStats...); d != "" {
				t.Fatalf("nc decode differs from what was encoded:\n%s", d)
			}
			up, losses, err := back.Convert(oa)
			if err != nil || len(losses) != 0 {
				t.Fatalf("nc -> oa: %v, losses %v", err, losses)
			}
			oaBytes, err := up.Encode(oa)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(oaBytes, f.b) {
				t.Fatalf("oa -> nc -> oa differs from the original at byte %d", firstDiff(oaBytes, f.b))
			}
		})
	}
}

func tocOffsets(b []byte) []uint32 {
	n := int(binary.BigEndian.Uint32(b))
	var out []uint32
	for i := 0; i < n; i++ {
		out = append(out, binary.BigEndian.Uint32(b[8+8*i+4:]))
	}
	return out
}

// TestNCToOAMatchesRealOAStructure converts the real nc statistics to oa:
// the encoding must have the real oa file's size and table of contents, and
// the same version-specific structure; only per-version values differ.
func TestNCToOAMatchesRealOAStructure(t *testing.T) {
	oa := format.MustVersion("oa")
	for _, table := range []string{"simple", "simple_counter", "clust", "clust_counter"} {
		t.Run(table, func(t *testing.T) {
			src := fixture(t, "nc", "legacy_nc_"+table)
			realOA := fixture(t, "oa", "legacy_oa_"+table)
			s, err := Decode(src.b, src.v)
			if err != nil {
				t.Fatal(err)
			}
			conv, losses, err := s.Convert(oa)
			if err != nil || len(losses) != 0 {
				t.Fatalf("nc -> oa: %v, losses %v", err, losses)
			}
			out, err := conv.Encode(oa)
			if err != nil {
				t.Fatal(err)
			}
			if len(out) != len(realOA.b) || !cmp.Equal(tocOffsets(out), tocOffsets(realOA.b)) {
				t.Fatalf("nc -> oa: %d bytes, TOC %v; real oa: %d bytes, TOC %v", len(out), tocOffsets(out), len(realOA.b), tocOffsets(realOA.b))
			}
			got, err := Decode(out, oa)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := Decode(realOA.b, oa)
			// Structure: everything but the values that differ per run.
			ignore := cmpopts.IgnoreFields(Stats{}, "MinTimestamp", "MaxTimestamp", "CompressionRatio",
				"CommitLogUpperBound", "CommitLogLowerBound", "CommitLogIntervals", "OriginatingHostID", "PartitionSizes.Buckets")
			if d := cmp.Diff(want.Stats, got.Stats, append(cmpStats, ignore)...); d != "" {
				t.Errorf("stats structure differs from the real oa file:\n%s", d)
			}
			if d := cmp.Diff(want.Header, got.Header, append(cmpStats, cmpopts.IgnoreFields(Header{}, "MinTimestamp"))...); d != "" {
				t.Errorf("header differs from the real oa file:\n%s", d)
			}
		})
	}
}

// TestNBToOA converts 4.x statistics: the covered clustering is derived
// from the legacy min/max and equals what Cassandra wrote in the real oa
// file; the key range must be supplied.
func TestNBToOA(t *testing.T) {
	oa := format.MustVersion("oa")
	src := fixture(t, "nb", "legacy_nb_clust")
	s, err := Decode(src.b, src.v)
	if err != nil {
		t.Fatal(err)
	}
	conv, losses, err := s.Convert(oa)
	if err != nil {
		t.Fatal(err)
	}
	if len(losses) != 1 || losses[0].Field != "Stats.FirstKey/LastKey" {
		t.Fatalf("losses %v, want only the missing key range", losses)
	}
	if _, err := conv.Encode(oa); err == nil || !strings.Contains(err.Error(), "FirstKey") {
		t.Fatalf("encoding oa without a key range: %v", err)
	}
	conv.Stats.FirstKey, conv.Stats.LastKey = []byte("0"), []byte("4")
	out, err := conv.Encode(oa)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(out, oa)
	if err != nil {
		t.Fatal(err)
	}
	realOA, _ := Decode(fixture(t, "oa", "legacy_oa_clust").b, oa)
	if d := cmp.Diff(realOA.Stats.CoveredClustering, got.Stats.CoveredClustering); d != "" {
		t.Errorf("covered clustering differs from the real oa file:\n%s", d)
	}
	if d := cmp.Diff(realOA.Stats.ClusteringTypes, got.Stats.ClusteringTypes, cmpStats...); d != "" {
		t.Errorf("clustering types differ:\n%s", d)
	}
	if got.Stats.LegacyMinClusteringValues != nil || !math.IsNaN(got.Stats.TokenSpaceCoverage) || got.Stats.HasPartitionLevelDeletions {
		t.Errorf("oa fields not filled as Cassandra would: %+v", got.Stats)
	}
	// Back to nb: the legacy values are those of the original file.
	nbAgain, losses, err := got.Convert(src.v)
	if err != nil || len(losses) != 0 {
		t.Fatalf("oa -> nb: %v %v", err, losses)
	}
	nbBytes, err := nbAgain.Encode(src.v)
	if err != nil || !bytes.Equal(nbBytes, src.b) {
		t.Fatalf("nb -> oa -> nb is not the original file (err %v, first difference at %d)", err, firstDiff(nbBytes, src.b))
	}
}

// TestOATombstonePadding writes statistics with real tombstone bins (the
// me-collections tables hold collection tombstones) in oa: the stats
// component must be 4 bytes per bin longer than its fields, zero-filled,
// counted by the table of contents and covered by the component's CRC.
func TestOATombstonePadding(t *testing.T) {
	oa := format.MustVersion("oa")
	f := fixture(t, "me-collections", "table_with_set-8fe7efd0a1c711eeae8c6d2c86545d91")
	s, err := Decode(f.b, f.v)
	if err != nil {
		t.Fatal(err)
	}
	bins := s.Stats.TombstoneDropTimes.Bins
	if len(bins) != 1 || bins[0].Count != 2 || s.Stats.TombstoneDropTimes.MaxBinSize != 100 {
		t.Fatalf("me tombstone histogram %+v, want one bin of 2 (3.11 wrote max bin size 100)", s.Stats.TombstoneDropTimes)
	}
	conv, losses, err := s.Convert(oa)
	if err != nil || len(losses) != 1 {
		t.Fatalf("me -> oa: %v %v", err, losses)
	}
	conv.Stats.FirstKey, conv.Stats.LastKey = []byte{0, 0, 0, 0}, []byte{0, 0, 0, 1}
	out, err := conv.Encode(oa)
	if err != nil {
		t.Fatal(err)
	}
	offs := tocOffsets(out)
	statsStart, statsEnd := int(offs[2]), int(offs[3])-4 // before its CRC
	fields, err := conv.Stats.appendTo(nil, oa)
	if err != nil {
		t.Fatal(err)
	}
	if got := statsEnd - statsStart; got != len(fields)+4*len(bins) {
		t.Fatalf("stats component is %d bytes, fields %d + 4 per bin", got, len(fields))
	}
	body := out[statsStart:statsEnd]
	if !bytes.Equal(body[:len(fields)], fields) || !bytes.Equal(body[len(fields):], make([]byte, 4*len(bins))) {
		t.Fatalf("stats component is not its fields followed by zero padding")
	}
	if crc := binary.BigEndian.Uint32(out[statsEnd:]); crc != crc32.ChecksumIEEE(body) {
		t.Fatalf("stats CRC 0x%08x does not cover the padding (0x%08x)", crc, crc32.ChecksumIEEE(body))
	}
	// The oa bin is a long time and an int count, after max bin size and
	// count ints (both 1 now).
	var bin []byte
	bin = binary.BigEndian.AppendUint32(bin, 1)
	bin = binary.BigEndian.AppendUint32(bin, 1)
	bin = binary.BigEndian.AppendUint64(bin, uint64(bins[0].DeletionTime))
	bin = binary.BigEndian.AppendUint32(bin, 2)
	bin = binary.BigEndian.AppendUint32(bin, 0) // sstable level follows
	if !bytes.Contains(body, bin) {
		t.Fatalf("oa tombstone bin layout not found")
	}
	back, err := Decode(out, oa)
	if err != nil {
		t.Fatal(err)
	}
	if back.Stats.TrailingBytes != nil || !cmp.Equal(back.Stats.TombstoneDropTimes.Bins, bins) {
		t.Fatalf("padding not recognised on decode: trailing % x, bins %+v", back.Stats.TrailingBytes, back.Stats.TombstoneDropTimes.Bins)
	}
	// A writer that did not pad: the decoder tolerates it and re-encodes it.
	unpadded := withStatsBody(t, out, oa, body[:len(fields)])
	got, err := Decode(unpadded, oa)
	if err != nil {
		t.Fatal(err)
	}
	if got.Stats.TrailingBytes == nil || len(got.Stats.TrailingBytes) != 0 {
		t.Fatalf("missing padding should be remembered as empty trailing bytes, got %v", got.Stats.TrailingBytes)
	}
	if again, _ := got.Encode(oa); !bytes.Equal(again, unpadded) {
		t.Fatalf("unpadded file does not re-encode exactly")
	}
}

// withStatsBody rebuilds a checksummed file with a different stats body.
func withStatsBody(t *testing.T, b []byte, v format.Version, body []byte) []byte {
	t.Helper()
	offs := tocOffsets(b)
	delta := len(body) - (int(offs[3]) - 4 - int(offs[2]))
	var out []byte
	out = append(out, b[:int(offs[2])]...)
	out = append(out, body...)
	out = binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(body))
	out = append(out, b[offs[3]:]...)
	binary.BigEndian.PutUint32(out[8+8*3+4:], uint32(int(offs[3])+delta))
	binary.BigEndian.PutUint32(out[8+8*4:], crc32.Update(crc32.ChecksumIEEE(out[:4]), crc32.IEEETable, out[8:8+8*4]))
	return out
}

// TestDeletionTimesAcrossLayouts checks the signed/unsigned int forms and
// what Convert reports when a time cannot be kept.
func TestDeletionTimesAcrossLayouts(t *testing.T) {
	oa, nc := format.MustVersion("oa"), format.MustVersion("nc")
	f := fixture(t, "oa", "legacy_oa_simple")
	s, err := Decode(f.b, oa)
	if err != nil {
		t.Fatal(err)
	}
	const y2050 = 2524608000
	s.Stats.MinLocalDeletionTime, s.Stats.MaxLocalDeletionTime = 1700000000, y2050
	s.Stats.TombstoneDropTimes = TombstoneHistogram{MaxBinSize: 2, Bins: []TombstoneBin{{1700000000, 3}, {y2050, 1}}}
	out, err := s.Encode(oa)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Decode(out, oa)
	if err != nil || back.Stats.MaxLocalDeletionTime != y2050 || back.Stats.TombstoneDropTimes.Bins[1].DeletionTime != y2050 {
		t.Fatalf("oa keeps times past 2038: %v %+v", err, back.Stats)
	}
	down, losses, err := back.Convert(nc)
	if err != nil {
		t.Fatal(err)
	}
	fields := map[string]bool{}
	for _, l := range losses {
		fields[l.Field] = true
	}
	if len(losses) != 2 || !fields["Stats.MaxLocalDeletionTime"] || !fields["Stats.TombstoneDropTimes.Bins[1].DeletionTime"] {
		t.Fatalf("losses %v, want the max deletion time and the 2050 bin", losses)
	}
	if down.Stats.MaxLocalDeletionTime != LegacyMaxDeletionTime || down.Stats.MinLocalDeletionTime != 1700000000 {
		t.Fatalf("nc deletion times %d..%d", down.Stats.MinLocalDeletionTime, down.Stats.MaxLocalDeletionTime)
	}
	ncBytes, err := down.Encode(nc)
	if err != nil {
		t.Fatal(err)
	}
	// The signed int Integer.MAX_VALUE-1 sits right after the timestamps.
	ncStats := ncBytes[tocOffsets(ncBytes)[2]:]
	h := 4 + 16*len(down.Stats.PartitionSizes.Buckets) + 4 + 16*len(down.Stats.CellsPerPartition.Buckets) + 12 + 16
	if got := binary.BigEndian.Uint32(ncStats[h+4:]); got != math.MaxInt32-1 {
		t.Fatalf("nc max local deletion time stored as %d", got)
	}
	if s.Stats.MaxLocalDeletionTime != y2050 {
		t.Fatalf("Convert modified its receiver")
	}
	// No deletion: Integer.MAX_VALUE in nc, 0xFFFFFFFF in oa.
	for _, v := range []format.Version{nc, oa} {
		b, err := appendLocalDeletionTime(nil, v, NoDeletionTime, "t")
		want := uint32(math.MaxInt32)
		if v.HasUIntDeletionTime {
			want = math.MaxUint32
		}
		if err != nil || binary.BigEndian.Uint32(b) != want {
			t.Fatalf("%s NoDeletionTime encoded % x", v, b)
		}
	}
	// Negative legacy times become oa's invalid marker.
	legacy, _ := Decode(fixture(t, "nc", "legacy_nc_simple").b, nc)
	legacy.Stats.MinLocalDeletionTime = -5
	up, losses, _ := legacy.Convert(oa)
	if up.Stats.MinLocalDeletionTime != InvalidDeletionTime || len(losses) != 1 {
		t.Fatalf("negative ldt -> %d, losses %v", up.Stats.MinLocalDeletionTime, losses)
	}
}

// TestConvertDropsVersionFields goes down to versions without repair,
// host id or interval fields and checks what is reported.
func TestConvertDropsVersionFields(t *testing.T) {
	f := fixture(t, "nb", "legacy_nb_simple")
	s, err := Decode(f.b, f.v)
	if err != nil {
		t.Fatal(err)
	}
	u := UUID{1, 2, 3}
	s.Stats.PendingRepair = &u
	s.Stats.IsTransient = true
	ma := format.MustVersion("ma")
	down, losses, err := s.Convert(ma)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"Stats.CommitLogIntervals", "Stats.CommitLogLowerBound", "Stats.PendingRepair", "Stats.IsTransient", "Stats.OriginatingHostID"}
	var got []string
	for _, l := range losses {
		got = append(got, l.Field)
	}
	if strings.Join(got, ",") != strings.Join(want[1:], ",") {
		// a single interval is not a loss; the lower bound is
		t.Fatalf("losses %v, want %v", got, want[1:])
	}
	b, err := down.Encode(ma)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Decode(b, ma)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(down, back, cmpStats...); d != "" {
		t.Fatalf("ma round trip:\n%s", d)
	}
	// ma has no checksums: count, TOC and components only.
	if first := binary.BigEndian.Uint32(b[8:]); first != 4+8*4 {
		t.Fatalf("ma first component at %d", first)
	}
}

func TestHistogramHelpers(t *testing.T) {
	want := []int64{1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 17, 20, 24, 29, 35, 42, 50, 60, 72, 86}
	if got := NewOffsets(len(want), false); !cmp.Equal(got, want) {
		t.Fatalf("offsets %v", got)
	}
	if got := NewOffsets(3, true); !cmp.Equal(got, []int64{0, 1, 2, 3}) {
		t.Fatalf("offsets with zero %v", got)
	}
	h := EstimatedHistogram{Offsets: []int64{1, 2, 3, 4, 5}, Buckets: []int64{0, 1, 0, 3, 0, 0}}
	if h.Count() != 4 || h.Min() != 2 || h.Max() != 4 {
		t.Fatalf("count %d min %d max %d", h.Count(), h.Min(), h.Max())
	}
	if p, _ := h.Percentile(0.5); p != 4 {
		t.Fatalf("median %d", p)
	}
	if p, _ := h.Percentile(0.25); p != 2 {
		t.Fatalf("p25 %d", p)
	}
	if m, _ := h.Mean(); m != 4 { // (2 + 3*4) / 4 = 3.5, rounded up
		t.Fatalf("mean %d", m)
	}
	h.Buckets[5] = 1
	if _, err := h.Percentile(0.5); !errors.Is(err, ErrOverflowed) || h.Max() != math.MaxInt64 {
		t.Fatalf("overflowed histogram: %v", err)
	}
	if m, err := h.WithoutOverflow().Mean(); err != nil || m != 4 || h.Overflow() != 1 {
		t.Fatalf("WithoutOverflow: %d %v", m, err)
	}
	// On real files the helpers agree with the raw buckets.
	s, err := Decode(fixture(t, "nc", "legacy_nc_clust").b, format.MustVersion("nc"))
	if err != nil {
		t.Fatal(err)
	}
	cells := s.Stats.CellsPerPartition
	if p, _ := cells.Percentile(1); p != 50 || cells.Min() != 43 || cells.Max() != 50 {
		// 50 rows of one cell per partition: bucket (42, 50]
		t.Fatalf("cells per partition p100 %d, min %d, max %d", p, cells.Min(), cells.Max())
	}
}

func TestTombstoneSum(t *testing.T) {
	h := TombstoneHistogram{Bins: []TombstoneBin{{100, 10}, {200, 20}}}
	for _, c := range []struct {
		t    int64
		want float64
	}{{50, 0}, {100, 5}, {150, (10+15)*0.5/2 + 5}, {200, 30}, {300, 30}} {
		if got := h.Sum(c.t); got != c.want {
			t.Errorf("Sum(%d) = %v, want %v", c.t, got, c.want)
		}
	}
}

func TestHLLNormalFormat(t *testing.T) {
	// p=13: 8192 five-bit registers, six to an int; 100 registers set to 1.
	b := binary.BigEndian.AppendUint32(nil, uint32(0xFFFFFFFE))
	b = append(b, 13, 25, 0)
	words := make([]uint32, 8192/6+1)
	for j := 0; j < 100; j++ {
		k := j * 80
		words[k/6] |= 1 << (5 * uint(k%6))
	}
	size := 4 * len(words)
	b = append(b, byte(size|0x80), byte(size>>7))
	for _, w := range words {
		b = binary.BigEndian.AppendUint32(b, w)
	}
	got, err := HLLCardinality(b)
	want := int64(math.Round(8192 * math.Log(8192.0/8092)))
	if err != nil || got != want {
		t.Fatalf("normal sketch estimate %d (%v), want linear counting %d", got, err, want)
	}
	for cut := 0; cut < len(b); cut += 97 {
		if _, err := HLLCardinality(b[:cut]); err == nil {
			t.Fatalf("truncated sketch at %d accepted", cut)
		}
	}
}

func BenchmarkDecode(b *testing.B) {
	f := fixture(b, "nc", "legacy_nc_clust")
	b.SetBytes(int64(len(f.b)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode(f.b, f.v); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncode(b *testing.B) {
	f := fixture(b, "nc", "legacy_nc_clust")
	s, err := Decode(f.b, f.v)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(f.b)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Encode(f.v); err != nil {
			b.Fatal(err)
		}
	}
}

// TestNAEndingBeforeIsTransient builds the stats component some early 4.0
// builds wrote for na (ending before the isTransient byte, checksums
// intact): the error must name that field and its offset.
func TestNAEndingBeforeIsTransient(t *testing.T) {
	na := format.MustVersion("na")
	s, err := Decode(fixture(t, "nb", "legacy_nb_simple").b, format.MustVersion("nb"))
	if err != nil {
		t.Fatal(err)
	}
	conv, _, err := s.Convert(na)
	if err != nil {
		t.Fatal(err)
	}
	good, err := conv.Encode(na)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Decode(good, na); err != nil {
		t.Fatalf("na encoding does not decode: %v", err)
	}
	offs := tocOffsets(good)
	body := good[offs[2] : offs[3]-4]
	// na has no originating host id: isTransient is the last byte.
	short := withStatsBody(t, good, na, body[:len(body)-1])
	_, err = Decode(short, na)
	ce, ok := errors.AsType[*corrupt.Error](err)
	wantAt := int64(offs[2]) + int64(len(body)) - 1
	if !ok || ce.Offset != wantAt || !strings.Contains(ce.Expected, "isTransient") {
		t.Fatalf("got %v; want an error about isTransient at byte %d", err, wantAt)
	}
	t.Log(err)
	if _, err := conv.Encode(format.MustVersion("nb")); err == nil {
		t.Fatalf("encoding na values as nb without Convert should fail")
	}
}

// TestNCLegacyPaddingForNullBound: nc sizes the legacy values from the
// covered slice, nulls included (2 bytes each), but writes only up to the
// first null, so such a component ends in zeros that Decode must accept.
func TestNCLegacyPaddingForNullBound(t *testing.T) {
	nc := format.MustVersion("nc")
	s, err := Decode(fixture(t, "oa", "legacy_oa_clust").b, format.MustVersion("oa"))
	if err != nil {
		t.Fatal(err)
	}
	s.Stats.CoveredClustering.End = clustering.Prefix{Kind: clustering.InclEndBound, Values: [][]byte{nil}}
	conv, _, err := s.Convert(nc)
	if err != nil {
		t.Fatal(err)
	}
	if len(conv.Stats.LegacyMaxClusteringValues) != 0 {
		t.Fatalf("legacy max %q, want the values before the null", conv.Stats.LegacyMaxClusteringValues)
	}
	out, err := conv.Encode(nc)
	if err != nil {
		t.Fatal(err)
	}
	offs := tocOffsets(out)
	body := out[offs[2] : offs[3]-4]
	fields, _ := conv.Stats.appendTo(nil, nc)
	if len(body) != len(fields)+2 || !bytes.Equal(body[len(fields):], []byte{0, 0}) {
		t.Fatalf("stats body %d bytes for %d bytes of fields, want 2 zero bytes of padding", len(body), len(fields))
	}
	back, err := Decode(out, nc)
	if err != nil || back.Stats.TrailingBytes != nil {
		t.Fatalf("decode: %v, trailing %v", err, back.Stats.TrailingBytes)
	}
	if d := cmp.Diff(conv, back, cmpStats...); d != "" {
		t.Fatalf("values differ after the round trip:\n%s", d)
	}
}

// A sparse set cannot hold 2^sp or more distinct registers: linear counting
// would divide by zero registers left (or take the log of a negative).
func TestHLLSparseSetLargerThanRegisters(t *testing.T) {
	for _, n := range []int{15, 16, 17} {
		b := binary.BigEndian.AppendUint32(nil, uint32(0xFFFFFFFE))
		b = append(b, 4, 4, 1, byte(n)) // p=4, sp=4, sparse, n entries
		for i := range n {
			b = append(b, byte(i%16))
		}
		got, err := HLLCardinality(b)
		if n < 16 {
			if want := int64(math.Round(16 * math.Log(16/float64(16-n)))); err != nil || got != want {
				t.Errorf("%d of 16 registers: %d (%v), want %d", n, got, err, want)
			}
			continue
		}
		if err == nil {
			t.Errorf("%d entries for 16 registers: estimate %d, want an error", n, got)
		}
	}
}
