package reader

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sstabletool/sstabletool/internal/fixtures"
)

// memFile is an in-memory File that also offers Bytes, like a mapping.
type memFile struct {
	b    []byte
	path string
}

func (m *memFile) ReadAt(p []byte, off int64) (int, error) {
	return bytes.NewReader(m.b).ReadAt(p, off)
}
func (m *memFile) Size() int64   { return int64(len(m.b)) }
func (m *memFile) Path() string  { return m.path }
func (m *memFile) Close() error  { return nil }
func (m *memFile) Bytes() []byte { return m.b }

// readerOnlyFile hides Bytes, so Data takes its Buffered code path.
type readerOnlyFile struct{ m *memFile }

func (r readerOnlyFile) ReadAt(p []byte, off int64) (int, error) { return r.m.ReadAt(p, off) }
func (r readerOnlyFile) Size() int64                             { return r.m.Size() }
func (r readerOnlyFile) Path() string                            { return r.m.Path() }
func (r readerOnlyFile) Close() error                            { return nil }

// compressedTable is a Data.db + CompressionInfo.db pair built in memory
// following CompressedSequentialWriter's rules.
type compressedTable struct {
	data []byte // Data.db
	ci   []byte // CompressionInfo.db
	info *CompressionInfo
}

// buildCompressed cuts plain into chunks of chunkLen, compresses each with
// comp, stores it raw when the compressed size reaches maxCompressedLength
// (padding a short last chunk with zeros up to that length, as Cassandra
// does), and appends each chunk's big-endian CRC32.
func buildCompressed(tb testing.TB, plain []byte, comp Compressor, chunkLen, maxCompressedLength int) compressedTable {
	tb.Helper()
	var out, buf []byte
	info := &CompressionInfo{
		Compressor:          comp.Name(),
		Options:             map[string]string{},
		OptionKeys:          []string{},
		ChunkLength:         chunkLen,
		MaxCompressedLength: maxCompressedLength,
		DataLength:          int64(len(plain)),
	}
	for start := 0; start < len(plain); start += chunkLen {
		chunk := plain[start:min(start+chunkLen, len(plain))]
		var err error
		buf, err = comp.Compress(buf[:0], chunk)
		if err != nil {
			tb.Fatalf("compress: %v", err)
		}
		stored := buf
		if len(buf) >= maxCompressedLength {
			stored = append([]byte(nil), chunk...)
			for len(stored) < maxCompressedLength {
				stored = append(stored, 0)
			}
		}
		info.ChunkOffsets = append(info.ChunkOffsets, int64(len(out)))
		out = append(out, stored...)
		out = binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(stored))
	}
	ci := info.Encode(true)
	if ci == nil {
		tb.Fatalf("encode: %v", info.Validate())
	}
	return compressedTable{data: out, ci: ci, info: info}
}

// writeTable writes t into dir as Data.db and CompressionInfo.db.
func writeTable(tb testing.TB, dir string, t compressedTable) (dataPath, ciPath string) {
	tb.Helper()
	dataPath = filepath.Join(dir, "nb-1-big-Data.db")
	ciPath = filepath.Join(dir, "nb-1-big-CompressionInfo.db")
	if err := os.WriteFile(dataPath, t.data, 0o644); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(ciPath, t.ci, 0o644); err != nil {
		tb.Fatal(err)
	}
	return dataPath, ciPath
}

// syntheticRows returns n bytes shaped like sstable rows: small varying
// headers, keys with shared prefixes, repeated column names, timestamps
// that grow slowly and text from a small vocabulary, so it compresses about
// as well as real tables do.
func syntheticRows(n int) []byte {
	r := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu")
	out := make([]byte, 0, n+256)
	ts := uint64(1_700_000_000_000_000)
	for row := 0; len(out) < n; row++ {
		out = append(out, 0x04, byte(row), byte(row>>8))
		out = append(out, "user:"...)
		out = binary.BigEndian.AppendUint32(out, uint32(row/7))
		ts += uint64(r.IntN(1000))
		out = binary.BigEndian.AppendUint64(out, ts)
		for c := 0; c < 3; c++ {
			out = append(out, "col_"...)
			out = append(out, byte('a'+c))
			for w := 0; w < 4; w++ {
				out = append(out, words[r.IntN(len(words))]...)
				out = append(out, ' ')
			}
			out = binary.BigEndian.AppendUint32(out, r.Uint32()) // incompressible noise
		}
	}
	return out[:n]
}

// fixtureTable is one real sstable's Data.db with its companions.
type fixtureTable struct {
	name   string
	data   string // Data.db path
	ci     string // CompressionInfo.db path, "" when uncompressed
	crc    string // CRC.db path, "" when absent
	digest string
}

func fixtureTables(t *testing.T) []fixtureTable {
	t.Helper()
	var out []fixtureTable
	for _, p := range fixtures.DataFiles(t) {
		prefix := strings.TrimSuffix(p, "Data.db")
		ft := fixtureTable{name: filepath.Base(filepath.Dir(p)), data: p, digest: prefix + "Digest.crc32"}
		if _, err := os.Stat(prefix + "CompressionInfo.db"); err == nil {
			ft.ci = prefix + "CompressionInfo.db"
		}
		if _, err := os.Stat(prefix + "CRC.db"); err == nil {
			ft.crc = prefix + "CRC.db"
		}
		out = append(out, ft)
	}
	if len(out) == 0 {
		t.Fatal("no fixture Data.db found")
	}
	return out
}

// options returns the DataOptions for a fixture: only the m* versions
// (3.x) predate the max compressed length (big na and later, bti da).
func (f fixtureTable) options() DataOptions {
	v := filepath.Base(f.data)[:2]
	return DataOptions{CompressionInfoPath: f.ci, HasMaxCompressedLength: v[0] != 'm', Verify: true}
}

// readAll scans a Data with Next calls of varying sizes, so reads start and
// end at every kind of place relative to chunk boundaries.
func readAll(t *testing.T, d *Data, step func(i int) int) []byte {
	t.Helper()
	c := d.Cursor(0)
	var out []byte
	for i := 0; c.Remaining() > 0; i++ {
		n := int(min(int64(step(i)), c.Remaining()))
		b, err := c.Next(n)
		if err != nil {
			t.Fatalf("%s: Next(%d) at %d: %v", d.Path(), n, c.Pos(), err)
		}
		out = append(out, b...)
	}
	if _, err := c.Next(1); err == nil {
		t.Fatalf("%s: Next past the end succeeded", d.Path())
	}
	return out
}

func mustReadAll(t *testing.T, r io.ReaderAt, n int64) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := r.ReadAt(b, 0); err != nil && err != io.EOF {
		t.Fatal(err)
	}
	return b
}

// copyFixture copies a fixture's Data.db and CompressionInfo.db into a temp
// dir so a test can damage them.
func copyFixture(t *testing.T, f fixtureTable) (data, ci string) {
	t.Helper()
	dir := t.TempDir()
	cp := func(src string) string {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(dir, filepath.Base(src))
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return dst
	}
	data = cp(f.data)
	if f.ci != "" {
		ci = cp(f.ci)
	}
	return data, ci
}

func crcOf(b []byte) uint32 { return crc32.ChecksumIEEE(b) }

func fixturesRoot() string { return fixtures.Root() }
