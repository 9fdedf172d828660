package writer

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"math"
	"strconv"

	"github.com/sstabletool/sstabletool/reader"
)

// NoCompressionRatio is what Statistics.db records for an uncompressed
// Data.db (MetadataCollector.NO_COMPRESSION_RATIO).
const NoCompressionRatio = -1.0

// DefaultCRCChunkSize is the chunk size of CRC.db for uncompressed Data.db:
// SequentialWriter's default buffer (ChecksummedSequentialWriter).
const DefaultCRCChunkSize = 64 << 10

// Compression says how Data.db is compressed; a nil *Compression means
// uncompressed (with CRC.db).
type Compression struct {
	// Class is the compressor's class name as CompressionInfo.db stores it
	// ("LZ4Compressor").
	Class string
	// Options and OptionKeys (their order in the file) are the compressor's
	// own options.
	Options    map[string]string
	OptionKeys []string
	// ChunkLength is the number of uncompressed bytes per chunk.
	ChunkLength int
	// MaxCompressedLength is the threshold at or above which a chunk is
	// stored raw (na and later); math.MaxInt32 means never, Cassandra's
	// default (min_compress_ratio 0).
	MaxCompressedLength int
}

// CompressionFrom returns the compression settings of an existing
// CompressionInfo.db, so a rewritten sstable keeps them.
func CompressionFrom(ci *reader.CompressionInfo) *Compression {
	if ci == nil {
		return nil
	}
	mcl := ci.MaxCompressedLength
	if mcl == 0 {
		mcl = math.MaxInt32
	}
	return &Compression{Class: ci.Compressor, Options: ci.Options, OptionKeys: ci.OptionKeys,
		ChunkLength: ci.ChunkLength, MaxCompressedLength: mcl}
}

// DataResult is what writing Data.db produced besides the file itself.
type DataResult struct {
	// Info is CompressionInfo.db for a compressed Data.db, nil otherwise.
	Info *reader.CompressionInfo
	// Checksums is CRC.db for an uncompressed Data.db, nil otherwise.
	Checksums *reader.ChunkChecksums
	// Digest is the CRC32 of the whole file (Digest.crc32).
	Digest uint32
	// Length is the uncompressed length, FileSize the on-disk one.
	Length, FileSize int64
	// CompressedBytes sums the stored chunk lengths without their CRCs, as
	// the compression ratio counts them.
	CompressedBytes int64
}

// CompressionRatio is Statistics.db's compression ratio for this Data.db.
func (r *DataResult) CompressionRatio() float64 {
	if r.Info == nil || r.Length == 0 {
		return NoCompressionRatio
	}
	return float64(r.CompressedBytes) / float64(r.Length)
}

// DataWriter writes the uncompressed bytes of Data.db given to Write as
// Cassandra's CompressedSequentialWriter or ChecksummedSequentialWriter
// would: in chunks, each compressed and followed by its CRC32 (raw when
// compression does not reach MaxCompressedLength), or raw with one CRC32
// per 64 KiB in CRC.db.
type DataWriter struct {
	out       io.Writer
	digest    hash.Hash32
	comp      *Compression
	codec     reader.Compressor
	hasMaxLen bool // the version stores MaxCompressedLength (na+)
	chunk     []byte
	cbuf      []byte
	pos       int64 // uncompressed bytes accepted
	filePos   int64
	offsets   []int64
	crcs      []uint32
	stored    int64
	err       error
	finished  bool
}

// NewDataWriter writes Data.db to out. comp nil means uncompressed.
// hasMaxCompressedLength is the version's flag: before na every chunk is
// stored compressed whatever its size.
func NewDataWriter(out io.Writer, comp *Compression, hasMaxCompressedLength bool) (*DataWriter, error) {
	w := &DataWriter{out: out, digest: crc32.NewIEEE(), comp: comp, hasMaxLen: hasMaxCompressedLength}
	size := DefaultCRCChunkSize
	if comp != nil {
		codec, err := reader.CompressorFor(comp.Class, comp.Options)
		if err != nil {
			return nil, err
		}
		if comp.ChunkLength <= 0 || comp.ChunkLength&(comp.ChunkLength-1) != 0 || comp.ChunkLength > 1<<30 {
			return nil, fmt.Errorf("writer: chunk length %d is not a power of two up to 1 GiB", comp.ChunkLength)
		}
		if comp.MaxCompressedLength <= 0 {
			return nil, fmt.Errorf("writer: max compressed length %d must be positive", comp.MaxCompressedLength)
		}
		w.codec = codec
		size = comp.ChunkLength
	}
	w.chunk = make([]byte, 0, size)
	return w, nil
}

// Pos is the uncompressed position: the number of bytes written so far.
func (w *DataWriter) Pos() int64 { return w.pos }

// Write accepts uncompressed Data.db bytes.
func (w *DataWriter) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	if w.finished {
		return 0, errors.New("writer: Data.db write after Finish")
	}
	n := len(p)
	for len(p) > 0 {
		room := cap(w.chunk) - len(w.chunk)
		if room == 0 {
			if err := w.flushChunk(); err != nil {
				return n - len(p), err
			}
			continue
		}
		k := min(room, len(p))
		w.chunk = append(w.chunk, p[:k]...)
		p = p[k:]
		w.pos += int64(k)
	}
	return n, nil
}

// WriteByte accepts one uncompressed byte.
func (w *DataWriter) WriteByte(b byte) error {
	if len(w.chunk) < cap(w.chunk) && w.err == nil && !w.finished {
		w.chunk = append(w.chunk, b)
		w.pos++
		return nil
	}
	_, err := w.Write([]byte{b})
	return err
}

func (w *DataWriter) emit(b []byte) error {
	if _, err := w.out.Write(b); err != nil {
		w.err = fmt.Errorf("writer: Data.db: %w", err)
		return w.err
	}
	w.digest.Write(b)
	w.filePos += int64(len(b))
	return nil
}

func (w *DataWriter) flushChunk() error {
	if len(w.chunk) == 0 {
		return nil
	}
	if w.codec == nil {
		w.crcs = append(w.crcs, crc32.ChecksumIEEE(w.chunk))
		err := w.emit(w.chunk)
		w.chunk = w.chunk[:0]
		return err
	}
	var err error
	w.cbuf, err = w.codec.Compress(w.cbuf[:0], w.chunk)
	if err != nil {
		w.err = fmt.Errorf("writer: compressing Data.db chunk %d: %w", len(w.offsets), err)
		return w.err
	}
	toWrite := w.cbuf
	if max := w.comp.MaxCompressedLength; w.hasMaxLen && len(w.cbuf) >= max {
		// Not worth compressing: store the raw bytes, zero-padded up to
		// the threshold when shorter (only the last chunk can be), so the
		// reader recognises a raw chunk by its stored length.
		toWrite = w.chunk
		if len(w.chunk) < max {
			w.cbuf = append(w.cbuf[:0], w.chunk...)
			for len(w.cbuf) < max {
				w.cbuf = append(w.cbuf, 0)
			}
			toWrite = w.cbuf
		}
	}
	w.offsets = append(w.offsets, w.filePos)
	w.stored += int64(len(toWrite))
	crc := crc32.ChecksumIEEE(toWrite)
	if err := w.emit(toWrite); err != nil {
		return err
	}
	var cb [4]byte
	binary.BigEndian.PutUint32(cb[:], crc)
	w.chunk = w.chunk[:0]
	return w.emit(cb[:])
}

// Finish writes the last chunk and returns what the other components need.
func (w *DataWriter) Finish() (*DataResult, error) {
	if w.err != nil {
		return nil, w.err
	}
	if w.finished {
		return nil, errors.New("writer: Finish called twice")
	}
	if err := w.flushChunk(); err != nil {
		return nil, err
	}
	w.finished = true
	r := &DataResult{Digest: w.digest.Sum32(), Length: w.pos, FileSize: w.filePos, CompressedBytes: w.stored}
	if w.codec == nil {
		r.Checksums = &reader.ChunkChecksums{ChunkSize: cap(w.chunk), CRCs: w.crcs}
		return r, nil
	}
	offsets := w.offsets
	if len(offsets) == 0 {
		// Cassandra's reader wants at least one chunk; an empty Data.db
		// never happens for a real sstable, but keep the file consistent.
		offsets = []int64{0}
	}
	mcl := 0
	if w.hasMaxLen {
		mcl = w.comp.MaxCompressedLength
	}
	r.Info = &reader.CompressionInfo{Compressor: w.comp.Class, Options: w.comp.Options, OptionKeys: w.comp.OptionKeys,
		ChunkLength: w.comp.ChunkLength, MaxCompressedLength: mcl, DataLength: w.pos, ChunkOffsets: offsets}
	if r.Info.Options == nil {
		r.Info.Options = map[string]string{}
	}
	return r, nil
}

// DigestText is Digest.crc32's content: the CRC32 as unsigned decimal text.
func DigestText(crc uint32) []byte { return strconv.AppendUint(nil, uint64(crc), 10) }

// TOCText is TOC.txt's content: one component name per line.
func TOCText(components []string) []byte {
	var b []byte
	for _, c := range components {
		b = append(b, c...)
		b = append(b, '\n')
	}
	return b
}
