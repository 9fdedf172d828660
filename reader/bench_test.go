package reader

import (
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/pierrec/lz4/v4"
	"github.com/sstabletool/sstabletool/internal/fixtures"
)

// The benchmarks compare a full sequential Cursor scan with the bare cost
// of decompressing the same chunks (BenchmarkBareLZ4), measured in the same
// run: the ratio is the cursor's overhead (CRC, chunk lookup, slicing).
//
//	go test ./reader -run '^$' -bench 'Scan|Bare' -benchmem -benchtime 5x

const synthSize = 64 << 20

var (
	synthMu    sync.Mutex
	synthPlain []byte
	synthTab   compressedTable
)

// synthetic builds, once per process, a ~64 MiB table of row-shaped bytes
// compressed with our LZ4 in 16 KiB chunks with a CRC after each.
func synthetic(b *testing.B) ([]byte, compressedTable) {
	synthMu.Lock()
	defer synthMu.Unlock()
	if synthPlain == nil {
		lz, _ := CompressorFor("LZ4Compressor", nil)
		synthPlain = syntheticRows(synthSize)
		synthTab = buildCompressed(b, synthPlain, lz, 16384, 1<<31-1)
	}
	return synthPlain, synthTab
}

// benchInput is one Data.db to scan.
type benchInput struct {
	name string
	open func(b *testing.B, a Access) *Data
	// chunks are the stored LZ4 chunks for the bare baseline (nil when
	// uncompressed), lengths their uncompressed sizes.
	chunks  [][]byte
	lengths []int
}

func benchInputs(b *testing.B) []benchInput {
	plain, tab := synthetic(b)
	dir := b.TempDir()
	dataPath, ciPath := writeTable(b, dir, tab)
	plainPath := filepath.Join(dir, "me-1-big-Data.db")
	if err := os.WriteFile(plainPath, plain, 0o644); err != nil {
		b.Fatal(err)
	}
	fixDir := fixtures.Table(b, "nc", "legacy_nc_clust")
	fixData := filepath.Join(fixDir, "nc-1-big-Data.db")
	fixCI := filepath.Join(fixDir, "nc-1-big-CompressionInfo.db")
	fixBytes, _ := os.ReadFile(fixData)
	fixCIBytes, _ := os.ReadFile(fixCI)
	fixInfo, err := DecodeCompressionInfo(fixCIBytes, true)
	if err != nil {
		b.Fatal(err)
	}
	opener := func(data, ci string) func(*testing.B, Access) *Data {
		return func(b *testing.B, a Access) *Data {
			d, err := OpenData(data, a, DataOptions{CompressionInfoPath: ci, HasMaxCompressedLength: true, Verify: true})
			if err != nil {
				b.Fatal(err)
			}
			return d
		}
	}
	synthChunks, synthLens := storedChunks(tab.data, tab.info)
	fixChunks, fixLens := storedChunks(fixBytes, fixInfo)
	return []benchInput{
		{name: "synthetic64MiB-lz4", open: opener(dataPath, ciPath), chunks: synthChunks, lengths: synthLens},
		{name: "synthetic64MiB-uncompressed", open: opener(plainPath, "")},
		{name: "fixture-nc_clust-lz4", open: opener(fixData, fixCI), chunks: fixChunks, lengths: fixLens},
	}
}

func storedChunks(data []byte, info *CompressionInfo) (chunks [][]byte, lengths []int) {
	for i, off := range info.ChunkOffsets {
		end := int64(len(data))
		if i+1 < len(info.ChunkOffsets) {
			end = info.ChunkOffsets[i+1]
		}
		chunks = append(chunks, data[off:end-4])
		lengths = append(lengths, int(min(int64(info.ChunkLength), info.DataLength-int64(i)*int64(info.ChunkLength))))
	}
	return chunks, lengths
}

// scanSizes imitate a partition decoder: flags, vints, short keys and
// values, the odd long cell.
var scanSizes = [...]int{1, 8, 2, 33, 4, 120, 1, 1, 16, 700}

func scan(b *testing.B, d *Data) {
	c := d.Cursor(0)
	for i := 0; ; i++ {
		rem := c.Remaining()
		if rem == 0 {
			return
		}
		if _, err := c.Next(int(min(int64(scanSizes[i%len(scanSizes)]), rem))); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkScan(b *testing.B) {
	for _, in := range benchInputs(b) {
		for _, a := range []Access{Mmap, Buffered} {
			b.Run(in.name+"/"+a.String(), func(b *testing.B) {
				d := in.open(b, a)
				defer d.Close()
				scan(b, d) // fault the mapping in / warm the page cache
				b.SetBytes(d.Length())
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					scan(b, d)
				}
			})
		}
	}
}

// BenchmarkBareLZ4 is the floor for a compressed scan: pierrec LZ4 block
// decompression of the same stored chunks into one reused buffer, with no
// CRC, no file access and no cursor.
func BenchmarkBareLZ4(b *testing.B) {
	for _, in := range benchInputs(b) {
		if in.chunks == nil {
			continue
		}
		b.Run(in.name, func(b *testing.B) {
			var total int64
			for _, n := range in.lengths {
				total += int64(n)
			}
			out := make([]byte, 16384)
			b.SetBytes(total)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for j, ch := range in.chunks {
					n := int(binary.LittleEndian.Uint32(ch))
					if _, err := lz4.UncompressBlock(ch[4:], out[:n]); err != nil {
						b.Fatal(err)
					}
					_ = in.lengths[j]
				}
			}
		})
	}
}

// BenchmarkBareCRC is the other fixed cost of a verified scan: CRC32 of
// every stored chunk.
func BenchmarkBareCRC(b *testing.B) {
	for _, in := range benchInputs(b) {
		if in.chunks == nil {
			continue
		}
		b.Run(in.name, func(b *testing.B) {
			var total int64
			for _, n := range in.lengths {
				total += int64(n)
			}
			b.SetBytes(total)
			for i := 0; i < b.N; i++ {
				for _, ch := range in.chunks {
					crc32.ChecksumIEEE(ch)
				}
			}
		})
	}
}

// BenchmarkScanOverBare interleaves a Cursor scan and the bare LZ4
// decompression of the synthetic table in every iteration, so load from
// other processes hits both alike, and reports their time ratio
// (scan/bare; 1.0 would mean the cursor costs nothing beyond LZ4).
func BenchmarkScanOverBare(b *testing.B) {
	in := benchInputs(b)[0]
	for _, v := range []struct {
		name   string
		a      Access
		verify bool
	}{{"mmap", Mmap, true}, {"buffered", Buffered, true}, {"mmap-noverify", Mmap, false}} {
		b.Run(v.name, func(b *testing.B) {
			d := in.open(b, v.a)
			defer d.Close()
			d.verify = v.verify
			out := make([]byte, 16384)
			var scanT, bareT time.Duration
			scan(b, d) // fault the mapping in / warm the page cache
			b.SetBytes(d.Length())
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				for _, ch := range in.chunks {
					n := int(binary.LittleEndian.Uint32(ch))
					if _, err := lz4.UncompressBlock(ch[4:], out[:n]); err != nil {
						b.Fatal(err)
					}
				}
				t1 := time.Now()
				scan(b, d)
				scanT += time.Since(t1)
				bareT += t1.Sub(t0)
			}
			b.ReportMetric(float64(scanT)/float64(bareT), "scan/bare")
			b.ReportMetric(float64(d.Length())*float64(b.N)/scanT.Seconds()/1e6, "scanMB/s")
			b.ReportMetric(float64(d.Length())*float64(b.N)/bareT.Seconds()/1e6, "bareMB/s")
		})
	}
}
