// Package benchbase is what the benchmarks share: the tables they run on
// and the floor they are measured against. The floor is a pass that does
// only what no reader of a compressed Data.db can avoid: map the file,
// check each stored chunk's CRC32 and LZ4-decompress it, in one pass
// (Floor.Read); for a rewrite, also compress every chunk again and take the
// CRC32 of the result (Floors.Rewrite). It is written against the libraries
// directly (edsrzf/mmap-go, pierrec/lz4, internal/lz4fast, hash/crc32), not
// through the reader, so that it stays a floor when the reader changes. A
// benchmark that times its own work and the floor in the same loop reports
// shares that survive a noisy shared machine.
package benchbase

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	mmap "github.com/edsrzf/mmap-go"
	"github.com/pierrec/lz4/v4"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/internal/fixtures"
	"github.com/sstabletool/sstabletool/internal/generate"
	"github.com/sstabletool/sstabletool/internal/lz4fast"
	"github.com/sstabletool/sstabletool/reader"
	"github.com/sstabletool/sstabletool/workload"
)

// BenchEnv names the big tables a benchmark runs on instead of its
// default: comma-separated Data.db paths, for example one made by
// `sstabletool generate --format nc --partitions 300000` (the table of
// the figures in docs/performance.md).
const BenchEnv = "SSTABLE_BENCH"

// GeneratedPartitions is the size of the default generated table: the demo
// profile as nc, LZ4 in 16 KiB chunks, about 4 MB of uncompressed Data.db,
// so that a benchmark finishes in seconds when nothing bigger is named.
const GeneratedPartitions = 1000

var generated struct {
	once sync.Once
	path string
	err  error
}

// Generated returns the Data.db of the default table (GeneratedPartitions
// partitions of the demo profile, nc, LZ4): made once per test binary in a
// temporary directory that lives as long as the process (benchmarks of
// several GOMAXPROCS values share it; the operating system's temporary
// directory is cleaned by it, not by the test).
func Generated(b testing.TB) string {
	generated.once.Do(func() {
		dir, err := os.MkdirTemp("", "sstabletool-bench-")
		if err != nil {
			generated.err = err
			return
		}
		p, err := workload.ParseProfile([]byte(generate.DemoProfile), "demo")
		if err != nil {
			generated.err = err
			return
		}
		p.Partitions = GeneratedPartitions
		res, err := generate.Generate(p, filepath.Join(dir, "demo"), generate.Options{Version: format.MustVersion("nc")})
		if err != nil {
			generated.err = err
			return
		}
		generated.path = res.DataPath
	})
	if generated.err != nil {
		b.Fatal(generated.err)
	}
	return generated.path
}

// Big returns the tables named in SSTABLE_BENCH, or nil.
func Big() []string {
	env := os.Getenv(BenchEnv)
	if env == "" {
		return nil
	}
	return strings.Split(env, ",")
}

// Table is the one table a benchmark of whole commands runs on: the first
// of SSTABLE_BENCH, else the generated one.
func Table(b testing.TB) string {
	if big := Big(); len(big) > 0 {
		return big[0]
	}
	return Generated(b)
}

// Tables are the sstables the read-path benchmarks run on: those named in
// SSTABLE_BENCH when it is set; otherwise the generated table and the
// largest real fixtures (compressed legacy_nc_clust, an uncompressed me
// table), when ../shared/testdata is there.
func Tables(b testing.TB) []string {
	if big := Big(); len(big) > 0 {
		return big
	}
	out := []string{Generated(b)}
	if r := fixtures.Root(); r != "" {
		out = append(out,
			filepath.Join(r, "cassandra/nc/legacy_nc_clust/nc-1-big-Data.db"),
			filepath.Join(r, "cassandra/me-collections/utf8_with_special_chars-910a4fc0a1c711eeae8c6d2c86545d91/me-1-big-Data.db"))
	}
	return out
}

// Name is the sub-benchmark name of a table: its folder.
func Name(p string) string { return filepath.Base(filepath.Dir(p)) }

// Floor is the floor of one LZ4-compressed Data.db: where its chunks lie,
// from CompressionInfo.db.
type Floor struct {
	path        string
	chunks      []storedChunk
	chunkLength int
	Length      int64 // uncompressed Data.db bytes
	Chunks      int   // chunks in the file
}

// storedChunk is one chunk as stored: its file offset and its stored length
// (without the CRC after it); raw when stored at or above the max
// compressed length.
type storedChunk struct {
	off    int64
	stored int
	raw    bool
}

// NewFloor reads where d's chunks lie; it returns nil for an uncompressed
// table or one compressed with anything but LZ4, which have no floor here.
func NewFloor(b testing.TB, d *reader.Data) *Floor {
	f, err := OpenFloor(d)
	if err != nil {
		b.Fatal(err)
	}
	return f
}

// OpenFloor is NewFloor for a program (the whole-process floor,
// ./internal/benchbase/floor): nil and no error for a table with no floor.
func OpenFloor(d *reader.Data) (*Floor, error) {
	ci := d.Info()
	if ci == nil || !strings.HasSuffix(ci.Compressor, "LZ4Compressor") {
		return nil, nil
	}
	st, err := os.Stat(d.Path())
	if err != nil {
		return nil, err
	}
	f := &Floor{path: d.Path(), chunkLength: ci.ChunkLength, Length: d.Length(), Chunks: len(ci.ChunkOffsets)}
	for i, off := range ci.ChunkOffsets {
		end := st.Size()
		if i+1 < len(ci.ChunkOffsets) {
			end = ci.ChunkOffsets[i+1]
		}
		n := int(end - off - 4)
		if off < 0 || n < 0 || end > st.Size() {
			return nil, fmt.Errorf("%s: chunk %d at %d..%d lies outside the file's %d bytes (CompressionInfo.db)", d.Path(), i, off, end, st.Size())
		}
		f.chunks = append(f.chunks, storedChunk{off: off, stored: n, raw: ci.MaxCompressedLength > 0 && n >= ci.MaxCompressedLength})
	}
	return f, nil
}

// Buffers are the floor's reusable buffers: one decompressed chunk and one
// recompressed one.
type Buffers struct{ plain, packed []byte }

// NewBuffers returns buffers for f's chunks.
func (f *Floor) NewBuffers() *Buffers {
	return &Buffers{plain: make([]byte, f.chunkLength), packed: make([]byte, 0, 4+lz4fast.CompressBound(f.chunkLength))}
}

// Times are what runs of a work took: wall time and the process's CPU
// time (every thread), summed, and the shortest run's wall time.
type Times struct{ Wall, CPU, BestWall time.Duration }

// Add returns the times of t's runs and u's.
func (t Times) Add(u Times) Times {
	best := t.BestWall
	if best == 0 || (u.BestWall > 0 && u.BestWall < best) {
		best = u.BestWall
	}
	return Times{t.Wall + u.Wall, t.CPU + u.CPU, best}
}

// Measure runs fn and returns its times.
func Measure(fn func()) Times {
	t0, c0 := time.Now(), CPUTime()
	fn()
	d := time.Since(t0)
	return Times{d, CPUTime() - c0, d}
}

// Read is the read floor, timed: map Data.db, then check the CRC32 of every
// stored chunk and LZ4-decompress it, in one pass; unmap.
func (f *Floor) Read(b testing.TB, buf *Buffers) Times {
	return Measure(func() { fatal(b, f.Pass(buf, false)) })
}

func fatal(b testing.TB, err error) {
	if err != nil {
		b.Fatal(err)
	}
}

// Pass is one pass of the floor on the calling goroutine, untimed: the
// read floor, and with rewrite the rewrite floor.
func (f *Floor) Pass(buf *Buffers, rewrite bool) error {
	m, file, err := f.mapFile()
	if err != nil {
		return err
	}
	defer file.Close()
	defer m.Unmap()
	sum, err := f.span(m, 0, len(f.chunks), buf, rewrite)
	Sink ^= sum
	return err
}

// span takes chunks [from, to) of the mapped file m through the floor:
// each CRC-checked and decompressed, and with rewrite compressed again
// and the CRC32 of the result taken (their XOR returned).
func (f *Floor) span(m []byte, from, to int, buf *Buffers, rewrite bool) (uint32, error) {
	var sum uint32
	for i := from; i < to; i++ {
		plain, err := f.chunk(m, i, buf)
		if err != nil {
			return sum, err
		}
		if rewrite {
			packed := binary.LittleEndian.AppendUint32(buf.packed[:0], uint32(len(plain)))
			packed, err := lz4fast.Compress(packed, plain)
			if err != nil {
				return sum, err
			}
			sum ^= crc32.ChecksumIEEE(packed)
			buf.packed = packed
		}
	}
	return sum, nil
}

// Sink keeps the floor's CRCs of recompressed chunks observable.
var Sink uint32

// ChunkAt is the lookup floor, timed: chunk i of an already mapped file
// CRC-checked and decompressed (what reading one partition's header costs
// at the least).
func (f *Floor) ChunkAt(b testing.TB, m []byte, i int, buf *Buffers) {
	_, err := f.chunk(m, i, buf)
	fatal(b, err)
}

// Map maps Data.db for ChunkAt; unmap it with the returned function.
func (f *Floor) Map(b testing.TB) ([]byte, func()) {
	m, file, err := f.mapFile()
	fatal(b, err)
	return m, func() { m.Unmap(); file.Close() }
}

func (f *Floor) mapFile() (mmap.MMap, *os.File, error) {
	file, err := os.Open(f.path)
	if err != nil {
		return nil, nil, err
	}
	m, err := mmap.Map(file, mmap.RDONLY, 0)
	if err != nil {
		file.Close()
		return nil, nil, err
	}
	return m, file, nil
}

// chunk checks chunk i's CRC32 and decompresses it into buf.plain.
func (f *Floor) chunk(m []byte, i int, buf *Buffers) ([]byte, error) {
	c := f.chunks[i]
	stored := m[c.off : c.off+int64(c.stored)]
	if crc32.ChecksumIEEE(stored) != binary.BigEndian.Uint32(m[c.off+int64(c.stored):]) {
		return nil, fmt.Errorf("%s: chunk %d: CRC32 mismatch", f.path, i)
	}
	if c.raw {
		return stored, nil
	}
	n := int(binary.LittleEndian.Uint32(stored))
	if n > len(buf.plain) {
		return nil, fmt.Errorf("%s: chunk %d: %d uncompressed bytes, more than a chunk", f.path, i, n)
	}
	if n == 0 {
		return buf.plain[:0], nil
	}
	got, err := lz4.UncompressBlock(stored[4:], buf.plain[:n])
	if err != nil || got != n {
		return nil, fmt.Errorf("%s: chunk %d: LZ4: %d of %d bytes: %v", f.path, i, got, n, err)
	}
	return buf.plain[:n], nil
}

// Report reports a work's shares of its floor over the same rounds, the
// floor measured on one core (one) and on every core (all; zero Times if
// not measured): share-% is the one-core floor's wall time over the
// work's, summed (100% is the floor's speed), all-share-% the same for
// the floor on every core; best-share-% and best-all-share-% the same for
// the shortest round of each, which the other tenants of a busy machine
// disturb least; cpu-share-% the one-core floor's CPU time over the
// work's, summed (with several cores it counts what the work spent on
// all of them, so it shows the cost of parallel work, not its speed).
// With the floors' and the work's MB/s of uncompressed Data.db (length
// bytes a round).
func Report(b *testing.B, length int64, one, all, work Times) {
	mb := float64(length) * float64(b.N) / 1e6
	b.ReportMetric(mb/one.Wall.Seconds(), "floor-MB/s")
	b.ReportMetric(mb/work.Wall.Seconds(), "MB/s")
	b.ReportMetric(Share(one.Wall, work.Wall), "share-%")
	b.ReportMetric(Share(one.BestWall, work.BestWall), "best-share-%")
	if all.Wall > 0 {
		b.ReportMetric(mb/all.Wall.Seconds(), "all-floor-MB/s")
		b.ReportMetric(Share(all.Wall, work.Wall), "all-share-%")
		b.ReportMetric(Share(all.BestWall, work.BestWall), "best-all-share-%")
	}
	if work.CPU > 0 {
		b.ReportMetric(Share(one.CPU, work.CPU), "cpu-share-%")
	}
}

// Share is 100 × floor / work: a work's speed as a percentage of its
// floor's.
func Share(floor, work time.Duration) float64 {
	return 100 * floor.Seconds() / work.Seconds()
}
