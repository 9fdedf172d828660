// Package catalog is the browser's data layer: it opens sstables through
// format/sstable and answers what the views ask — the partition list from
// Index.db (fast, so the first screen appears at once), per-partition row,
// cell and tombstone counts from a background ScanPartitions, sort orders,
// key filters, token seeks, a size histogram, pages of a partition's rows,
// labelled raw bytes and the oa savings estimate of package convert. It
// knows nothing about the terminal, so it is tested and benchmarked alone.
//
// Data shared with background goroutines is immutable once built (keys,
// offsets, sizes); mutable state (counts) is only written by the caller's
// goroutine when it applies a ScanBatch.
package catalog

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/sstabletool/sstabletool/corrupt"
	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/inspect"
	"github.com/sstabletool/sstabletool/internal/tui/bytemap"
	"github.com/sstabletool/sstabletool/reader"
)

// Table is one sstable opened for browsing.
type Table struct {
	S *sstable.SSTable
	// Name is short and unique enough to show: "<directory>/nc-1" (the
	// format is named only when it is not big).
	Name string
	// DiskSize is Data.db's size on disk (compressed when compressed).
	DiskSize int64

	// Schema is what the command's schema says of the table (its names,
	// its dropped columns); nil: the header's placeholder names.
	Schema *Schema

	access  reader.Access
	meta    *inspect.Metadata
	metaErr error

	// Background readers hold the table: its files are memory-mapped, and
	// unmapping them under a running scan would crash the process.
	mu      sync.Mutex
	closed  bool
	readers sync.WaitGroup
}

// ErrClosed is returned by background work started after Close.
var ErrClosed = errors.New("sstable closed")

// hold keeps the table open until release; false once it is closing.
func (t *Table) hold() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return false
	}
	t.readers.Add(1)
	return true
}

func (t *Table) release() { t.readers.Done() }

// Open opens the sstable that path (any component) belongs to.
func Open(path string, access reader.Access) (*Table, error) {
	s, err := sstable.Open(path, sstable.Options{Access: access})
	if err != nil {
		return nil, err
	}
	t := &Table{S: s, access: access}
	data := s.Path(format.ComponentData)
	t.Name = filepath.Base(filepath.Dir(data)) + "/" + strings.TrimSuffix(strings.TrimSuffix(s.Desc().Prefix(), "-"), "-big")
	if fi, err := os.Stat(data); err == nil {
		t.DiskSize = fi.Size()
	}
	return t, nil
}

// Close waits for background readers (cancel their contexts first) and
// releases the sstable's files.
func (t *Table) Close() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	t.mu.Unlock()
	t.readers.Wait()
	return t.S.Close()
}

// DataPath is the path of Data.db.
func (t *Table) DataPath() string { return t.S.Path(format.ComponentData) }

// Version is the sstable's format version name ("nc", "oa", ...).
func (t *Table) Version() string { return t.S.Version().Name }

// Metadata returns what `sstabletool metadata` prints, read once.
func (t *Table) Metadata() (*inspect.Metadata, error) {
	if t.meta == nil && t.metaErr == nil {
		t.meta, t.metaErr = inspect.ReadMetadata(t.S)
	}
	return t.meta, t.metaErr
}

// CreateTable is the CREATE TABLE statement the serialization header implies.
func (t *Table) CreateTable() string {
	if t.Schema != nil {
		return inspect.CreateTable(t.S, t.Schema.Names)
	}
	return inspect.CreateTable(t.S, inspect.DefaultNames(t.S))
}

// Schema is what a table's schema says that its sstables do not: the
// names of its key and clustering columns, and its columns' drop times
// (microseconds, by name).
type Schema struct {
	inspect.Names
	DroppedTimes map[string]int64
}

// KeyHeader names the partition key column of the partition lists: the
// key's column names joined as the key's text joins its components, or
// KEY without a schema.
func (t *Table) KeyHeader() string { return t.Schema.keyHeader() }

func (s *Schema) keyHeader() string {
	if s == nil || len(s.PartitionKey) == 0 {
		return "KEY"
	}
	return strings.Join(s.PartitionKey, ":")
}

// ClusteringNames are the clustering columns' names; nil without a schema.
func (t *Table) ClusteringNames() []string { return t.Schema.clusteringNames() }

func (s *Schema) clusteringNames() []string {
	if s == nil {
		return nil
	}
	return s.Clustering
}

// FormatKey renders a partition key with its CQL type, as the CLI does.
func (t *Table) FormatKey(key []byte) string { return inspect.FormatKey(t.S.KeyType(), key) }

// Token renders the token of a key with the sstable's partitioner.
func (t *Table) Token(key []byte) string { return t.S.Partitioner().Token(key).String() }

// Labeler labels this sstable's Data.db bytes.
func (t *Table) Labeler() *bytemap.Labeler {
	s := t.S
	return &bytemap.Labeler{Schema: s.Schema(), KeyType: s.KeyType(), ClusteringTypes: s.ClusteringTypes(),
		StaticTypes: s.StaticTypes(), RegularTypes: s.RegularTypes(), File: t.DataPath()}
}

// Bytes reads n uncompressed Data.db bytes at off (fewer at the end).
func (t *Table) Bytes(off, n int64) ([]byte, error) {
	if off < 0 || off > t.S.Data().Length() {
		return nil, corrupt.New(t.DataPath(), "Data.db", off, fmt.Sprintf("an offset within the %d uncompressed bytes", t.S.Data().Length()), nil)
	}
	n = min(n, t.S.Data().Length()-off)
	b := make([]byte, n)
	if _, err := t.S.Data().ReadAt(b, off); err != nil {
		return nil, fmt.Errorf("reading %d bytes of Data.db at %d: %w", n, off, err)
	}
	return b, nil
}

// Unreadable is an sstable that could not be opened; the browser lists it
// with its error rather than leaving it out.
type Unreadable struct {
	Path string // the Data.db path, or the path given
	Err  error
}

// Name is short like Table.Name: "<directory>/da-1-bti" (the format is
// named only when it is not big).
func (u Unreadable) Name() string {
	if d, _, err := format.ParseDescriptor(u.Path); err == nil {
		return filepath.Base(d.Dir) + "/" + strings.TrimSuffix(strings.TrimSuffix(d.Prefix(), "-"), "-big")
	}
	return filepath.Base(filepath.Dir(u.Path)) + "/" + filepath.Base(u.Path)
}

// Version is the version its file name gives, or "?".
func (u Unreadable) Version() string {
	if d, _, err := format.ParseDescriptor(u.Path); err == nil {
		return d.Version.Name
	}
	return "?"
}

// Access is how the table's components are read.
func (t *Table) Access() reader.Access { return t.access }
