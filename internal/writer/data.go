package writer

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"maps"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/sstabletool/sstabletool/format/stats"
	"github.com/sstabletool/sstabletool/reader"
)

// NoCompressionRatio is what Statistics.db records for an uncompressed
// Data.db (MetadataCollector.NO_COMPRESSION_RATIO).
const NoCompressionRatio = stats.NoCompressionRatio

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
	// Options Cassandra drops when it reads the file (crc_check_chance, in
	// ScyllaDB's files) are not written again, as Cassandra would not.
	opts, keys := ci.Options, ci.OptionKeys
	if drop := ci.NonCassandraOptions(); len(drop) > 0 {
		opts, keys = map[string]string{}, nil
		for _, k := range ci.OptionKeys {
			if !slices.Contains(drop, k) {
				opts[k] = ci.Options[k]
				keys = append(keys, k)
			}
		}
	}
	return &Compression{Class: ci.Compressor, Options: opts, OptionKeys: keys,
		ChunkLength: ci.ChunkLength, MaxCompressedLength: mcl}
}

// CompressionOfTable is the compression a table's compression option
// gives its sstables (system_schema.tables' compression map, as
// CompressionParams.fromMap reads it): nil for {'enabled': 'false'} or an
// empty map; else the class ("class", or 3.0's "sstable_compression"; its
// simple name, as CompressionInfo.db stores it), the chunk length
// ("chunk_length_in_kb", or "chunk_length_kb"; by default 16 KiB, 64 KiB
// before 4.0: defaultKiB), min_compress_ratio as the length at or above
// which a chunk is stored raw (math.MaxInt32 for none), and the
// compressor's other options except crc_check_chance (a table option since
// 3.0, which Cassandra drops from the compressor's).
func CompressionOfTable(opts map[string]string, defaultKiB int) (*Compression, error) {
	rest := maps.Clone(opts)
	pop := func(keys ...string) (string, bool) {
		for _, k := range keys {
			if v, ok := rest[k]; ok {
				delete(rest, k)
				return v, true
			}
		}
		return "", false
	}
	if v, ok := pop("enabled"); ok && !strings.EqualFold(v, "true") {
		return nil, nil
	}
	class, ok := pop("class", "sstable_compression")
	if !ok {
		if len(rest) == 0 {
			return nil, nil
		}
		return nil, fmt.Errorf("compression %v: no class", opts)
	}
	if i := strings.LastIndexByte(class, '.'); i >= 0 {
		class = class[i+1:]
	}
	kib := defaultKiB
	if v, ok := pop("chunk_length_in_kb", "chunk_length_kb"); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 || n&(n-1) != 0 || n > 1<<20 {
			return nil, fmt.Errorf("compression: chunk length %q KiB: expected a power of two", v)
		}
		kib = n
	}
	maxLen := math.MaxInt32
	if v, ok := pop("min_compress_ratio"); ok {
		r, err := strconv.ParseFloat(v, 64)
		if err != nil || r != 0 && !(r >= 1) {
			return nil, fmt.Errorf("compression: min_compress_ratio %q: expected 0 or a number of at least 1", v)
		}
		// CompressionParams.calcMaxCompressedLength.
		maxLen = int(math.Ceil(min(float64(kib<<10)/r, math.MaxInt32)))
	}
	pop(reader.CRCCheckChanceOption)
	if _, err := reader.CompressorFor(class, rest); err != nil {
		return nil, fmt.Errorf("compression: %w", err)
	}
	keys := slices.Sorted(maps.Keys(rest))
	return &Compression{Class: class, Options: rest, OptionKeys: keys, ChunkLength: kib << 10, MaxCompressedLength: maxLen}, nil
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
	size      int   // uncompressed bytes per chunk
	pos       int64 // uncompressed bytes accepted
	filePos   int64
	offsets   []int64
	crcs      []uint32
	stored    int64
	err       error
	finished  bool

	// A full chunk is handed off (handOff) to the compressors, several
	// goroutines that compress chunks side by side, and to the emitter,
	// one goroutine that takes them in the order they were handed off and
	// writes each with its CRC32, so the file is what one goroutine would
	// write while the caller fills the next chunk and every core
	// compresses (each chunk is compressed on its own, so the bytes do not
	// depend on which goroutine did it).
	cur      *dataJob      // the job whose buffer chunk is
	sent     int           // chunks handed off
	compress chan *dataJob // to the compressors
	order    chan *dataJob // to the emitter, in file order
	free     chan *dataJob // jobs the emitter is done with
	workers  sync.WaitGroup
	done     chan struct{} // closed when the emitter has stopped
	werr     error         // the emitter's first error, read after done or via failed
	wmu      sync.Mutex
	// emitted counts the chunks the emitter has written and emittedFile
	// the file bytes they took (CRCs included), under wmu; settled is
	// signalled (with wmu) after each, for SizeBound's wait.
	emitted     int
	emittedFile int64
	settled     *sync.Cond
}

// dataJob is one chunk on its way through the pipeline: its uncompressed
// bytes, its compressed form (cbuf, reused), what is to be stored, and
// ready, signalled by the compressor when stored (or err) is set.
type dataJob struct {
	chunk, cbuf, stored []byte
	index               int // the chunk's number in the file, for errors
	err                 error
	ready               chan struct{}
}

// maxCompressors bounds the goroutines compressing chunks at once.
const maxCompressors = 4

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
	// Buffers start small and grow with the data up to the chunk length:
	// a chunk length of 1 GiB (valid) over a few KiB of data must not
	// reserve gigabytes. Chunks of more than 1 MiB get the one compressor
	// and three buffers of old; smaller ones a compressor per core and
	// two buffers each, plus the one being filled.
	w.size = size
	initial := min(size, initialChunkBuffer)
	compressors, buffers := 1, 3
	if w.codec != nil && size <= 1<<20 {
		compressors = min(runtime.GOMAXPROCS(0), maxCompressors)
		buffers = 2*compressors + 1
	}
	w.compress = make(chan *dataJob, buffers)
	w.order = make(chan *dataJob, buffers)
	w.free = make(chan *dataJob, buffers)
	for i := 0; i < buffers; i++ {
		j := &dataJob{chunk: make([]byte, 0, initial), ready: make(chan struct{}, 1)}
		if i == 0 {
			w.cur = j
		} else {
			w.free <- j
		}
	}
	w.chunk = w.cur.chunk
	w.settled = sync.NewCond(&w.wmu)
	w.done = make(chan struct{})
	w.workers.Add(compressors)
	for i := 0; i < compressors; i++ {
		go w.compressor()
	}
	go w.emitter()
	return w, nil
}

// compressor compresses the chunks handed to it until the writer stops.
func (w *DataWriter) compressor() {
	defer w.workers.Done()
	for j := range w.compress {
		j.stored, j.err = w.compressChunk(j)
		j.ready <- struct{}{}
	}
}

// emitter writes the chunks in the order they were handed off, each once
// its compressor is done with it; after an error it writes nothing more.
func (w *DataWriter) emitter() {
	defer close(w.done)
	for j := range w.order {
		<-j.ready
		w.wmu.Lock()
		failed := w.werr != nil
		w.wmu.Unlock()
		var err error
		if !failed {
			if err = j.err; err == nil {
				err = w.emitChunk(j.chunk, j.stored)
			}
		}
		w.wmu.Lock()
		if err != nil {
			w.werr = err
		}
		w.emitted++
		w.emittedFile = w.filePos
		w.settled.Broadcast()
		w.wmu.Unlock()
		j.chunk, j.stored, j.err = j.chunk[:0], nil, nil
		w.free <- j
	}
}

func (w *DataWriter) failed() error {
	w.wmu.Lock()
	defer w.wmu.Unlock()
	return w.werr
}

// handOff gives the full chunk to the pipeline and takes an empty buffer.
func (w *DataWriter) handOff() error {
	if err := w.failed(); err != nil {
		w.err = err
		return err
	}
	w.send()
	w.cur = <-w.free
	w.chunk = w.cur.chunk
	return nil
}

// send queues the current chunk for compression and for the emitter.
func (w *DataWriter) send() {
	j := w.cur
	j.chunk, j.index = w.chunk, w.sent
	w.sent++
	w.cur, w.chunk = nil, nil
	w.order <- j
	w.compress <- j
}

// stop ends the pipeline and waits for it: every chunk sent is written
// (or dropped after an error).
func (w *DataWriter) stop() {
	close(w.compress)
	close(w.order)
	w.workers.Wait()
	<-w.done
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
		room := w.size - len(w.chunk)
		if room == 0 {
			if err := w.handOff(); err != nil {
				return n - len(p), err
			}
			continue
		}
		k := min(room, len(p))
		w.grow(k)
		w.chunk = append(w.chunk, p[:k]...)
		p = p[k:]
		w.pos += int64(k)
	}
	return n, nil
}

// initialChunkBuffer is the starting capacity of a chunk buffer.
const initialChunkBuffer = 64 << 10

// grow makes room for k more bytes in the chunk buffer, doubling but never
// past the chunk length, so a buffer holds at most what the data needs.
func (w *DataWriter) grow(k int) {
	need := len(w.chunk) + k
	if need <= cap(w.chunk) {
		return
	}
	c := min(max(2*cap(w.chunk), need), w.size)
	b := make([]byte, len(w.chunk), c)
	copy(b, w.chunk)
	w.chunk = b
}

// SizeBound is an upper bound of Data.db's size on disk were n more
// uncompressed bytes written and the file finished now: what the chunks
// written so far take, plus the most the rest can take (the chunks on
// their way through the compressors, the chunk being filled and n bytes
// more, each chunk at its compressor's worst case and its CRC). The
// bound is exact for an uncompressed Data.db, whose chunks are stored as
// they are.
//
// A caller that cuts its output at a size (split) compares the bound
// with limit, so that no output ever passes it. So that where it cuts does
// not depend on how fast the compressors went, a bound over limit is made
// again once every chunk handed off is written: that answer is the one
// the same bytes always give, and a bound within limit before then
// agrees with it (each chunk not yet written was counted at its worst).
// Only the comparison with limit is the same on every run, not the value.
func (w *DataWriter) SizeBound(n int64, limit int64) int64 {
	if w.codec == nil {
		return w.pos + n
	}
	w.wmu.Lock()
	defer w.wmu.Unlock()
	b := w.emittedFile + int64(w.sent-w.emitted)*w.worstChunk(int64(w.size)) + w.worstSpan(int64(len(w.chunk))+n)
	if b <= limit {
		return b
	}
	for w.emitted < w.sent && w.werr == nil {
		w.settled.Wait()
	}
	return w.emittedFile + w.worstSpan(int64(len(w.chunk))+n)
}

// worstChunk is the most a chunk of n uncompressed bytes takes on disk:
// its compressed form at worst (every compressor Cassandra has stays
// within n/6 + 64 bytes of its input: LZ4 n/255 + 16, Snappy n/6 + 32,
// Zstd n/256 + 64, Deflate a few bytes per 16 KiB stored block), or the
// raw bytes, no longer than that, then its CRC32.
func (w *DataWriter) worstChunk(n int64) int64 {
	if n == 0 {
		return 0
	}
	return n + n/6 + 64 + 4
}

// worstSpan is worstChunk over n bytes cut into chunks.
func (w *DataWriter) worstSpan(n int64) int64 {
	size := int64(w.size)
	return n/size*w.worstChunk(size) + w.worstChunk(n%size)
}

// Abort stops the pipeline without finishing the file (error paths).
func (w *DataWriter) Abort() {
	if !w.finished {
		w.finished = true
		w.stop()
	}
}

// WriteByte accepts one uncompressed byte.
func (w *DataWriter) WriteByte(b byte) error {
	if len(w.chunk) < cap(w.chunk) && len(w.chunk) < w.size && w.err == nil && !w.finished {
		w.chunk = append(w.chunk, b)
		w.pos++
		return nil
	}
	_, err := w.Write([]byte{b})
	return err
}

func (w *DataWriter) emit(b []byte) error {
	if _, err := w.out.Write(b); err != nil {
		return fmt.Errorf("writer: Data.db: %w", err)
	}
	w.digest.Write(b)
	w.filePos += int64(len(b))
	return nil
}

// compressChunk returns what j's chunk is stored as: the chunk itself
// uncompressed, else its compressed form, or the raw bytes (zero-padded to
// the threshold when shorter, which only the last chunk can be) when
// compression does not reach MaxCompressedLength, so that the reader
// recognises a raw chunk by its stored length. Only compressors call it;
// it touches nothing but j.
func (w *DataWriter) compressChunk(j *dataJob) ([]byte, error) {
	chunk := j.chunk
	if len(chunk) == 0 || w.codec == nil {
		return chunk, nil
	}
	var err error
	j.cbuf, err = w.codec.Compress(j.cbuf[:0], chunk)
	if err != nil {
		return nil, fmt.Errorf("writer: compressing Data.db chunk %d: %w", j.index, err)
	}
	if max := w.comp.MaxCompressedLength; w.hasMaxLen && len(j.cbuf) >= max {
		if len(chunk) >= max {
			return chunk, nil
		}
		j.cbuf = append(j.cbuf[:0], chunk...)
		for len(j.cbuf) < max {
			j.cbuf = append(j.cbuf, 0)
		}
	}
	return j.cbuf, nil
}

// emitChunk writes one chunk as compressChunk stored it; only the emitter
// calls it.
func (w *DataWriter) emitChunk(chunk, stored []byte) error {
	if len(chunk) == 0 {
		return nil
	}
	if w.codec == nil {
		w.crcs = append(w.crcs, crc32.ChecksumIEEE(chunk))
		return w.emit(chunk)
	}
	w.offsets = append(w.offsets, w.filePos)
	w.stored += int64(len(stored))
	crc := crc32.ChecksumIEEE(stored)
	if err := w.emit(stored); err != nil {
		return err
	}
	var cb [4]byte
	binary.BigEndian.PutUint32(cb[:], crc)
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
	w.finished = true
	if len(w.chunk) > 0 {
		w.send()
	}
	w.stop()
	if err := w.failed(); err != nil {
		w.err = err
		return nil, err
	}
	r := &DataResult{Digest: w.digest.Sum32(), Length: w.pos, FileSize: w.filePos, CompressedBytes: w.stored}
	if w.codec == nil {
		r.Checksums = &reader.ChunkChecksums{ChunkSize: DefaultCRCChunkSize, CRCs: w.crcs}
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
