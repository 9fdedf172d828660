package export

import (
	"bufio"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/schema"
)

// Memory bounds. A batch is filled record by record and handed to the
// column writers, which encode and compress it into pages; the pages of a
// row group stay in memory until the row group is closed. So memory is
// about a batch plus one row group, whatever the sstable's size.
const (
	batchRows      = 4096     // records per batch
	batchArena     = 4 << 20  // bytes of values per batch, beyond which it is handed on early
	rowGroupBytes  = 64 << 20 // compressed bytes per row group
	dataPageBytes  = 1 << 20  // Parquet's usual page size
	writeBufferLen = 1 << 20
)

// parquetFile is one dataset's file being written: a hidden staging file,
// the Parquet writer over it, and the batch of records being filled.
type parquetFile struct {
	fs         fileSystem
	final, tmp string
	f          outFile
	buf        *bufio.Writer
	pw         *file.Writer
	rg         file.BufferedRowGroupWriter
	cols       []*col
	leaf       []int // each column's first leaf index
	arena      []byte
	batch      int   // records in the batch
	rows       int64 // records written
	closed     bool
}

// writerProperties: ZSTD at its fastest level (on these tables it
// compresses a little better than Snappy for about the same time; every
// engine reads it), plain encoding (arrow-go's dictionary encoder
// allocates per value; the constant columns compress to almost nothing
// anyway), statistics only where a column is worth pruning by.
func writerProperties(specs []spec) *parquet.WriterProperties {
	opts := []parquet.WriterProperty{
		parquet.WithCompression(compress.Codecs.Zstd),
		parquet.WithCompressionLevel(1),
		parquet.WithDictionaryDefault(false),
		parquet.WithDataPageSize(dataPageBytes),
		parquet.WithStats(false),
		parquet.WithCreatedBy("sstabletool"),
		parquet.WithMaxStatsSize(256),
	}
	for _, s := range specs {
		if s.stats {
			opts = append(opts, parquet.WithStatsFor(s.name, true))
		}
	}
	return parquet.NewWriterProperties(opts...)
}

// createParquet starts the file final (through its staging name) with the
// columns specs and the key-value metadata meta.
func createParquet(fs fileSystem, final string, specs []spec, meta map[string]string) (*parquetFile, error) {
	fields := make(schema.FieldList, 0, len(specs))
	pf := &parquetFile{fs: fs, final: final, tmp: stagingName(final)}
	leaf := 0
	for i := range specs {
		n, err := specs[i].node()
		if err != nil {
			return nil, err
		}
		fields = append(fields, n)
		pf.cols = append(pf.cols, &col{spec: specs[i]})
		pf.leaf = append(pf.leaf, leaf)
		leaf += specs[i].leaves()
	}
	root, err := schema.NewGroupNode("schema", parquet.Repetitions.Required, fields, -1)
	if err != nil {
		return nil, err
	}
	f, err := fs.Create(pf.tmp)
	if err != nil {
		return nil, err
	}
	pf.f, pf.buf = f, bufio.NewWriterSize(f, writeBufferLen)
	kv := metadata.KeyValueMetadata{}
	for k, v := range meta {
		if err := kv.Append(k, v); err != nil {
			f.Close()
			fs.Remove(pf.tmp)
			return nil, err
		}
	}
	pf.pw, err = file.NewParquetWriterWithError(pf.buf, root, file.WithWriterProps(writerProperties(specs)), file.WithWriteMetadata(kv))
	if err != nil {
		f.Close()
		fs.Remove(pf.tmp)
		return nil, err
	}
	return pf, nil
}

// endRecord closes the record whose columns were just appended to, and
// hands the batch on once it is full, saying so: the arena is reused.
func (pf *parquetFile) endRecord() (flushed bool, err error) {
	pf.batch++
	if pf.batch >= batchRows || len(pf.arena) >= batchArena {
		return true, pf.flushBatch()
	}
	return false, nil
}

// flushBatch writes the batch into the row group, and closes the row
// group once it holds rowGroupBytes.
func (pf *parquetFile) flushBatch() (err error) {
	if pf.batch == 0 {
		return nil
	}
	defer func() {
		// arrow-go's writers panic on some misuse; report it as an error.
		if r := recover(); r != nil {
			err = fmt.Errorf("parquet writer: %v", r)
		}
	}()
	if pf.rg == nil {
		if pf.rg, err = pf.pw.AppendBufferedRowGroupChecked(); err != nil {
			return err
		}
	}
	for i, c := range pf.cols {
		if err := c.write(pf.rg, pf.leaf[i]); err != nil {
			return fmt.Errorf("%s: column %s: %w", pf.final, c.name, err)
		}
		c.reset()
	}
	pf.rows += int64(pf.batch)
	pf.batch, pf.arena = 0, pf.arena[:0]
	if pf.rg.TotalCompressedBytes() >= rowGroupBytes {
		err = pf.rg.Close()
		pf.rg = nil
	}
	return err
}

// commit finishes the file and renames it into place: footer, flush,
// fsync, rename, fsync of the directory.
func (pf *parquetFile) commit() error {
	if pf.closed {
		return errors.New("export: file closed twice")
	}
	err := pf.flushBatch()
	if err == nil && pf.rg != nil {
		err = pf.rg.Close()
		pf.rg = nil
	}
	if err == nil {
		err = pf.pw.Close()
	}
	if err == nil {
		err = pf.buf.Flush()
	}
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
	pf.closed = true
	pf.f.Close()
	pf.fs.Remove(pf.tmp)
}

// size is the file's length once committed (or written so far).
func (pf *parquetFile) size() int64 { return pf.pw.TotalBytesWritten() }
