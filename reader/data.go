package reader

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"sync"
	"sync/atomic"

	"github.com/sstabletool/sstabletool/corrupt"
)

const dataComponent = "Data.db"

// uncompressedWindow is how much of an uncompressed Data.db a Buffered
// cursor reads at a time. Mapped files need no window: the whole mapping is
// one "chunk".
const uncompressedWindow = 256 << 10

// DataOptions says how to read a Data.db.
type DataOptions struct {
	// CompressionInfoPath is the table's CompressionInfo.db; "" means
	// Data.db is not compressed.
	CompressionInfoPath string
	// HasMaxCompressedLength is the version's flag (na and later):
	// CompressionInfo.db stores a max compressed length, and chunks stored
	// at or above it hold raw bytes.
	HasMaxCompressedLength bool
	// Verify checks each compressed chunk's CRC32 before using it. Callers
	// should default to true; Cassandra's crc_check_chance is 1.0.
	Verify bool
	// ChecksumsPath is the table's CRC.db, for an uncompressed Data.db:
	// with Verify set, each chunk of CRC.db's chunk size is checked against
	// its CRC when first read. Cassandra's own read path skips this (only
	// its verifier reads CRC.db), but a dump must not print a flipped byte
	// as data. "" reads unchecked.
	ChecksumsPath string
}

// Data is a Data.db seen as its uncompressed bytes. For a compressed table
// each chunk is located through CompressionInfo.db, checked against the
// CRC32 stored after it (when Verify is set), and decompressed on demand.
//
// Chunk layout (CompressedSequentialWriter.java, CompressedChunkReader.java):
// chunk i starts at ChunkOffsets[i] and holds next-offset − offset − 4
// stored bytes (the last chunk ends 4 bytes before the end of the file),
// followed by the big-endian CRC32 of those stored bytes. A chunk whose
// stored length is at least the max compressed length holds the raw bytes;
// a raw last chunk may be zero-padded up to that length.
type Data struct {
	f      File
	path   string
	mapped []byte // the whole file for Mmap access, else nil
	length int64  // uncompressed length
	// lengthFixed is set when length comes from the chunks, not from
	// CompressionInfo.db's damaged data length (lengthFromChunks).
	lengthFixed bool

	info      *CompressionInfo // nil when uncompressed
	crcs      *ChunkChecksums  // CRC.db of an uncompressed Data.db, when checked
	crcPath   string
	comp      Compressor
	threshold int64 // stored length at which a chunk is raw
	verify    bool
	// checked has a bit per compressed chunk, set once its CRC32 matched
	// (in a read or in VerifyChunks): a later read of the chunk, by any
	// cursor, takes it as checked (the bytes are the file's, which a
	// reader does not change) rather than taking its CRC again. So each
	// chunk's CRC32 is taken once per Data: verify's structure walk after
	// its checksum pass takes none, and the chunk two segments of a walk
	// on every core share (sstable.Segmented) is checked by the first
	// worker to reach it (two reaching it at the same moment may both).
	checked []atomic.Uint32
	// sums holds each checked chunk's CRC32 (its bit in checked set
	// after), so that VerifyChunksDigest puts the file's digest together
	// without touching the chunks again: a load from each chunk's page
	// of a mapping costs about a microsecond once the walk has moved on.
	sums     []atomic.Uint32
	chunkLen int64 // uncompressed bytes per chunk (or per window)

	mu sync.Mutex // guards rc for ReadAt
	rc *Cursor
}

// OpenData opens Data.db (and its CompressionInfo.db when o names one).
// It checks, before any chunk is read, that every chunk the
// CompressionInfo.db describes lies inside Data.db.
func OpenData(dataPath string, a Access, o DataOptions) (*Data, error) {
	var ci []byte
	if o.CompressionInfoPath != "" {
		var err error
		if ci, err = ReadFile(o.CompressionInfoPath); err != nil {
			return nil, fmt.Errorf("reading compression info: %w", err)
		}
	}
	var crcs *ChunkChecksums
	if o.CompressionInfoPath == "" && o.ChecksumsPath != "" && o.Verify {
		b, err := ReadFile(o.ChecksumsPath)
		if err != nil {
			return nil, fmt.Errorf("reading CRC.db: %w", err)
		}
		if crcs, err = DecodeChecksums(b); err != nil {
			return nil, corrupt.WithFile(err, o.ChecksumsPath)
		}
	}
	f, err := Open(dataPath, a)
	if err != nil {
		return nil, err
	}
	d, err := newData(f, o, ci)
	if err != nil {
		f.Close()
		return nil, err
	}
	if crcs != nil {
		d.crcs, d.crcPath = crcs, o.ChecksumsPath
		d.chunkLen = int64(crcs.ChunkSize)
	}
	return d, nil
}

// ReadFile reads a metadata component whole, like os.ReadFile, but refuses
// anything that is not a regular file (reading a FIFO would block forever).
func ReadFile(path string) ([]byte, error) {
	f, err := Open(path, Buffered)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, f.Size())
	if _, err := f.ReadAt(b, 0); err != nil && err != io.EOF {
		return nil, err
	}
	return b, nil
}

// newData builds a Data over an open file; ci is the CompressionInfo.db
// content when o.CompressionInfoPath is set.
func newData(f File, o DataOptions, ci []byte) (*Data, error) {
	d := &Data{f: f, path: f.Path(), verify: o.Verify}
	if m, ok := f.(Mapped); ok {
		d.mapped = m.Bytes()
	}
	if o.CompressionInfoPath == "" {
		d.length = f.Size()
		d.chunkLen = uncompressedWindow
		if d.mapped != nil {
			d.chunkLen = max(d.length, 1)
		}
		return d, nil
	}
	info, err := DecodeCompressionInfo(ci, o.HasMaxCompressedLength)
	if err != nil {
		return nil, corrupt.WithFile(err, o.CompressionInfoPath)
	}
	comp, err := CompressorFor(info.Compressor, info.Options)
	if err != nil {
		return nil, corrupt.New(o.CompressionInfoPath, compressionInfoComponent, 0, "a compressor Cassandra ships", err)
	}
	d.info, d.comp = info, comp
	d.checked = make([]atomic.Uint32, (len(info.ChunkOffsets)+31)/32)
	d.sums = make([]atomic.Uint32, len(info.ChunkOffsets))
	d.threshold = info.rawThreshold(o.HasMaxCompressedLength)
	d.chunkLen = int64(info.ChunkLength)
	d.length = info.DataLength
	if err := d.checkChunkBounds(o.CompressionInfoPath); err != nil {
		return nil, err
	}
	// More chunks than the length needs, beyond the one empty chunk a
	// writer may leave at the end, or a zero length (a zeroed field) over
	// chunks that hold data: the stored length is damaged.
	if n := len(info.ChunkOffsets); n > info.DataChunks()+1 || info.DataLength == 0 {
		if err := d.lengthFromChunks(o.CompressionInfoPath); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// lengthFromChunks replaces a data length that the chunks contradict (a
// zeroed length would otherwise read as an empty table, where Cassandra's
// index-driven reads fail). Every chunk but the last one holding data is
// full, so the length is the chunk length times that chunk's index plus
// what it holds; the chunks read are CRC-checked as any read would. The
// stored length stays in Info for verify, which reports it.
func (d *Data) lengthFromChunks(ciPath string) error {
	info := d.info
	var ra readAhead
	for idx := int64(len(info.ChunkOffsets)) - 1; idx >= 0; idx-- {
		b, err := d.readStored(idx, &ra)
		if err == nil && d.verify {
			err = d.checkCRC(idx, b)
		}
		n := 0
		if err == nil {
			n, err = d.plainLength(idx, b)
		}
		if err != nil {
			return corrupt.New(ciPath, compressionInfoComponent, info.countAt,
				fmt.Sprintf("a data length (%d stored) that its %d chunks of %d bytes do not contradict, or chunks that tell the length", info.DataLength, len(info.ChunkOffsets), info.ChunkLength), err)
		}
		if n == 0 && idx > 0 && idx == int64(len(info.ChunkOffsets))-1 {
			continue // the empty chunk writers end with
		}
		d.length = idx*d.chunkLen + int64(n)
		d.lengthFixed = d.length != info.DataLength
		return nil
	}
	return nil
}

// LengthFromChunks reports whether Length was taken from the chunks
// because CompressionInfo.db's stored data length (Info().DataLength)
// contradicts them.
func (d *Data) LengthFromChunks() bool { return d.lengthFixed }

func (d *Data) checkChunkBounds(ciPath string) error {
	size := d.f.Size()
	for i, off := range d.info.ChunkOffsets {
		end := size
		if i+1 < len(d.info.ChunkOffsets) {
			end = d.info.ChunkOffsets[i+1]
		}
		// An empty trailing chunk of the Noop compressor stores no byte at
		// all, so only the CRC is certain to be there.
		if end-off < 4 {
			return corrupt.New(ciPath, compressionInfoComponent, d.info.OffsetPosition(i),
				fmt.Sprintf("chunk %d offset %d to leave room for a 4-byte CRC before %d (Data.db is %d bytes)", i, off, end, size),
				nil)
		}
	}
	return nil
}

// Length is the uncompressed length of Data.db.
func (d *Data) Length() int64 { return d.length }

// Compressed reports whether Data.db is compressed.
func (d *Data) Compressed() bool { return d.info != nil }

// Info is the decoded CompressionInfo.db, nil when uncompressed.
func (d *Data) Info() *CompressionInfo { return d.info }

// Checksums is the decoded CRC.db of an uncompressed Data.db whose chunks
// are checked as they are read; nil otherwise.
func (d *Data) Checksums() *ChunkChecksums { return d.crcs }

// Path is the Data.db path.
func (d *Data) Path() string { return d.path }

// File is the underlying on-disk Data.db.
func (d *Data) File() File { return d.f }

// Close releases the file (and the mapping: slices returned by cursors are
// invalid afterwards).
func (d *Data) Close() error { return d.f.Close() }

// ReadAt reads uncompressed bytes; it is safe for concurrent use (calls are
// serialized over one internal cursor, which keeps the last chunks
// decompressed for neighbouring reads). At the end of data it returns
// fewer bytes and io.EOF.
func (d *Data) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("%s: read at negative offset %d", d.path, off)
	}
	if off >= d.length {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.rc == nil {
		d.rc = d.Cursor(off)
	}
	c := d.rc
	if err := c.SeekTo(off); err != nil {
		return 0, err
	}
	n := 0
	for n < len(p) && c.Pos() < d.length {
		if err := c.ensure(); err != nil {
			return n, err
		}
		k := copy(p[n:], c.cur[c.off:])
		c.off += k
		n += k
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// chunkBounds returns chunk idx's uncompressed start and length.
func (d *Data) chunkBounds(idx int64) (start int64, n int) {
	start = idx * d.chunkLen
	return start, int(min(d.chunkLen, d.length-start))
}

// storedChunk returns where chunk idx lies in the file and how many bytes
// are stored (without the CRC).
func (d *Data) storedChunk(idx int64) (off int64, stored int) {
	offs := d.info.ChunkOffsets
	off = offs[idx]
	end := d.f.Size()
	if idx+1 < int64(len(offs)) {
		end = offs[idx+1]
	}
	return off, int(end - off - 4)
}

// readAheadSize is how much of a compressed Data.db a Buffered reader
// fetches per system call: several chunks at a time, so a sequential scan
// costs one pread per ~256 KiB instead of one per chunk.
const readAheadSize = 256 << 10

// readAhead is a window of the on-disk file for Buffered access. It starts
// at one chunk and doubles while reads stay sequential, so a key lookup
// reads one chunk and a scan soon reads readAheadSize per system call.
type readAhead struct {
	buf  []byte
	off  int64 // file offset of buf[0]
	next int64 // size of the next refill when reading sequentially
}

// readStored returns chunk idx's stored bytes followed by its 4-byte CRC,
// from the mapping, or from ra (refilled from the file when the chunk is
// not inside it). The slice is valid until ra is next refilled.
func (d *Data) readStored(idx int64, ra *readAhead) ([]byte, error) {
	off, stored := d.storedChunk(idx)
	n := int64(stored) + 4
	if d.mapped != nil {
		return d.mapped[off : off+n], nil
	}
	if off >= ra.off && off+n <= ra.off+int64(len(ra.buf)) {
		return ra.buf[off-ra.off : off-ra.off+n], nil
	}
	// Chunk bounds were checked against the file size at open.
	if len(ra.buf) > 0 && off == ra.off+int64(len(ra.buf)) {
		ra.next = min(2*max(ra.next, n), readAheadSize)
	} else {
		ra.next = n
	}
	size := min(max(n, ra.next), d.f.Size()-off)
	ra.buf = grow(ra.buf[:0], int(size))[:size]
	ra.off = off
	if _, err := d.f.ReadAt(ra.buf, off); err != nil {
		ra.buf = ra.buf[:0]
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, corrupt.New(d.path, dataComponent, off, fmt.Sprintf("chunk %d: %d stored bytes and a CRC", idx, stored), err)
	}
	return ra.buf[:n], nil
}

// checkCRC compares the CRC32 after a stored chunk with the bytes, and
// marks the chunk checked when they match.
func (d *Data) checkCRC(idx int64, b []byte) error {
	if crcHook != nil {
		crcHook(d, idx)
	}
	stored := b[:len(b)-4]
	// The CRC first: it pulls the chunk into cache in order, so the
	// stored value after it is then a cache hit, not a miss on a new page.
	got := crc32.ChecksumIEEE(stored)
	if want := binary.BigEndian.Uint32(b[len(b)-4:]); got != want {
		off, _ := d.storedChunk(idx)
		return corrupt.New(d.path, dataComponent, off,
			fmt.Sprintf("chunk %d (%d stored bytes) to match its CRC32 %#08x", idx, len(stored), want),
			fmt.Errorf("%w: computed %#08x", corrupt.ErrChecksum, got))
	}
	d.sums[idx].Store(got)
	d.checked[idx>>5].Or(1 << (idx & 31))
	return nil
}

// isChecked reports whether chunk idx's CRC32 has matched already.
func (d *Data) isChecked(idx int64) bool {
	return d.checked[idx>>5].Load()&(1<<(idx&31)) != 0
}

// crcHook, when set (by tests, before any read), is called with each
// chunk whose CRC32 is taken.
var crcHook func(d *Data, idx int64)

// readChunk returns the uncompressed bytes of chunk idx. buf is the slot's
// own buffer (returned, possibly grown, for reuse); ra is the reader's
// read-ahead window for Buffered access. The result aliases the mapping or
// buf, never ra.
func (d *Data) readChunk(idx int64, buf []byte, ra *readAhead) (data, newBuf []byte, err error) {
	start, n := d.chunkBounds(idx)
	if d.info == nil {
		var b []byte
		if d.mapped != nil {
			b = d.mapped[start : start+int64(n)]
		} else {
			buf = grow(buf[:0], n)
			b = buf[:n]
			if _, err := d.f.ReadAt(b, start); err != nil {
				if err == io.EOF {
					err = io.ErrUnexpectedEOF
				}
				return nil, buf, corrupt.New(d.path, dataComponent, start, fmt.Sprintf("%d bytes", n), err)
			}
		}
		// Chunks CRC.db has no CRC for are read unchecked, as Cassandra
		// reads them; verify reports the short CRC.db.
		if d.crcs != nil && idx < int64(len(d.crcs.CRCs)) {
			if got, want := crc32.ChecksumIEEE(b), d.crcs.CRCs[idx]; got != want {
				return nil, buf, corrupt.New(d.path, dataComponent, start,
					fmt.Sprintf("chunk %d (%d bytes) to match CRC.db's CRC32 %#08x", idx, n, want),
					fmt.Errorf("%w: computed %#08x", corrupt.ErrChecksum, got))
			}
		}
		return b, buf, nil
	}
	if idx >= int64(len(d.info.ChunkOffsets)) {
		// Cassandra's chunkFor fails the same way: the data length claims
		// bytes that no chunk holds.
		return nil, buf, corrupt.New(d.path, dataComponent, start,
			fmt.Sprintf("chunk %d to hold uncompressed bytes %d..%d (CompressionInfo.db lists %d chunks for a data length of %d)", idx, start, start+int64(n), len(d.info.ChunkOffsets), d.length),
			io.ErrUnexpectedEOF)
	}
	off, stored := d.storedChunk(idx)
	isRaw := int64(stored) >= d.threshold
	b, err := d.readStored(idx, ra)
	if err != nil {
		return nil, buf, err
	}
	if d.verify && !d.isChecked(idx) {
		if err := d.checkCRC(idx, b); err != nil {
			return nil, buf, err
		}
	}
	if isRaw {
		// The last chunk holding data may be zero-padded up to the
		// threshold (an empty chunk may still follow it).
		last := start+int64(n) == d.length
		if stored != n && !(last && stored > n && int64(stored) == d.threshold) {
			return nil, buf, corrupt.New(d.path, dataComponent, off,
				fmt.Sprintf("raw chunk %d (stored length %d ≥ max compressed length %d) to hold its %d uncompressed bytes", idx, stored, d.threshold, n), nil)
		}
		if d.mapped != nil {
			return b[:n], buf, nil
		}
		// The read-ahead window moves on; the slot keeps its own copy.
		buf = append(grow(buf[:0], n), b[:n]...)
		return buf, buf, nil
	}
	var out []byte
	if ld, ok := d.comp.(limitedDecompressor); ok {
		out, err = ld.decompressLimit(buf[:0], b[:stored], n)
	} else {
		out, err = d.comp.Decompress(buf[:0], b[:stored])
	}
	if out != nil {
		buf = out
	}
	if err != nil {
		return nil, buf, corrupt.New(d.path, dataComponent, off, fmt.Sprintf("chunk %d to decompress with %s", idx, d.comp.Name()), err)
	}
	if len(out) != n {
		return nil, buf, corrupt.New(d.path, dataComponent, off,
			fmt.Sprintf("chunk %d to decompress to %d bytes", idx, n), fmt.Errorf("got %d", len(out)))
	}
	return out, buf, nil
}
