package export

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/schema"
	"github.com/klauspost/compress/s2"

	"github.com/sstabletool/sstabletool/internal/vfs"
)

// Memory bounds. A batch is filled record by record and handed to the
// column writers, which encode and compress it into pages; the pages of a
// row group stay in memory until the row group is closed. So memory is
// the batches in flight (batchesInFlight for a walk on one goroutine,
// segmentPool for each segment a walk on several has begun: segments.go)
// plus one row group and the writes queued for the disk (maxChunks),
// whatever the sstable's size. Six batches rather than three: the filling
// goes on while a row group closes, and the columns while the filling
// waits for the sstable.
const (
	batchesInFlight = 6
	batchRows       = 4096     // records per batch
	batchArena      = 4 << 20  // bytes of values per batch, beyond which it is handed on early
	rowGroupBytes   = 32 << 20 // compressed bytes per row group
	// A page ends at the first record after 64 KiB of values (Snappy's
	// block), a dict or shared column's every sharedPageLevels records.
	dataPageBytes = 64 << 10
)

// batch is the records handed to the column writers at once: a column of
// values per dataset column, and the bytes they point into.
type batch struct {
	cols  []*col
	arena []byte
	n     int
	enc   encoderState
	home  chan *batch // the pool of the filler it belongs to, where the encoder frees it
}

func (b *batch) reset() {
	for _, c := range b.cols {
		c.reset()
	}
	b.arena, b.n = b.arena[:0], 0
}

// parquetFile is one dataset's file being written: a hidden staging file,
// the Parquet writer over it, and the batch of records being filled. Full
// batches go to the encoder (encoder.go), which writes their columns on
// every core while the next ones fill.
type parquetFile struct {
	fs         vfs.FS
	final, tmp string
	f          vfs.File
	buf        *writeBehind
	pw         *pqWriter
	rg         *rowGroup
	leaf       []int // each column's first leaf index
	// The shared columns' row group dictionaries (nil for the others),
	// the encoder's.
	shared []*sharedDict
	names  []string         // the columns' names, for errors
	specs  []spec           // the columns
	words  map[int][][]byte // the dict columns' dictionaries, by column
	// ownBytes: the deltaLength columns, whose bytes are their own.
	ownBytes []int
	// dictLevels: each dict column's records since its last page.
	dictLevels []int
	// main fills the file's batches on a walk of the records on one
	// goroutine; a walk by segments has a filler per segment (segments.go).
	main    *filler
	enc     *encoder
	failed  atomic.Bool // the encoder has failed: stop filling
	stopped bool        // the encoder is stopped
	rows    int64       // records handed to the encoder (the encoder's)
	closed  bool
}

// filler fills one walker's batches of a file: the batch being filled,
// its columns and arena, and the batches it may fill, which the encoder
// frees back into its pool.
type filler struct {
	pf    *parquetFile
	cols  []*col // cur's
	arena []byte // cur's
	cur   *batch // nil between segments
	free  chan *batch
	made  int // batches of its pool made so far (they are made as needed)
	// hand takes a full batch: the encoder's add, or a segment's
	// (segments.go).
	hand func(*batch)
	// abandon, when closed, ends a wait for a free batch (nil: a wait
	// that always ends, the encoder freeing the batches it is given).
	abandon <-chan struct{}
}

// errAbandoned ends the filling of a segment whose walk was given up.
var errAbandoned = errors.New("export: segment abandoned")

// newFiller makes a filler of at most pool batches, handing them to
// hand (the encoder when nil).
func (pf *parquetFile) newFiller(pool int, hand func(*batch), abandon <-chan struct{}) (*filler, error) {
	f := &filler{pf: pf, free: make(chan *batch, pool), hand: hand, abandon: abandon}
	if f.hand == nil {
		f.hand = pf.enc.add
	}
	return f, f.take()
}

// newBatch makes an empty batch of the file's columns (createParquet has
// checked that every dict column has its words).
func (pf *parquetFile) newBatch(home chan *batch) *batch {
	b := &batch{home: home}
	for i, s := range pf.specs {
		c := newCol(s, &b.n)
		if c.dict {
			c.setDictionary(pf.words[i])
		}
		b.cols = append(b.cols, c)
	}
	return b
}

// take gives the filler an empty batch to fill: a free one, a new one
// while the pool has room, or the first the encoder frees.
func (f *filler) take() error {
	var b *batch
	select {
	case b = <-f.free:
	default:
		if f.made < cap(f.free) {
			f.made++
			b = f.pf.newBatch(f.free)
			break
		}
		select {
		case b = <-f.free:
		case <-f.abandon:
			return errAbandoned
		}
	}
	b.reset()
	f.cur, f.cols, f.arena = b, b.cols, b.arena
	return nil
}

// Snappy: arrow-go's codec calls klauspost's "better" Snappy encoder,
// which took a quarter of the export's time; the default-speed encoder
// writes the same format in a fraction of it and compresses these
// columns (mostly repeated names and keys) nearly as well. The data pages
// call it themselves (pqwriter.go); arrow-go's page writer compresses the
// dictionary pages with its codec, replaced here for the whole program.
type fastSnappy struct{ compress.Codec }

func (fastSnappy) Encode(dst, src []byte) []byte             { return s2.EncodeSnappy(dst, src) }
func (fastSnappy) EncodeLevel(dst, src []byte, _ int) []byte { return s2.EncodeSnappy(dst, src) }

func init() {
	if c, err := compress.GetCodec(compress.Codecs.Snappy); err == nil {
		compress.RegisterCodec(compress.Codecs.Snappy, fastSnappy{c})
	}
}

// writerProperties: what arrow-go's metadata builders and page writers
// take from them, and the chunk writers from them: Snappy (every engine
// reads it; ZSTD at its fastest level took half as long again, for files
// two fifths smaller), PLAIN unless a column says otherwise (the repeated
// names compress to almost nothing anyway), the dictionary columns
// (which the column chunks' metadata list as RLE_DICTIONARY), statistics
// only where a column is worth pruning by.
func writerProperties(specs []spec) *parquet.WriterProperties {
	opts := []parquet.WriterProperty{
		parquet.WithAllocator(&bufferPool{}),
		parquet.WithCompression(compress.Codecs.Snappy),
		parquet.WithDictionaryDefault(false),
		parquet.WithStats(false),
		parquet.WithCreatedBy("sstabletool"),
		parquet.WithMaxStatsSize(256),
	}
	for _, s := range specs {
		if s.stats {
			opts = append(opts, parquet.WithStatsFor(s.name, true))
		}
		if s.deltaLength {
			opts = append(opts, parquet.WithEncodingFor(s.leafPath(), parquet.Encodings.DeltaLengthByteArray))
		}
		if s.dict || s.shared {
			opts = append(opts, parquet.WithDictionaryFor(s.leafPath(), true))
		}
	}
	return parquet.NewWriterProperties(opts...)
}

// createParquet starts the file final (through its staging name) with the
// columns specs and the key-value metadata meta; words are the dict
// columns' dictionaries, by column.
func createParquet(fs vfs.FS, final string, specs []spec, words map[int][][]byte, meta map[string]string) (*parquetFile, error) {
	fields := make(schema.FieldList, 0, len(specs))
	pf := &parquetFile{fs: fs, final: final, tmp: stagingName(final), words: words}
	leaf := 0
	for i := range specs {
		n, err := specs[i].node()
		if err != nil {
			return nil, err
		}
		fields = append(fields, n)
		if specs[i].optional && (specs[i].typ == tStringList || specs[i].typ == tSizeMap) {
			return nil, fmt.Errorf("column %s: a list or map is never optional", specs[i].name)
		}
		if _, ok := words[i]; specs[i].dict && !ok {
			return nil, fmt.Errorf("column %s: no dictionary", specs[i].name)
		}
		pf.leaf = append(pf.leaf, leaf)
		var sd *sharedDict
		if specs[i].shared {
			sd = newSharedDict(specs[i], leaf)
		}
		pf.shared = append(pf.shared, sd)
		pf.names = append(pf.names, specs[i].name)
		pf.specs = append(pf.specs, specs[i])
		pf.dictLevels = append(pf.dictLevels, 0)
		if specs[i].deltaLength {
			pf.ownBytes = append(pf.ownBytes, i)
		}
		leaf += specs[i].leaves()
	}
	root, err := schema.NewGroupNode("schema", parquet.Repetitions.Required, fields, -1)
	if err != nil {
		return nil, err
	}
	f, err := createStaged(fs, pf.tmp)
	if err != nil {
		return nil, err
	}
	pf.f, pf.buf = f, newWriteBehind(f)
	fail := func(err error) (*parquetFile, error) {
		pf.buf.close()
		f.Close()
		fs.Remove(pf.tmp)
		return nil, err
	}
	// In the keys' order, not the map's: the same export writes the same
	// bytes.
	kv := metadata.KeyValueMetadata{}
	for _, k := range slices.Sorted(maps.Keys(meta)) {
		if err := kv.Append(k, meta[k]); err != nil {
			return fail(err)
		}
	}
	if pf.pw, err = newPQWriter(pf.buf, root, writerProperties(specs), kv); err != nil {
		return fail(err)
	}
	pf.enc = newEncoder(pf)
	if pf.main, err = pf.newFiller(batchesInFlight, nil, nil); err != nil {
		pf.enc.stop()
		return fail(err)
	}
	return pf, nil
}

// bytes records b, copied into the arena (a deltaLength column's own
// bytes), in column c.
func (f *filler) bytes(c *col, b []byte) {
	if c.deltaLength {
		start := len(c.own)
		c.own = append(c.own, b...)
		c.bytes(start, len(c.own))
		return
	}
	start := len(f.arena)
	f.arena = append(f.arena, b...)
	c.bytes(start, len(f.arena))
}

// size is the bytes of values the batch being filled holds.
func (f *filler) size() int {
	n := len(f.arena)
	for _, i := range f.pf.ownBytes {
		n += len(f.cols[i].own)
	}
	return n
}

// endRecord closes the record whose columns were just appended to, and
// hands the batch on once it is full, saying so: the arena is then
// another one, and what the caller rendered into the old one must be
// rendered again if it is to be used by the records to come.
func (f *filler) endRecord() (flushed bool, err error) {
	f.cur.n++
	// The bytes are counted every 16 records (they are spread over
	// several columns): a batch may pass batchArena by 15 records' worth.
	if f.cur.n >= batchRows || f.cur.n&15 == 0 && f.size() >= batchArena {
		return true, f.handOff()
	}
	return false, nil
}

// stop waits for the encoder to write the batches handed on, returning
// its first error.
func (pf *parquetFile) stop() error {
	if pf.stopped {
		return nil
	}
	pf.stopped = true
	return pf.enc.stop()
}

// handOff hands the batch being filled on and goes on with an empty one
// (waiting for the encoder to free one if it must).
func (f *filler) handOff() error {
	f.cur.arena = f.arena
	if f.pf.failed.Load() {
		return f.pf.enc.failure()
	}
	if f.cur.n == 0 {
		return nil
	}
	f.hand(f.cur)
	f.cur = nil
	return f.take()
}

// detach returns the batch being filled if it has records, leaving the
// filler without one (the end of a segment: segments.go).
func (f *filler) detach() *batch {
	b := f.cur
	if b == nil || b.n == 0 {
		return nil
	}
	b.arena = f.arena
	f.cur = nil
	return b
}

// writeColumnOf writes column i of batch b into the row group, and
// returns the compressed bytes of the column's pages so far, or for a
// shared column the size of its dictionary.
func (pf *parquetFile) writeColumnOf(b *batch, i int) (compressed int64, dict int, err error) {
	if sd := pf.shared[i]; sd != nil {
		sd.add(b.cols[i], b.n)
		return 0, sd.size(), nil
	}
	if err := b.cols[i].write(pf.rg, pf.leaf[i], b.n, b.arena); err != nil {
		return 0, 0, err
	}
	if pf.specs[i].dict {
		// A page every sharedPageLevels records (see endRowGroup).
		if pf.dictLevels[i] += b.n; pf.dictLevels[i] >= sharedPageLevels {
			pf.dictLevels[i] = 0
			if err := pf.rg.chunks[pf.leaf[i]].flushPage(); err != nil {
				return 0, 0, err
			}
		}
	}
	for leaf := pf.leaf[i]; leaf < pf.leaf[i]+b.cols[i].leaves(); leaf++ {
		compressed += pf.rg.chunks[leaf].compressed
	}
	return compressed, 0, nil
}

// parallel runs fn for each column on every core and returns the first
// error, naming the column.
func (pf *parquetFile) parallel(n int, fn func(i int) error) error {
	var next atomic.Int32
	errs := make([]error, n)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				errs[i] = fn(i)
			}
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return fmt.Errorf("%s: column %s: %w", pf.final, pf.names[i], err)
		}
	}
	return nil
}

// endRowGroup writes the shared columns of the row group and closes it,
// ending the dict columns' last pages first, on every core. Indices take
// few bytes, so a dict column's pages are cut by records instead:
// every sharedPageLevels as they are written (writeColumnOf), and here
// the last one.
func (pf *parquetFile) endRowGroup() error {
	rg := pf.rg
	pf.rg = nil
	err := pf.parallel(len(pf.shared), func(i int) error {
		if pf.specs[i].dict {
			pf.dictLevels[i] = 0
			return rg.chunks[pf.leaf[i]].flushPage()
		}
		sd := pf.shared[i]
		if sd == nil {
			return nil
		}
		defer sd.reset()
		return sd.write(rg)
	})
	if err != nil {
		return err
	}
	return rg.close()
}

// commit finishes the file and renames it into place: footer, flush,
// fsync, rename, fsync of the directory.
func (pf *parquetFile) commit() error {
	if pf.closed {
		return errors.New("export: file closed twice")
	}
	err := pf.main.handOff()
	if werr := pf.stop(); err == nil {
		err = werr
	}
	if err == nil && pf.rg != nil {
		err = pf.endRowGroup()
	}
	if err == nil {
		err = pf.pw.close()
	}
	if err == nil {
		err = pf.buf.Flush()
	}
	pf.buf.close()
	if err == nil {
		err = pf.f.Sync()
	}
	if cerr := pf.f.Close(); err == nil {
		err = cerr
	}
	pf.closed = true
	if err == nil {
		err = pf.fs.Rename(pf.tmp, pf.final)
	}
	if err == nil {
		err = pf.fs.SyncDir(filepath.Dir(pf.final))
	}
	if err != nil {
		pf.fs.Remove(pf.tmp)
		return fmt.Errorf("%s: %w", pf.final, err)
	}
	return nil
}

// abort drops the file: nothing of it becomes visible.
func (pf *parquetFile) abort() {
	if pf.closed {
		return
	}
	pf.stop()
	pf.closed = true
	pf.buf.close()
	pf.f.Close()
	pf.fs.Remove(pf.tmp)
	// The table=T and keyspace=K directories, if nothing else is in them
	// (removing a directory that is not empty fails, and is meant to).
	dir := filepath.Dir(pf.final)
	if pf.fs.Remove(dir) == nil {
		pf.fs.Remove(filepath.Dir(dir))
	}
}

// size is the file's length once committed.
func (pf *parquetFile) size() int64 { return pf.pw.sink.Tell() }
