package reader

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"

	"github.com/sstabletool/sstabletool/internal/lz4fast"
)

// Compressor compresses and decompresses one Data.db chunk the way the
// Cassandra class it is named after does. Both methods append their output
// to dst (pass buf[:0] to reuse a buffer) and return the extended slice.
// Implementations are safe for concurrent use.
//
// Decompress refuses input that claims to expand beyond what the codec can
// produce from len(src) bytes, so a corrupt length never causes a large
// allocation.
type Compressor interface {
	// Name is the simple Java class name, as CompressionInfo.db stores it.
	Name() string
	Decompress(dst, src []byte) ([]byte, error)
	Compress(dst, src []byte) ([]byte, error)
}

const compressPackage = "org.apache.cassandra.io.compress."

// CRCCheckChanceOption is the compression option that was crc_check_chance
// before Cassandra 3.0 made it a table option (CASSANDRA-9839). ScyllaDB
// still writes it among the compressor options of CompressionInfo.db.
// Cassandra 3.0 to 5.0 dropped it, with a warning, before checking the
// compressor's options; only trunk (5.1, CASSANDRA-18872) refuses it. It
// changes nothing about the bytes, so it is read and ignored.
const CRCCheckChanceOption = "crc_check_chance"

// CompressorFor returns the compressor for a class name as stored in
// CompressionInfo.db or given in a table's compression options: the simple
// name ("LZ4Compressor") or the fully qualified one
// ("org.apache.cassandra.io.compress.LZ4Compressor"). Options are checked
// the way Cassandra 3.0 to 5.0 checks them: crc_check_chance is ignored
// (CRCCheckChanceOption), any other option the compressor does not know is
// an error, as is a bad value.
func CompressorFor(class string, options map[string]string) (Compressor, error) {
	name := class
	if strings.Contains(name, ".") {
		if !strings.HasPrefix(name, compressPackage) {
			return nil, fmt.Errorf("unknown compressor class %q: only Cassandra's own compressors (%s) are supported", class, knownCompressors())
		}
		name = strings.TrimPrefix(name, compressPackage)
	}
	var supported []string
	switch name {
	case "LZ4Compressor":
		supported = []string{lz4TypeOption, lz4LevelOption}
	case "ZstdCompressor":
		supported = []string{zstdLevelOption}
	case "SnappyCompressor", "DeflateCompressor", "NoopCompressor":
	default:
		return nil, fmt.Errorf("unknown compressor class %q: want one of %s", class, knownCompressors())
	}
	for k := range options {
		found := k == CRCCheckChanceOption
		for _, s := range supported {
			found = found || k == s
		}
		if !found {
			return nil, fmt.Errorf("%s: unknown compression option %q", name, k)
		}
	}
	switch name {
	case "LZ4Compressor":
		return newLZ4(options)
	case "ZstdCompressor":
		return newZstd(options)
	case "SnappyCompressor":
		return snappyCompressor{}, nil
	case "DeflateCompressor":
		return deflateCompressor{}, nil
	default:
		return noopCompressor{}, nil
	}
}

// Compressors are the compressor classes CompressorFor takes (by their
// simple names; org.apache.cassandra.io.compress. may precede them), sorted.
func Compressors() []string {
	return []string{"DeflateCompressor", "LZ4Compressor", "NoopCompressor", "SnappyCompressor", "ZstdCompressor"}
}

func knownCompressors() string { return strings.Join(Compressors(), ", ") }

// grow returns dst with room for n more bytes after len(dst).
func grow(dst []byte, n int) []byte {
	if cap(dst)-len(dst) >= n {
		return dst
	}
	out := make([]byte, len(dst), len(dst)+n)
	copy(out, dst)
	return out
}

// errExpansion reports a compressed block that claims more output than its
// codec can produce from its size: the length field is corrupt.
func errExpansion(codec string, claimed, from int) error {
	return fmt.Errorf("%s block of %d bytes claims %d uncompressed bytes, more than the format can encode", codec, from, claimed)
}

// limitedDecompressor is implemented by every compressor here: Data asks
// for at most the chunk's uncompressed length, so a corrupt chunk cannot
// make it allocate more than the chunk it describes.
type limitedDecompressor interface {
	decompressLimit(dst, src []byte, limit int) ([]byte, error)
}

func errTooLong(codec string, got, limit int) error {
	return fmt.Errorf("%s block decompresses to more than the %d bytes expected (at least %d)", codec, limit, got)
}

// --- LZ4 -------------------------------------------------------------------

const (
	lz4TypeOption  = "lz4_compressor_type"
	lz4LevelOption = "lz4_high_compressor_level"
	// lz4MaxRatio bounds LZ4 block expansion: a sequence spends at least one
	// byte per 255 bytes of match length.
	lz4MaxRatio = 256
)

// lz4Compressor matches LZ4Compressor.java: each chunk is the uncompressed
// length as a 4-byte little-endian int, then one LZ4 block.
type lz4Compressor struct {
	high  bool
	level lz4.CompressionLevel
	fast  *sync.Pool // of *lz4.Compressor, which is not safe for concurrent use
}

func newLZ4(options map[string]string) (Compressor, error) {
	c := &lz4Compressor{fast: &sync.Pool{New: func() any { return new(lz4.Compressor) }}}
	switch t := options[lz4TypeOption]; t {
	case "", "fast":
	case "high":
		c.high = true
	default:
		return nil, fmt.Errorf("LZ4Compressor: %s must be fast or high, not %q", lz4TypeOption, t)
	}
	level := 9 // Cassandra's default for "high"
	if v, ok := options[lz4LevelOption]; ok {
		l, err := strconv.Atoi(v)
		if err != nil || l < 1 || l > 17 {
			return nil, fmt.Errorf("LZ4Compressor: %s must be an integer from 1 to 17, not %q", lz4LevelOption, v)
		}
		level = l
	}
	// pierrec/lz4 levels are search depths 1<<9 .. 1<<17; lz4-java's HC
	// levels 1..17 map onto them monotonically, capped at its deepest.
	c.level = lz4.CompressionLevel(1 << (8 + min(level, 9)))
	return c, nil
}

func (c *lz4Compressor) Name() string { return "LZ4Compressor" }

func (c *lz4Compressor) Decompress(dst, src []byte) ([]byte, error) {
	return c.decompressLimit(dst, src, -1)
}

func (c *lz4Compressor) decompressLimit(dst, src []byte, limit int) ([]byte, error) {
	if len(src) < 4 {
		return dst, fmt.Errorf("LZ4 chunk of %d bytes is shorter than its 4-byte length prefix", len(src))
	}
	n := int64(int32(binary.LittleEndian.Uint32(src)))
	block := src[4:]
	if n < 0 || n > int64(len(block))*lz4MaxRatio+64 {
		return dst, errExpansion("LZ4", int(n), len(block))
	}
	if limit >= 0 && n > int64(limit) {
		return dst, errTooLong("LZ4", int(n), limit)
	}
	if n == 0 {
		// The only block that decodes to nothing is a lone zero token.
		// (pierrec/lz4's assembly decoder must not see an empty dst: it
		// dereferences it.)
		if len(block) != 1 || block[0] != 0 {
			return dst, fmt.Errorf("LZ4: %d-byte block for an empty chunk, want the single zero token", len(block))
		}
		return dst, nil
	}
	dst = grow(dst, int(n))
	out := dst[len(dst) : len(dst)+int(n)]
	got, err := lz4.UncompressBlock(block, out)
	if err != nil {
		return dst, fmt.Errorf("LZ4: %w", err)
	}
	if got != int(n) {
		return dst, fmt.Errorf("LZ4: block decompressed to %d bytes, its prefix says %d", got, n)
	}
	return dst[:len(dst)+got], nil
}

func (c *lz4Compressor) Compress(dst, src []byte) ([]byte, error) {
	bound := max(lz4.CompressBlockBound(len(src)), lz4fast.CompressBound(len(src)))
	dst = grow(dst, 4+bound)
	at := len(dst)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(src)))
	out := dst[len(dst) : len(dst)+bound]
	var n int
	var err error
	if c.high {
		hc := lz4.CompressorHC{Level: c.level}
		n, err = hc.CompressBlock(src, out)
	} else if len(src) < 64*1024+11 {
		// Cassandra's chunks: compress exactly as liblz4 does, so that
		// rewritten sstables match what Cassandra writes byte for byte.
		var b []byte
		b, err = lz4fast.Compress(out[:0], src)
		n = len(b)
	} else {
		lc := c.fast.Get().(*lz4.Compressor)
		n, err = lc.CompressBlock(src, out)
		c.fast.Put(lc)
	}
	if err != nil {
		return dst[:at], fmt.Errorf("LZ4: %w", err)
	}
	if n == 0 {
		// An empty input still needs one token byte (no literals, no
		// match) for a decoder to find a complete block.
		out[0] = 0
		n = 1
	}
	return dst[:len(dst)+n], nil
}

// --- Snappy ----------------------------------------------------------------

// snappyMaxRatio bounds Snappy block expansion: the longest copy, 64 bytes,
// takes 3 bytes to encode.
const snappyMaxRatio = 22

// snappyCompressor matches SnappyCompressor.java: each chunk is one Snappy
// block (varint length, then tagged literals and copies).
type snappyCompressor struct{}

func (snappyCompressor) Name() string { return "SnappyCompressor" }

func (s snappyCompressor) Decompress(dst, src []byte) ([]byte, error) {
	return s.decompressLimit(dst, src, -1)
}

func (snappyCompressor) decompressLimit(dst, src []byte, limit int) ([]byte, error) {
	n, err := snappy.DecodedLen(src)
	if err != nil {
		return dst, fmt.Errorf("Snappy: %w", err)
	}
	if n > len(src)*snappyMaxRatio+16 {
		return dst, errExpansion("Snappy", n, len(src))
	}
	if limit >= 0 && n > limit {
		return dst, errTooLong("Snappy", n, limit)
	}
	dst = grow(dst, n)
	out, err := snappy.Decode(dst[len(dst):len(dst)+n], src)
	if err != nil {
		return dst, fmt.Errorf("Snappy: %w", err)
	}
	return dst[:len(dst)+len(out)], nil
}

func (snappyCompressor) Compress(dst, src []byte) ([]byte, error) {
	bound := snappy.MaxEncodedLen(len(src))
	if bound < 0 {
		return dst, fmt.Errorf("Snappy: %d bytes are too many for one block", len(src))
	}
	dst = grow(dst, bound)
	out := snappy.Encode(dst[len(dst):len(dst)+bound], src)
	return dst[:len(dst)+len(out)], nil
}

// --- Deflate ---------------------------------------------------------------

// deflateMaxRatio bounds DEFLATE expansion (zlib's documented 1032:1).
const deflateMaxRatio = 1040

// deflateCompressor matches DeflateCompressor.java, which uses
// java.util.zip.Deflater/Inflater with their defaults: a zlib stream
// (2-byte header, DEFLATE data, Adler-32) at the default level.
type deflateCompressor struct{}

var (
	zlibReaders sync.Pool // of io.ReadCloser implementing zlib.Resetter
	zlibWriters = sync.Pool{New: func() any { return zlib.NewWriter(nil) }}
)

func (deflateCompressor) Name() string { return "DeflateCompressor" }

func (c deflateCompressor) Decompress(dst, src []byte) ([]byte, error) {
	return c.decompressLimit(dst, src, -1)
}

func (deflateCompressor) decompressLimit(dst, src []byte, limit int) ([]byte, error) {
	br := bytes.NewReader(src)
	var r io.ReadCloser
	if v := zlibReaders.Get(); v != nil {
		r = v.(io.ReadCloser)
		if err := r.(zlib.Resetter).Reset(br, nil); err != nil {
			return dst, fmt.Errorf("Deflate: %w", err)
		}
	} else {
		var err error
		if r, err = zlib.NewReader(br); err != nil {
			return dst, fmt.Errorf("Deflate: %w", err)
		}
	}
	defer zlibReaders.Put(r)
	bound := len(src)*deflateMaxRatio + 64
	if limit < 0 || limit > bound {
		limit = bound
	}
	start := len(dst)
	for {
		if len(dst) == cap(dst) {
			dst = grow(dst, max(len(src)*4, 4096))
		}
		n, err := r.Read(dst[len(dst):cap(dst)])
		dst = dst[:len(dst)+n]
		if len(dst)-start > limit {
			return dst, errTooLong("Deflate", len(dst)-start, limit)
		}
		if err == io.EOF {
			return dst, nil
		}
		if err != nil {
			return dst, fmt.Errorf("Deflate: %w", err)
		}
	}
}

// appendWriter is an io.Writer appending to a slice.
type appendWriter struct{ b []byte }

func (w *appendWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

func (deflateCompressor) Compress(dst, src []byte) ([]byte, error) {
	aw := &appendWriter{b: dst}
	zw := zlibWriters.Get().(*zlib.Writer)
	defer zlibWriters.Put(zw)
	zw.Reset(aw)
	if _, err := zw.Write(src); err != nil {
		return dst, fmt.Errorf("Deflate: %w", err)
	}
	if err := zw.Close(); err != nil {
		return dst, fmt.Errorf("Deflate: %w", err)
	}
	return aw.b, nil
}

// --- Zstd ------------------------------------------------------------------

const (
	zstdLevelOption = "compression_level"
	// zstdMaxRatio bounds zstd expansion: an RLE block of at most 128 KiB
	// takes 4 bytes.
	zstdMaxRatio = 32 << 10
)

// zstdCompressor matches ZstdCompressor.java: each chunk is one zstd frame,
// written with a content checksum.
type zstdCompressor struct {
	level int
	enc   func() (*zstd.Encoder, error)
}

var (
	zstdDecoder = sync.OnceValues(func() (*zstd.Decoder, error) {
		// Chunks are at most 2 GiB (a Java int); DecodeAll allocates no
		// more than the input can decode to.
		return zstd.NewReader(nil, zstd.WithDecoderMaxMemory(1<<31), zstd.WithDecoderConcurrency(0))
	})
	zstdCappedDecoder = sync.OnceValues(func() (*zstd.Decoder, error) {
		return zstd.NewReader(nil, zstd.WithDecoderMaxMemory(1<<31), zstd.WithDecoderConcurrency(0), zstd.WithDecodeAllCapLimit(true))
	})
	zstdEncodersMu sync.Mutex
	zstdEncoders   = map[zstd.EncoderLevel]func() (*zstd.Encoder, error){}
)

func newZstd(options map[string]string) (Compressor, error) {
	level := 3 // Cassandra's DEFAULT_COMPRESSION_LEVEL
	if v, ok := options[zstdLevelOption]; ok {
		l, err := strconv.Atoi(v)
		// zstd's own range, as Zstd.minCompressionLevel/maxCompressionLevel report it.
		if err != nil || l < -(1<<17) || l > 22 {
			return nil, fmt.Errorf("ZstdCompressor: %s must be an integer from -131072 to 22, not %q", zstdLevelOption, v)
		}
		level = l
	}
	el := zstd.EncoderLevelFromZstd(level)
	zstdEncodersMu.Lock()
	defer zstdEncodersMu.Unlock()
	enc, ok := zstdEncoders[el]
	if !ok {
		enc = sync.OnceValues(func() (*zstd.Encoder, error) {
			return zstd.NewWriter(nil, zstd.WithEncoderLevel(el), zstd.WithEncoderCRC(true), zstd.WithEncoderConcurrency(1))
		})
		zstdEncoders[el] = enc
	}
	return &zstdCompressor{level: level, enc: enc}, nil
}

func (c *zstdCompressor) Name() string { return "ZstdCompressor" }

func (c *zstdCompressor) Decompress(dst, src []byte) ([]byte, error) {
	return c.decompressLimit(dst, src, -1)
}

func (c *zstdCompressor) decompressLimit(dst, src []byte, limit int) ([]byte, error) {
	decoder := zstdDecoder
	if limit >= 0 {
		// The capped decoder stops at cap(dst): give it exactly the room
		// the caller allows, no more than zstd can produce from src.
		limit = min(limit, len(src)*zstdMaxRatio+1024)
		decoder = zstdCappedDecoder
		dst = grow(dst, limit)
		dst = dst[: len(dst) : len(dst)+limit]
	}
	d, err := decoder()
	if err != nil {
		return dst, fmt.Errorf("Zstd: %w", err)
	}
	out, err := d.DecodeAll(src, dst)
	if err != nil {
		return dst, fmt.Errorf("Zstd: %w", err)
	}
	return out, nil
}

func (c *zstdCompressor) Compress(dst, src []byte) ([]byte, error) {
	e, err := c.enc()
	if err != nil {
		return dst, fmt.Errorf("Zstd: %w", err)
	}
	return e.EncodeAll(src, dst), nil
}

// --- Noop ------------------------------------------------------------------

// noopCompressor matches NoopCompressor.java: chunks are stored as they are
// but still get a CRC each.
type noopCompressor struct{}

func (noopCompressor) Name() string { return "NoopCompressor" }
func (noopCompressor) Decompress(dst, src []byte) ([]byte, error) {
	return append(dst, src...), nil
}
func (noopCompressor) decompressLimit(dst, src []byte, limit int) ([]byte, error) {
	if limit >= 0 && len(src) > limit {
		return dst, errTooLong("Noop", len(src), limit)
	}
	return append(dst, src...), nil
}
func (noopCompressor) Compress(dst, src []byte) ([]byte, error) {
	return append(dst, src...), nil
}
