// Package convert rewrites big-format sstables from one version to another
// (nb/nc and older to oa, and back), and estimates exactly what such a
// rewrite saves without writing anything.
//
// Only the DeletionTime layout differs between the legacy versions and oa
// where Data.db and Index.db are concerned (CASSANDRA-18648): partition
// headers, Index.db entries and promoted index blocks' end-open markers are
// re-encoded, every position behind them moves, and every row's "previous
// unfiltered size" is recomputed; row bodies are copied byte for byte.
// Statistics.db is converted field by field (stats.Convert) with the
// partition size histogram and the compression ratio recomputed from what
// was written. Summary.db, Filter.db, CRC.db, Digest.crc32 and TOC.txt are
// built anew from what is written, present in the source or not: the
// summary with the source Summary.db's sampling (Cassandra's defaults
// without one), the filter from the keys with Statistics.db's
// bloom_filter_fp_chance, sized for the exact partition count.
package convert

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/format/stats"
	"github.com/sstabletool/sstabletool/internal/format/filter"
	"github.com/sstabletool/sstabletool/internal/vfs"
	"github.com/sstabletool/sstabletool/internal/writer"
	"github.com/sstabletool/sstabletool/merge"
	"github.com/sstabletool/sstabletool/reader"
)

// Place is where a DeletionTime is stored outside row bodies.
type Place int

const (
	PlacePartitionHeader Place = iota // Data.db partition headers
	PlaceIndexEntry                   // Index.db entries with a promoted index
	PlaceIndexBlock                   // IndexInfo end-open markers
	placeCount
)

func (p Place) String() string {
	return [...]string{"partition headers", "index entries", "index blocks"}[p]
}

// Counts counts the DeletionTimes a conversion re-encoded, by place.
type Counts struct {
	Live    [placeCount]int64
	NonLive [placeCount]int64
	// BlocksWithoutMarker counts promoted index blocks with no end-open
	// marker (no DeletionTime stored).
	BlocksWithoutMarker int64
	// Capped counts values changed to fit a legacy layout
	// (Options.CapDeletionTimes).
	Capped int64
}

func (c *Counts) add(p Place, dt deletiontime.DeletionTime) {
	if dt.IsLive() {
		c.Live[p]++
	} else {
		c.NonLive[p]++
	}
}

// Add sums other into c.
func (c *Counts) Add(o *Counts) {
	for i := range c.Live {
		c.Live[i] += o.Live[i]
		c.NonLive[i] += o.NonLive[i]
	}
	c.BlocksWithoutMarker += o.BlocksWithoutMarker
	c.Capped += o.Capped
}

// Options controls a conversion.
type Options struct {
	To format.Version
	// Compression overrides the source's compression; nil keeps it.
	// Uncompressed forces an uncompressed Data.db (with CRC.db).
	Compression  *writer.Compression
	Uncompressed bool
	// CapDeletionTimes caps values a legacy layout cannot hold instead of
	// failing (the count is in Result.Counts.Capped).
	CapDeletionTimes bool
	// Verify re-reads the written sstable before it is moved into place:
	// verify.SSTable must pass and its content must equal the source's
	// partition by partition, row by row, cell by cell.
	Verify bool
	// Access is how the source (and the output, when verifying) is read.
	Access reader.Access
	// ColumnIndexSize is column_index_size in bytes for index blocks cut
	// anew: 0 means the target format's default (64 KiB big, 16 KiB BTI).
	// Blocks are cut anew from the rows when either side is BTI or this is
	// set; a big-to-big conversion otherwise keeps the source's blocks.
	ColumnIndexSize int
	// Progress, when set, is called with source Data.db bytes done.
	Progress func(done, total int64)

	// DropIndexComponents removes, before writing, the SAI and SASI files
	// the output directory holds under the output's name with no Data.db
	// (left by an sstable that is gone): Cassandra would take them for the
	// index of the sstable written. Without it they are refused
	// (writer.StaleIndexError).
	DropIndexComponents bool

	// estimating is set by Estimate: what Convert would refuse is noted in
	// Result.Refusals and the estimate goes on with the values capped.
	estimating bool
}

// Component is one component's size before and after.
type Component struct {
	Name   string `json:"name"`
	Before int64  `json:"before"`
	After  int64  `json:"after"`
}

// Result describes one conversion (or estimate).
type Result struct {
	Source     string      `json:"source"`
	Output     string      `json:"output,omitempty"` // Data.db path, "" for estimates
	From       string      `json:"from"`
	To         string      `json:"to"`
	Partitions int64       `json:"partitions"`
	Components []Component `json:"components"`
	// Dropped are the source's index components the target format has
	// no place for (Index.db and Summary.db converting to da, Partitions.db
	// and Rows.db from it): After is 0. Not in Components, which are the
	// output's files.
	Dropped []Component `json:"dropped_components,omitempty"`
	// Index sums the partition index components before (the source's:
	// Index.db and Summary.db, or Partitions.db and Rows.db) and after
	// (the target's), whatever the formats.
	Index Component `json:"index"`
	// IndexFiles sums the source's SAI and SASI files
	// (sstable.IndexFiles): no rewrite carries them over (IndexNotes) and
	// Cassandra builds them again for the sstable written, so they are
	// neither in Components nor saved; After is 0.
	IndexFiles Component `json:"index_files"`
	// DataUncompressed is Data.db's uncompressed length before and after:
	// exactly the DeletionTime bytes (and size vints) the rewrite saves,
	// whatever the compressor does with them. Not part of Components,
	// which are on-disk files.
	DataUncompressed Component `json:"data_uncompressed"`
	// CompressionInfo (compressed Data.db) or Checksums (uncompressed) is
	// the chunk metadata written, for callers that explain
	// CompressionInfo.db's or CRC.db's size field by field.
	CompressionInfo *reader.CompressionInfo `json:"-"`
	Checksums       *reader.ChunkChecksums  `json:"-"`
	Counts          Counts                  `json:"deletion_times"`
	Losses          []stats.Loss            `json:"statistics_losses,omitempty"`
	// DroppedIndexFiles are the stale index files removed from the output
	// directory before writing (Options.DropIndexComponents).
	DroppedIndexFiles []string `json:"dropped_index_files,omitempty"`
	// StatisticsRecollected are the source Statistics.db's bounds and
	// counts that were not its rows' (wider ones, as ScyllaDB writes
	// them; narrower ones, which verify reports): the output holds the
	// rows' own, as Cassandra's writer collects them.
	StatisticsRecollected []stats.Mismatch `json:"statistics_recollected,omitempty"`
	Verified              bool             `json:"verified"`
	Problems              []string         `json:"problems,omitempty"`
	// Refusals (estimates only) say why Convert would refuse this sstable
	// as it stands; the sizes then assume --cap-deletion-times and a
	// scrubbed serialization header.
	Refusals []string `json:"refusals,omitempty"`
	// Recovered says what was repaired in the output directory before
	// writing: leftovers of killed runs removed or completed (see package
	// writer).
	Recovered []string `json:"recovered,omitempty"`
	// Inputs (a merged conversion, Merge or EstimateMerge) are the Data.db
	// paths of the table's sstables merged, oldest first; Source is then
	// the table's directory, and the Components' Before the inputs' total.
	Inputs []string `json:"inputs,omitempty"`
	// Reclaimed (EstimateMerge) attributes the Data.db bytes the merge
	// does not write to why (uncompressed; docs/merge.md).
	Reclaimed *merge.Reclaim    `json:"reclaimed,omitempty"`
	stats     *stats.Statistics // the written Statistics (verification reads its header)
	// segments are the partitions where verify's walk of the output
	// begins a segment (after the first, at 0), in both sstables: where
	// the comparison with the source begins each (compare.go).
	segments []boundary
	// keys is the bloom filter of the keys written, which verification
	// compares Filter.db with (verify.SSTableWritten) and then drops; nil
	// without verification.
	keys *filter.BloomFilter
	// content is the digest of the source's partitions, taken by the
	// statistics collection's decode of the source (nil without
	// verification); reflagged says the relinker rewrote a row's flags.
	// Verification compares the output's digest with it (compare.go).
	content   *rows.Digest
	reflagged bool
}

// Totals sums every component before and after, the dropped ones
// included: the bytes on disk the rewrite saves are before - after.
func (r *Result) Totals() (before, after int64) {
	for _, cs := range [][]Component{r.Components, r.Dropped} {
		for _, c := range cs {
			before += c.Before
			after += c.After
		}
	}
	return before, after
}

// Component returns the sizes of one component (zero if absent).
func (r *Result) Component(name string) Component {
	for _, c := range r.Components {
		if c.Name == name {
			return c
		}
	}
	return Component{Name: name}
}

// Convert rewrites the sstable at srcPath (any component) in version
// o.To into outDir, crash-safely (see package writer). It returns the
// result even on a verification failure, with the error.
func Convert(srcPath, outDir string, o Options) (*Result, error) {
	return convertOn(vfs.Default, srcPath, outDir, o)
}

// convertOn is Convert writing through fsys: the seam where the tests
// inject crashes, fsync errors and a full disk.
func convertOn(fsys vfs.FS, srcPath, outDir string, o Options) (*Result, error) {
	src, err := sstable.Open(srcPath, sstable.Options{Access: o.Access})
	if err != nil {
		return nil, err
	}
	defer src.Close()
	desc := src.Desc().WithVersion(o.To).WithDir(outDir)
	var dropped []string
	if o.DropIndexComponents {
		if dropped, err = writer.DropStaleIndexFiles(fsys, outDir, desc.Prefix()); err != nil {
			return nil, err
		}
	}
	res, err := staged(fsys, desc, o.Verify, func(out writer.Output, _ string) (*Result, error) {
		return rewrite(src, o, outputSink{files: out, prefix: desc.Prefix()})
	}, func(data string, res *Result) error { return verifyOutput(src, data, o, res) })
	if res != nil {
		res.DroppedIndexFiles = dropped
	}
	return res, err
}

// Estimate computes what Convert would write, without writing anything:
// every component is produced in memory and only counted, Data.db really
// recompressed chunk by chunk.
func Estimate(srcPath string, o Options) (*Result, error) {
	src, err := sstable.Open(srcPath, sstable.Options{Access: o.Access})
	if err != nil {
		return nil, err
	}
	defer src.Close()
	o.estimating = true
	res, err := rewrite(src, o, outputSink{files: countingOutput{}})
	if res != nil && res.Counts.Capped > 0 && !o.CapDeletionTimes {
		res.Refusals = append(res.Refusals, fmt.Sprintf("%d DeletionTimes outside partition bodies cannot be written as %s unchanged (convert refuses them without --cap-deletion-times)", res.Counts.Capped, o.To.Name))
	}
	return res, err
}

// headerRefusal says why the serialization header's EncodingStats minima
// cannot carry over to version to: row bodies are copied as stored, as
// deltas from these minima, so the target must store the same minima and
// read every delta the same way. It cannot when a minimum is more than an
// int away from its epoch (a negative local deletion time left by a
// Cassandra 3.x/4.x overflow, CASSANDRA-14092), or when the source's
// release cast a stored minimum with (int) and the target's would not.
// "" when they carry over.
// minimaUnused reports whether Statistics.db records no local deletion
// time and no TTL at all, so no row body holds a delta from the header's
// EncodingStats minima for them.
func minimaUnused(st *stats.Stats) bool {
	return st != nil && st.MinLocalDeletionTime == stats.NoDeletionTime && st.MaxLocalDeletionTime == stats.NoDeletionTime &&
		st.MinTTL == 0 && st.MaxTTL == 0
}

func headerRefusal(h *stats.Header, from, to format.Version) string {
	if h == nil {
		return ""
	}
	var notes []string
	if from.CheckedIntVInts != to.CheckedIntVInts {
		notes = h.CastMinima()
	}
	if d := h.MinLocalDeletionTime - stats.DeletionTimeEpoch; d != int64(int32(d)) {
		notes = append(notes, fmt.Sprintf("EncodingStats min local deletion time %d is more than an int from the epoch, which %s cannot store (negative: deletion times that overflowed, CASSANDRA-14092)", h.MinLocalDeletionTime, to.Name))
	}
	if h.MinTTL != int64(int32(h.MinTTL)) {
		notes = append(notes, fmt.Sprintf("EncodingStats min TTL %d does not fit an int", h.MinTTL))
	}
	if len(notes) == 0 {
		return ""
	}
	return fmt.Sprintf("%s; row bodies are copied as deltas from it, so run sstablescrub on the node first (it rewrites them)", strings.Join(notes, "; "))
}

// PlaceCount is the count of LIVE and non-LIVE DeletionTimes in one place.
type PlaceCount struct {
	Place   string `json:"place"`
	Live    int64  `json:"live"`
	NonLive int64  `json:"non_live"`
}

// ByPlace lists the counts with place names.
func (c *Counts) ByPlace() []PlaceCount {
	out := make([]PlaceCount, placeCount)
	for p := Place(0); p < placeCount; p++ {
		out[p] = PlaceCount{Place: p.String(), Live: c.Live[p], NonLive: c.NonLive[p]}
	}
	return out
}

// MarshalJSON writes the counts by place name.
func (c Counts) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Places              []PlaceCount `json:"places"`
		BlocksWithoutMarker int64        `json:"index_blocks_without_marker"`
		Capped              int64        `json:"capped"`
	}{c.ByPlace(), c.BlocksWithoutMarker, c.Capped})
}
