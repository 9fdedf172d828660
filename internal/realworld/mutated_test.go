package realworld_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sstabletool/sstabletool/convert"
	"github.com/sstabletool/sstabletool/corrupt"
	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/format/stats"
	"github.com/sstabletool/sstabletool/internal/dump"
	"github.com/sstabletool/sstabletool/internal/fixtures"
	"github.com/sstabletool/sstabletool/reader"
	"github.com/sstabletool/sstabletool/verify"
)

// The same causes as the realworld files, made on copies of Cassandra's
// own fixtures, so each is tested where the rest of the sstable is known.

func dumpAll(t *testing.T, path string) []byte {
	t.Helper()
	s, err := sstable.Open(path, sstable.Options{})
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer s.Close()
	var buf bytes.Buffer
	d := dump.NewDumper(&buf, s, dump.Options{})
	d.Begin()
	if err := s.EachPartition(d.Partition); err != nil {
		t.Fatalf("dump %s: %v", path, err)
	}
	if err := d.End(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func problems(t *testing.T, path string) []string {
	t.Helper()
	var out []string
	for _, p := range verify.SSTable(path, sstable.Options{}, nil).Problems {
		out = append(out, p.Component+": "+p.Message)
	}
	return out
}

func dataOf(dir string) string {
	m, _ := filepath.Glob(filepath.Join(dir, "*-Data.db"))
	return m[0]
}

// appendChunk adds one compressed chunk after the last of a compressed
// Data.db, holding plain (empty: what CompressedSequentialWriter.flushData
// leaves), and counts it in CompressionInfo.db; Digest.crc32 follows.
func appendChunk(t *testing.T, data string, plain []byte) {
	t.Helper()
	ciPath := strings.TrimSuffix(data, "Data.db") + "CompressionInfo.db"
	cb, _ := os.ReadFile(ciPath)
	ci, err := reader.DecodeCompressionInfo(cb, true)
	if err != nil {
		t.Fatal(err)
	}
	comp, err := reader.CompressorFor(ci.Compressor, ci.Options)
	if err != nil {
		t.Fatal(err)
	}
	stored, err := comp.Compress(nil, plain)
	if err != nil {
		t.Fatal(err)
	}
	db, _ := os.ReadFile(data)
	ci.ChunkOffsets = append(ci.ChunkOffsets, int64(len(db)))
	db = binary.BigEndian.AppendUint32(append(db, stored...), crc32.ChecksumIEEE(stored))
	out := ci.Encode(true)
	if out == nil {
		t.Fatalf("CompressionInfo with an extra chunk does not encode: %v", ci.Validate())
	}
	os.WriteFile(ciPath, out, 0o644)
	os.WriteFile(data, db, 0o644)
	fixtures.RewriteDigest(t, data)
}

func TestTrailingEmptyChunkIsRead(t *testing.T) {
	src := fixtures.Table(t, "nc", "legacy_nc_clust")
	want := dumpAll(t, dataOf(src))
	dir := fixtures.CopyTable(t, src)
	appendChunk(t, dataOf(dir), nil)
	if got := dumpAll(t, dataOf(dir)); !bytes.Equal(got, want) {
		t.Error("dump changed after an empty chunk was appended")
	}
	if p := problems(t, dataOf(dir)); len(p) != 0 {
		t.Errorf("verify calls an empty trailing chunk a problem: %q", p)
	}
	// A trailing chunk with bytes in it is data the length lost.
	dir = fixtures.CopyTable(t, src)
	appendChunk(t, dataOf(dir), []byte("lost"))
	if p := problems(t, dataOf(dir)); len(p) != 1 || !strings.Contains(p[0], "past the data length") {
		t.Errorf("verify on a non-empty trailing chunk: %q", p)
	}
}

func TestTrailingCRCIsRead(t *testing.T) {
	src := fixtures.Table(t, "me-collections", "table_with_set-8fe7efd0a1c711eeae8c6d2c86545d91")
	want := dumpAll(t, dataOf(src))
	for _, c := range []struct {
		crc  uint32
		prob string
	}{{crc32.ChecksumIEEE(nil), ""}, {0xdeadbeef, "CRC.db: expected CRC 1, past the 1 chunks of Data.db, to be the CRC32 of an empty chunk"}} {
		dir := fixtures.CopyTable(t, src)
		crcPath := strings.TrimSuffix(dataOf(dir), "Data.db") + "CRC.db"
		b, _ := os.ReadFile(crcPath)
		os.WriteFile(crcPath, binary.BigEndian.AppendUint32(b, c.crc), 0o644)
		if got := dumpAll(t, dataOf(dir)); !bytes.Equal(got, want) {
			t.Error("dump changed after a CRC was appended to CRC.db")
		}
		p := problems(t, dataOf(dir))
		if c.prob == "" && len(p) != 0 || c.prob != "" && (len(p) != 1 || !strings.HasPrefix(p[0], c.prob)) {
			t.Errorf("extra CRC %#x: problems %q, want %q", c.crc, p, c.prob)
		}
	}
}

// rewriteStats decodes Statistics.db, lets edit change it, and writes it
// back (for versions before na nothing else checks it; from na on Encode
// writes the checksums).
func rewriteStats(t *testing.T, data string, edit func(st *stats.Statistics, b []byte) []byte) {
	t.Helper()
	d, _, err := format.ParseDescriptor(data)
	if err != nil {
		t.Fatal(err)
	}
	p := d.Path(format.ComponentStatistics)
	b, _ := os.ReadFile(p)
	st, err := stats.Decode(b, d.Version)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(p, edit(st, b), 0o644)
}

func TestStatisticsTOCInAnyOrder(t *testing.T) {
	for _, fx := range [][2]string{{"nc", "legacy_nc_clust"}, {"me-collections", "table_with_map-901f2c70a1c711eeae8c6d2c86545d91"}} {
		src := fixtures.Table(t, fx[0], fx[1])
		dir := fixtures.CopyTable(t, src)
		d, _, _ := format.ParseDescriptor(dataOf(dir))
		var orig *stats.Statistics
		rewriteStats(t, dataOf(dir), func(st *stats.Statistics, b []byte) []byte {
			orig = st
			// The table of contents as ScyllaDB writes it: 3,2,0,1.
			out := append([]byte(nil), b...)
			toc := 4
			if d.Version.HasMetadataChecksum {
				toc = 8
			}
			entry := func(i int) []byte { return b[toc+8*i : toc+8*i+8] }
			var reordered []byte
			for _, i := range []int{3, 2, 0, 1} {
				reordered = append(reordered, entry(i)...)
			}
			copy(out[toc:], reordered)
			if d.Version.HasMetadataChecksum {
				crc := crc32.Update(crc32.ChecksumIEEE(out[:4]), crc32.IEEETable, reordered)
				binary.BigEndian.PutUint32(out[toc+32:], crc)
			}
			return out
		})
		b, _ := os.ReadFile(d.Path(format.ComponentStatistics))
		st, err := stats.Decode(b, d.Version)
		if err != nil {
			t.Fatalf("%s: reordered table of contents: %v", fx[1], err)
		}
		// Decoded from either order, it re-encodes to the original bytes.
		a, _ := orig.Encode(d.Version)
		c, err := st.Encode(d.Version)
		if err != nil || !bytes.Equal(a, c) {
			t.Errorf("%s: reordered table of contents decodes differently (%v)", fx[1], err)
		}
		if !bytes.Equal(dumpAll(t, dataOf(dir)), dumpAll(t, dataOf(src))) {
			t.Errorf("%s: dump differs", fx[1])
		}
	}
}

// The EncodingStats minima as ScyllaDB wrote them in write_empty_counter:
// not ints. Cassandra 3.x/4.x (me here) cast them; 5.0 (nc) refuses them.
func TestEncodingStatsMinimaCastAsTheReleaseDoes(t *testing.T) {
	for _, fx := range [][2]string{{"me-collections", "table_with_map-901f2c70a1c711eeae8c6d2c86545d91"}, {"nc", "legacy_nc_simple"}} {
		src := fixtures.Table(t, fx[0], fx[1])
		dir := fixtures.CopyTable(t, src)
		v := format.MustVersion(fx[0][:2])
		rewriteStats(t, dataOf(dir), func(st *stats.Statistics, _ []byte) []byte {
			h := st.Header
			h.RawMinTTL = 1<<63 - 1
			h.MinTTL, _ = v.IntDelta(h.RawMinTTL, 0)
			out, err := st.Encode(v)
			if err != nil {
				t.Fatal(err)
			}
			return out
		})
		_, err := sstable.Open(dataOf(dir), sstable.Options{})
		if v.CheckedIntVInts {
			if err == nil || !strings.Contains(err.Error(), "min TTL that fits an int") {
				t.Errorf("nc: %v, want the checked cast's refusal", err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("me: %v", err)
		}
		if !bytes.Equal(dumpAll(t, dataOf(dir)), dumpAll(t, dataOf(src))) {
			t.Error("me: dump differs")
		}
		if p := problems(t, dataOf(dir)); len(p) != 1 || !strings.Contains(p[0], "min TTL 9223372036854775807 does not fit an int; Cassandra 3.x/4.x read it as -1") {
			t.Errorf("me: problems %q", p)
		}
	}
}

func TestMissingDerivedComponents(t *testing.T) {
	src := fixtures.Table(t, "nc", "legacy_nc_clust")
	want := dumpAll(t, dataOf(src))
	dir := fixtures.CopyTable(t, src)
	gone := []string{format.ComponentSummary, format.ComponentFilter, format.ComponentDigest, format.ComponentTOC}
	d, _, _ := format.ParseDescriptor(dataOf(dir))
	for _, c := range gone {
		os.Remove(d.Path(c))
	}
	if got := dumpAll(t, dataOf(dir)); !bytes.Equal(got, want) {
		t.Error("dump differs without the derived components")
	}
	s, err := sstable.Open(dataOf(dir), sstable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Lookups go through a summary sampled from Index.db.
	for _, key := range []string{"0", "3", "4"} {
		e, ok, err := s.Find([]byte(key))
		if err != nil || !ok || string(e.Key) != key {
			t.Errorf("Find(%q) without Summary.db: %v %v", key, ok, err)
		}
	}
	if !s.SummaryRebuilt() {
		t.Error("Summary() did not say it was rebuilt")
	}
	s.Close()
	p := problems(t, dataOf(dir))
	if len(p) != len(gone) {
		t.Errorf("problems %q, want one per missing component", p)
	}
	for _, c := range gone {
		found := false
		for _, q := range p {
			found = found || strings.HasPrefix(q, c+": missing")
		}
		if !found {
			t.Errorf("verify does not list %s as missing: %q", c, p)
		}
	}
}

// A compressed Data.db without CompressionInfo.db is never decoded as
// rows: TOC.txt says it is compressed, or without TOC.txt Statistics.db's
// compression ratio does (legacy_nc_clust's first partition header even
// decodes as uncompressed bytes, so only the ratio catches it). Open and
// verify name the missing file the same way in both cases; an uncompressed
// table without TOC.txt still opens.
func TestMissingCompressionInfoIsNamed(t *testing.T) {
	const want = "(Data.db is compressed and cannot be read without it)"
	for _, src := range fixtures.DataFiles(t) {
		d, _, _ := format.ParseDescriptor(src)
		compressed := fileExists(d.Path(format.ComponentCompressionInfo))
		for _, withTOC := range []bool{true, false} {
			if !compressed && withTOC {
				continue
			}
			dir := fixtures.CopyTable(t, filepath.Dir(src))
			d := d.WithDir(dir)
			os.Remove(d.Path(format.ComponentCompressionInfo))
			if !withTOC {
				os.Remove(d.Path(format.ComponentTOC))
			}
			s, err := sstable.Open(d.Path(format.ComponentData), sstable.Options{})
			if !compressed {
				if err != nil {
					t.Errorf("%s without TOC.txt: %v, want it read as uncompressed", src, err)
				} else {
					s.Close()
				}
				continue
			}
			var ce *corrupt.Error
			if !errors.As(err, &ce) || ce.Component != format.ComponentCompressionInfo || !strings.Contains(ce.Expected, want) {
				t.Errorf("%s, TOC %v: %v, want an error naming the missing CompressionInfo.db", src, withTOC, err)
				continue
			}
			if s != nil {
				s.Close()
			}
			p := verify.SSTable(d.Path(format.ComponentData), sstable.Options{}, nil).Problems
			if len(p) == 0 || p[0].Component != format.ComponentCompressionInfo || !strings.Contains(p[0].Message, want) {
				t.Errorf("%s, TOC %v: verify says %+v, want the missing CompressionInfo.db", src, withTOC, p)
			}
		}
	}
}

// The cause of negative-local-expiration/table3 (local deletion times that
// overflowed a signed int in Cassandra 3.x, CASSANDRA-14092) in a partition
// deletion of a real me sstable: dump shows the time as 3.x reads it, verify
// reports it at its offset, savings still reports (with the refusal), and
// convert refuses it unless --cap-deletion-times stores it as 5.0's invalid
// deletion time.
func TestNegativePartitionDeletionTime(t *testing.T) {
	const (
		ldtAt     = 6                // the first partition's DeletionTime: after its 2-byte length and 4-byte int key
		ldt       = -2146700400      // what table3's overflowed expirations read as
		markedAt  = 1703358898212000 // before every timestamp in the partition
		keyOfPart = "00000001"
	)
	dir := fixtures.CopyTable(t, fixtures.Table(t, "me-collections", "table_with_set-8fe7efd0a1c711eeae8c6d2c86545d91"))
	data := dataOf(dir)
	b, _ := os.ReadFile(data)
	if binary.BigEndian.Uint32(b[ldtAt:]) != 0x7fffffff || binary.BigEndian.Uint64(b[ldtAt+4:]) != 1<<63 {
		t.Fatalf("bytes %x at %d are not the LIVE legacy DeletionTime of the first partition", b[ldtAt:ldtAt+12], ldtAt)
	}
	var stored int32 = ldt // the legacy layout's signed int
	binary.BigEndian.PutUint32(b[ldtAt:], uint32(stored))
	binary.BigEndian.PutUint64(b[ldtAt+4:], markedAt)
	os.WriteFile(data, b, 0o644)
	fixtures.ResealCRC(t, data)
	fixtures.RewriteDigest(t, data)
	// Statistics.db as the writer of such a deletion records it
	// (negative-local-expiration's does): its minimum local deletion
	// time is the overflowed one, so only the deletion itself is wrong.
	rewriteStats(t, data, func(st *stats.Statistics, _ []byte) []byte {
		st.Stats.MinLocalDeletionTime = ldt
		out, err := st.Encode(st.Version)
		if err != nil {
			t.Fatal(err)
		}
		return out
	})

	// sstabledump prints localDeletionTime*1000 as an instant: 1901 here.
	want := `"deletion_info" : { "marked_deleted" : "2023-12-23T19:14:58.212Z", "local_delete_time" : "1901-12-22T22:20:00Z" }`
	if out := dumpAll(t, data); !bytes.Contains(out, []byte(want)) {
		t.Errorf("dump does not show the partition deletion as %s:\n%s", want, out)
	}

	p := verify.SSTable(data, sstable.Options{}, nil).Problems
	if len(p) != 1 || p[0].Component != "Data.db" || p[0].Offset != ldtAt ||
		!strings.Contains(p[0].Message, "partition deletion of key "+keyOfPart+": localDeletionTime -2146700400 is negative") {
		t.Errorf("verify: %+v, want the negative partition deletion at byte %d", p, ldtAt)
	}

	oa := format.MustVersion("oa")
	est, err := convert.Estimate(data, convert.Options{To: oa})
	if err != nil {
		t.Fatalf("savings: %v", err)
	}
	if len(est.Refusals) != 1 || !strings.Contains(est.Refusals[0], "--cap-deletion-times") || est.Counts.Capped != 1 {
		t.Errorf("savings: refusals %q, %d capped; want the one DeletionTime convert refuses", est.Refusals, est.Counts.Capped)
	}

	_, err = convert.Convert(data, t.TempDir(), convert.Options{To: oa, Verify: true})
	if err == nil || !strings.Contains(err.Error(), "partition deletion of key "+keyOfPart+" at source byte 6") || !strings.Contains(err.Error(), "--cap-deletion-times") {
		t.Fatalf("convert without --cap-deletion-times: %v, want a refusal naming the deletion and the flag", err)
	}
	out := t.TempDir()
	res, err := convert.Convert(data, out, convert.Options{To: oa, Verify: true, CapDeletionTimes: true})
	if err != nil || !res.Verified || res.Counts.Capped != 1 {
		t.Fatalf("convert --cap-deletion-times: %+v, %v", res, err)
	}
	s, err := sstable.Open(res.Output, sstable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var h rows.PartitionHeader
	if err := s.Decoder(0).ReadPartitionHeader(&h); err != nil || h.Deletion.LocalDeletionTime != deletiontime.InvalidLocalDeletionTime || h.Deletion.MarkedForDeleteAt != markedAt {
		t.Errorf("capped partition deletion %+v (%v), want local deletion time %d", h.Deletion, err, int64(deletiontime.InvalidLocalDeletionTime))
	}
}

// An uncompressed Data.db is checked against CRC.db while it is read: a
// flipped byte is an error with its offset, never a wrong value.
func TestUncompressedReadsCheckCRC(t *testing.T) {
	dir := fixtures.CopyTable(t, fixtures.Table(t, "me-collections", "table_with_set-8fe7efd0a1c711eeae8c6d2c86545d91"))
	data := dataOf(dir)
	b, _ := os.ReadFile(data)
	b[30] ^= 0x40
	os.WriteFile(data, b, 0o644)
	s, err := sstable.Open(data, sstable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	err = s.EachPartition(func(h *rowsHeader, dec *rowsDecoder) error { return dec.SkipRestDecoding() })
	var ce *corrupt.Error
	if !asCorrupt(err, &ce) || ce.Component != "Data.db" || ce.Offset != 0 || !strings.Contains(err.Error(), "CRC.db") {
		t.Fatalf("read of a flipped byte: %v", err)
	}
}

type (
	rowsHeader  = rows.PartitionHeader
	rowsDecoder = rows.Decoder
)

func asCorrupt(err error, ce **corrupt.Error) bool { return errors.As(err, ce) }

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
