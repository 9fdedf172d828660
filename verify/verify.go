// Package verify checks an sstable the way sstableverify does and more:
// every checksum Cassandra writes (per-chunk CRC32 of compressed Data.db,
// CRC.db for uncompressed Data.db, Digest.crc32 over Data.db, the
// Statistics.db metadata checksums, checked when it is decoded) and the
// structure that ties the components together: every Index.db entry points
// at the start of a partition with the same key in Data.db, keys ascend in
// the partitioner's order, every promoted index block's first and last
// names, offset, width and end-open marker match the rows it covers (and
// the entry is byte for byte its canonical encoding), Summary.db's first
// and last keys are Index.db's and its samples are Index.db entries, the
// bloom filter holds every key and is not the empty always-present filter
// unless bloom_filter_fp_chance is 1, TOC.txt lists every component on
// disk. What the writer derives from the data is rebuilt and compared
// (rebuild.go): Filter.db, Summary.db's sampling, Statistics.db's
// partition sizes and every bound and count reads rely on (the only check
// of them before na, which stores no checksum; bounds wider than the rows
// are warnings, narrower ones problems). Data.db is decoded completely in
// one pass.
package verify

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/sstabletool/sstabletool/corrupt"
	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/format/filter"
	"github.com/sstabletool/sstabletool/internal/format/index"
	"github.com/sstabletool/sstabletool/internal/format/summary"
	"github.com/sstabletool/sstabletool/reader"
)

// Problem is one finding, located by file, component and byte offset.
type Problem struct {
	File      string `json:"file"`
	Component string `json:"component"`
	Offset    int64  `json:"offset"`
	Message   string `json:"message"`
}

func (p Problem) String() string {
	if p.Offset >= 0 {
		return fmt.Sprintf("%s: %s at byte %d: %s", p.File, p.Component, p.Offset, p.Message)
	}
	return fmt.Sprintf("%s: %s: %s", p.File, p.Component, p.Message)
}

// Report is the result for one sstable.
type Report struct {
	SSTable    string    `json:"sstable"`
	Partitions int64     `json:"partitions"`
	Checks     []string  `json:"checks"`
	Problems   []Problem `json:"problems"`
	// Notes are what is worth knowing but no problem: what Cassandra's
	// writers never produce and its readers accept (an option ScyllaDB
	// writes), or a table setting that can also be damage (a min index
	// interval other than the default). They do not make OK false.
	Notes []Problem `json:"notes,omitempty"`
	// Warnings are metadata wider than the data: Statistics.db bounds or
	// counts that cover more than the rows (as ScyllaDB writes some). A
	// read or compaction only looks at more than it needs, so they do not
	// make OK false; metadata that covers less is a problem. The verify
	// command adds what the table's schema says of the sstable (a column
	// type other than the header's, a table it cannot speak for).
	Warnings []Problem `json:"warnings,omitempty"`
	// raw makes add keep every problem, repeats included and past
	// maxProblems: a segment's list, which the report takes in order.
	raw bool
}

// OK reports whether no problem was found.
func (r *Report) OK() bool { return len(r.Problems) == 0 }

// maxProblems bounds the list for a badly damaged sstable.
const maxProblems = 100

func (r *Report) add(p Problem) {
	if r.raw {
		r.Problems = append(r.Problems, p)
		return
	}
	// The checksum pass and the decoding pass can meet the same bad chunk;
	// report it once.
	for _, q := range r.Problems {
		if q == p {
			return
		}
	}
	if len(r.Problems) < maxProblems {
		r.Problems = append(r.Problems, p)
	}
}

func (r *Report) addErr(file, component string, err error) {
	var ce *corrupt.Error
	if errors.As(err, &ce) {
		c := ce.Component
		if c == "" {
			c = component
		}
		f := ce.File
		if f == "" {
			f = file
		}
		msg := ce.Expected
		if ce.Err != nil {
			if msg != "" {
				msg = "expected " + msg + ": " + ce.Err.Error()
			} else {
				msg = ce.Err.Error()
			}
		}
		r.add(Problem{File: f, Component: c, Offset: ce.Offset, Message: msg})
		return
	}
	r.add(Problem{File: file, Component: component, Offset: -1, Message: err.Error()})
}

// SSTable verifies the sstable at path (any component). Progress, when not
// nil, is called with bytes of Data.db done.
func SSTable(path string, opts sstable.Options, progress func(done, total int64)) *Report {
	return check(path, opts, false, progress, nil, nil)
}

// SSTableChecksumsAndStructure is SSTable for a caller that decodes every
// cell of Data.db itself (convert's content comparison does): it checks
// every checksum and every cross-component fact the same way, but walks
// Data.db's rows by their sizes instead of decoding their cells twice.
func SSTableChecksumsAndStructure(path string, opts sstable.Options) *Report {
	return check(path, opts, true, nil, nil, nil)
}

// SSTableWritten is SSTableChecksumsAndStructure for the writer of the
// sstable, which compares its content with what it meant to write (see
// Written). Its report is SSTableChecksumsAndStructure's.
func SSTableWritten(path string, opts sstable.Options, w Written) *Report {
	return check(path, opts, true, nil, nil, &w)
}

// Written is what the writer of an sstable gives SSTableWritten.
type Written struct {
	// Keys is the bloom filter of every key written, as they were written
	// (convert compares the output's keys with the source's): Filter.db
	// is checked against it (every bit both ways, as against a filter
	// rebuilt from Data.db's keys) instead of against a rebuilt one, so
	// the keys are not hashed again. Keys must be settled by nothing else
	// while the check runs. A Filter.db of another hash count or capacity
	// is checked against a rebuilt filter, as by SSTable. Nil: rebuilt.
	Keys *filter.BloomFilter
	// Content, when set, receives the rows.Digest of every partition the
	// walk reads, for the writer to compare with the digest of what it
	// wrote: the walk then reads each unfiltered's frame and body bytes
	// where it would only step over them by their sizes.
	Content *rows.Digest
}

// SSTableFollowed is SSTableChecksumsAndStructure for a caller that reads
// every unfiltered of Data.db along with the structure walk (convert
// compares its output with the source so): the walk decodes every
// unfiltered and hands it to f, so that Data.db is decoded once. What is
// checked is SSTableChecksumsAndStructure's, and so is the report, but
// that rows decoded for f are checked as decoded: a row that does not
// decode is a problem here, as it is for SSTable.
func SSTableFollowed(path string, opts sstable.Options, f Follower) *Report {
	return check(path, opts, true, nil, f, nil)
}

// A Follower reads Data.db along with the structure walk (SSTableFollowed).
// The walk runs a segment of Data.db at a time, on every core
// (sstable.Segmented). Segment is called on the goroutine that walks seg,
// before its first partition, at once for different segments, and returns
// what reads that segment's partitions, as the walk decodes them. Take is
// called on the calling goroutine with each segment's reader in Data.db
// order, once its segment is walked and taken into the report; a segment
// the walk refuses (it does not follow from the one before; the walk then
// goes on alone from its start, in Serial segments) is not taken. A walk
// that stops at damage ends with the partitions before it: the report
// says so.
type Follower interface {
	Segment(seg sstable.Segment) SegmentReader
	Take(SegmentReader)
}

// A SegmentReader sees one segment's partitions in order: each header,
// then each unfiltered (the static row first), then the partition's end
// with the Data.db position after it.
type SegmentReader interface {
	Partition(h *rows.PartitionHeader)
	Unfiltered(u *rows.Unfiltered)
	End(pos int64)
}

func check(path string, opts sstable.Options, skimRows bool, progress func(done, total int64), follow Follower, written *Written) *Report {
	r := &Report{SSTable: path}
	desc, _, err := format.ParseDescriptor(path)
	if err != nil {
		r.add(Problem{File: path, Component: "descriptor", Offset: -1, Message: err.Error()})
		return r
	}
	r.SSTable = desc.Path(format.ComponentData)
	opts.NoVerify = false
	s, err := sstable.Open(path, opts)
	if err != nil {
		r.addErr(path, "sstable", err)
		return r
	}
	defer s.Close()
	r.Checks = append(r.Checks, "Statistics.db checksums and layout")
	checkComponentsPresent(s, r)
	checkHeaderTypes(s, r)
	// The chunks' CRC32s are taken by the structure walk's reads (the
	// floor's order: each chunk checked as it is decompressed, in one
	// pass over its bytes); the checksum pass after it checks only the
	// chunks the walk did not read and takes Digest.crc32's CRC32 from the
	// chunks' (reader.VerifyChunksDigest). Its problems are reported
	// before the walk's, as when it ran first.
	after := checkChecksums(s, r)
	mark := len(r.Problems)
	checkStructure(s, r, skimRows, progress, follow, written)
	walked := slices.Clone(r.Problems[mark:])
	r.Problems = r.Problems[:mark]
	after()
	for _, p := range walked {
		r.add(p)
	}
	checkIndexes(s, r)
	return r
}

// checkComponentsPresent lists every component that should be there and is
// not: those TOC.txt names, TOC.txt itself, and (with no TOC to go by) the
// summary, filter and digest every big-format writer produces. Reads do
// without them (the summary is rebuilt in memory), so they are problems
// for the verifier only. A missing CRC.db is reported with the checksums.
func checkComponentsPresent(s *sstable.SSTable, r *Report) {
	// A TOC.txt line that is no component file name (a path, control
	// characters) was never written by Cassandra; reads ignore it, as
	// Cassandra ignores a listed component it cannot find.
	for _, e := range s.BadTOCEntries() {
		r.add(Problem{File: s.Path(format.ComponentTOC), Component: format.ComponentTOC, Offset: e.Offset,
			Message: fmt.Sprintf("line %d, %s, is not a component file name: %s (ignored)", e.Line, e.Quoted(), e.Why)})
	}
	for _, c := range s.UnlistedComponents() {
		r.add(Problem{File: s.Path(format.ComponentTOC), Component: format.ComponentTOC, Offset: -1,
			Message: fmt.Sprintf("does not list %s, which is on disk (Cassandra takes an sstable's components from TOC.txt)", c)})
	}
	missing := s.MissingComponents()
	if len(s.TOC()) == 0 {
		derived := []string{format.ComponentSummary, format.ComponentFilter, format.ComponentDigest}
		if s.Version().IsBTI() {
			// BTI has no summary; its tries are checked with the structure.
			derived = derived[1:]
		}
		for _, c := range derived {
			if !s.HasComponent(c) {
				missing = append(missing, c)
			}
		}
	}
	for _, c := range missing {
		if c == format.ComponentCRC {
			continue
		}
		msg := "missing (TOC.txt lists it)"
		switch {
		case c == format.ComponentTOC:
			msg = "missing: the sstable's list of components is gone"
		case len(s.TOC()) == 0:
			msg = "missing (every big-format writer produces it)"
		}
		if c == format.ComponentSummary && s.Index() != nil {
			msg += "; reads sample Index.db in its place, as Cassandra rebuilds it"
		}
		r.add(Problem{File: s.Path(c), Component: c, Offset: -1, Message: msg})
	}
}

// checkChecksums checks what is known before Data.db is read
// (CompressionInfo.db) and returns the check of the chunks and the digest,
// to run once the structure walk has read Data.db.
func checkChecksums(s *sstable.SSTable, r *Report) (after func()) {
	dataPath := s.Path(format.ComponentData)
	var chunks func() (digest uint32, ok bool)
	if s.Data().Compressed() {
		r.Checks = append(r.Checks, "Data.db chunk CRC32s")
		info := s.Data().Info()
		for _, err := range info.Check(s.Path(format.ComponentCompressionInfo)) {
			r.addErr(s.Path(format.ComponentCompressionInfo), "CompressionInfo.db", err)
		}
		if s.Data().LengthFromChunks() {
			r.add(Problem{File: s.Path(format.ComponentCompressionInfo), Component: "CompressionInfo.db", Offset: info.DataLengthOffset(),
				Message: fmt.Sprintf("uncompressed data length %d, but the chunks hold %d bytes (reads take the chunks' length)", info.DataLength, s.Data().Length())})
		}
		for _, k := range info.NonCassandraOptions() {
			r.Notes = append(r.Notes, Problem{File: s.Path(format.ComponentCompressionInfo), Component: "CompressionInfo.db", Offset: -1,
				Message: fmt.Sprintf("compressor option %s=%s is not Cassandra's: ScyllaDB writes it, Cassandra 3.0 to 5.0 drop it when they read the file (5.1 refuses it); it changes nothing in Data.db", k, info.Options[k])})
		}
		chunks = func() (uint32, bool) {
			errs, digest, ok := reader.VerifyChunksDigest(s.Data())
			for _, err := range errs {
				r.addErr(dataPath, "Data.db", err)
			}
			return digest, ok
		}
	} else if s.HasComponent(format.ComponentCRC) {
		r.Checks = append(r.Checks, "CRC.db chunk checksums")
		chunks = func() (uint32, bool) {
			b, err := os.ReadFile(s.Path(format.ComponentCRC))
			if err != nil {
				r.addErr(s.Path(format.ComponentCRC), "CRC.db", err)
			} else if cs, err := reader.DecodeChecksums(b); err != nil {
				r.addErr(s.Path(format.ComponentCRC), "CRC.db", err)
			} else {
				for _, err := range cs.Verify(s.Data().File()) {
					r.addErr(dataPath, "Data.db", err)
				}
			}
			return 0, false
		}
	} else {
		chunks = func() (uint32, bool) {
			r.add(Problem{File: dataPath, Component: "CRC.db", Offset: -1, Message: "uncompressed Data.db without CRC.db: its chunks cannot be checked"})
			return 0, false
		}
	}
	hasDigest := s.HasComponent(format.ComponentDigest)
	if hasDigest {
		r.Checks = append(r.Checks, "Digest.crc32")
	}
	return func() {
		got, known := chunks()
		if !hasDigest {
			return
		}
		b, err := os.ReadFile(s.Path(format.ComponentDigest))
		if err != nil {
			r.addErr(s.Path(format.ComponentDigest), "Digest.crc32", err)
			return
		}
		want, err := reader.ParseDigestFile(b)
		if err != nil {
			r.addErr(s.Path(format.ComponentDigest), "Digest.crc32", err)
			return
		}
		if !known {
			if got, err = reader.DigestCRC32(s.Data().File()); err != nil {
				r.addErr(dataPath, "Data.db", err)
				return
			}
		}
		if got != want {
			r.add(Problem{File: dataPath, Component: "Digest.crc32", Offset: -1,
				Message: fmt.Sprintf("CRC32 of Data.db is %d, Digest.crc32 says %d", got, want)})
		}
	}
}

// walkPartition reads the rest of the partition: every cell decoded (or,
// skimming, rows stepped over by their sizes, or with a digest, read
// frame by frame into dg), except that a partition with a promoted index
// is decoded unfiltered by unfiltered beside its blocks (the decoder's
// tap then gives dg those rows). each, when the rows are decoded, sees
// every unfiltered.
func walkPartition(dec *rows.Decoder, h *rows.PartitionHeader, bw *blockWalk, rw *rowsWalk, skimRows bool, each func(*rows.Unfiltered), dg *rows.Digest) error {
	if bw == nil && rw == nil && skimRows {
		if dg != nil {
			return dec.DigestRest(dg)
		}
		return dec.SkipRest()
	}
	for {
		u, err := dec.Next(false)
		if err != nil {
			return err
		}
		if u == nil {
			switch {
			case rw != nil:
				rw.finish()
			case bw != nil:
				bw.finish(dec.Pos() - h.Offset)
			}
			return nil
		}
		each(u)
		switch {
		case rw != nil:
			rw.unfiltered(u)
		case bw != nil:
			bw.unfiltered(u, u.Offset-h.Offset)
		}
	}
}

// checkFilterKind flags an empty Filter.db (the always-present filter) on
// an sstable whose bloom_filter_fp_chance asks for a real one: Cassandra
// writes that filter only for fp chance 1.0 (FilterFactory.getFilter), so
// an empty file for any other chance is a lost filter, and every read then
// goes to disk.
func checkFilterKind(s *sstable.SSTable, r *Report, bf *filter.BloomFilter) {
	if bf == nil || !bf.IsAlwaysPresent() || r.Partitions == 0 || s.Stats() == nil || s.Stats().Validation == nil {
		return
	}
	if fp := s.Stats().Validation.BloomFilterFPChance; fp < 1 {
		r.add(Problem{File: s.Path(format.ComponentFilter), Component: "Filter.db", Offset: -1,
			Message: fmt.Sprintf("empty (the always-present filter), but Statistics.db's bloom_filter_fp_chance is %v: Cassandra writes an empty filter only for 1.0", fp)})
	}
}

// checkEntry compares the Index.db entry with the partition header; it
// reports whether the entry is the partition's, so its promoted index can
// be checked against the partition's rows.
func checkEntry(indexPath string, r *Report, idx *index.Scanner, h *rows.PartitionHeader) bool {
	e := idx.Entry()
	if e.Position != h.Offset {
		r.add(Problem{File: indexPath, Component: "Index.db", Offset: idx.EntryPos(),
			Message: fmt.Sprintf("entry points at Data.db byte %d, the partition starts at %d", e.Position, h.Offset)})
		return false
	}
	if !bytes.Equal(e.Key, h.Key) {
		r.add(Problem{File: indexPath, Component: "Index.db", Offset: idx.EntryPos(),
			Message: fmt.Sprintf("entry key %x, Data.db partition key %x", e.Key, h.Key)})
		return false
	}
	if e.Indexed() {
		if e.Deletion != h.Deletion {
			r.add(Problem{File: indexPath, Component: "Index.db", Offset: idx.EntryPos(),
				Message: fmt.Sprintf("promoted index DeletionTime %+v, partition header %+v", e.Deletion, h.Deletion)})
		}
		if e.HeaderLength < int64(h.Size) {
			r.add(Problem{File: indexPath, Component: "Index.db", Offset: idx.EntryPos(),
				Message: fmt.Sprintf("promoted index header length %d is below the partition header's %d bytes", e.HeaderLength, h.Size)})
			return false
		}
	}
	return true
}

// summaryCheck walks Summary.db's samples in step with the Index.db scan,
// so the check needs no memory per partition.
type summaryCheck struct {
	s    *sstable.SSTable
	r    *Report
	sum  *summary.Summary
	next int
	path string
	// lastKey is the last Index.db key seen.
	lastKey []byte
	seen    bool
	// rebuilt samples Index.db as Cassandra's IndexSummaryBuilder does at
	// Summary.db's own min index interval and sampling level (nil when
	// those cannot be built with); reported counts problems found.
	rebuilt  *summary.Builder
	reported int
}

func newSummaryCheck(s *sstable.SSTable, r *Report) *summaryCheck {
	c := &summaryCheck{s: s, r: r, path: s.Path(format.ComponentSummary)}
	if !s.HasComponent(format.ComponentSummary) || s.Index() == nil {
		return c
	}
	sum, err := s.Summary()
	if err != nil {
		r.addErr(c.path, "Summary.db", err)
		return c
	}
	c.sum = sum
	r.Checks = append(r.Checks, "Summary.db first, last and sampled keys are Index.db's")
	c.rebuilt, _ = summary.NewBuilder(0, sum.MinIndexInterval, sum.SamplingLevel)
	if sum.MinIndexInterval != defaultMinIndexInterval {
		// Legitimate for a table that sets min_index_interval; on fewer
		// keys than the interval nothing else tells a damaged one.
		r.Notes = append(r.Notes, Problem{File: c.path, Component: "Summary.db", Offset: 0,
			Message: fmt.Sprintf("min index interval %d, not the default %d: Cassandra rebuilds a summary whose interval is not the table's min_index_interval", sum.MinIndexInterval, defaultMinIndexInterval)})
	}
	return c
}

// defaultMinIndexInterval is the table option min_index_interval's default.
const defaultMinIndexInterval = 128

func (c *summaryCheck) add(p Problem) {
	c.reported++
	c.r.add(p)
}

func (c *summaryCheck) entry(pos int64, key []byte) {
	if c.sum == nil {
		return
	}
	c.lastKey, c.seen = append(c.lastKey[:0], key...), true
	if c.rebuilt != nil {
		c.rebuilt.Add(key, pos)
	}
	if pos == 0 && !bytes.Equal(c.sum.First, key) {
		c.add(Problem{File: c.path, Component: "Summary.db", Offset: -1,
			Message: fmt.Sprintf("first key %x, Index.db's first key %x", c.sum.First, key)})
	}
	for c.next < c.sum.Len() && c.sum.Position(c.next) < pos {
		c.add(Problem{File: c.path, Component: "Summary.db", Offset: -1,
			Message: fmt.Sprintf("sample %d points at Index.db byte %d, which is not an entry", c.next, c.sum.Position(c.next))})
		c.next++
	}
	if c.next < c.sum.Len() && c.sum.Position(c.next) == pos {
		if !bytes.Equal(key, c.sum.Key(c.next)) {
			c.add(Problem{File: c.path, Component: "Summary.db", Offset: -1,
				Message: fmt.Sprintf("sample %d key %x, Index.db entry key %x", c.next, c.sum.Key(c.next), key)})
		}
		c.next++
	}
}

// finish checks what is left once Index.db is read: Summary.db's last key
// must be Index.db's last (Cassandra takes the sstable's last key from Summary.db, and its
// verifier compares it with the index's).
func (c *summaryCheck) finish() {
	if c.sum == nil {
		return
	}
	if c.seen && !bytes.Equal(c.sum.Last, c.lastKey) {
		c.add(Problem{File: c.path, Component: "Summary.db", Offset: -1,
			Message: fmt.Sprintf("last key %x, Index.db's last key %x", c.sum.Last, c.lastKey)})
	}
	for ; c.next < c.sum.Len(); c.next++ {
		c.add(Problem{File: c.path, Component: "Summary.db", Offset: -1,
			Message: fmt.Sprintf("sample %d points at Index.db byte %d, past the last entry", c.next, c.sum.Position(c.next))})
	}
	c.compareRebuilt()
}

// compareRebuilt compares Summary.db with the summary Cassandra would
// build from Index.db at Summary.db's own min index interval and sampling
// level: which entries are sampled (a damaged interval or level, or a
// sample moved to another entry) and the size at full sampling. Only when
// the samples themselves raised nothing, which would echo here.
func (c *summaryCheck) compareRebuilt() {
	if c.rebuilt == nil || !c.seen || c.reported > 0 {
		return
	}
	want, err := c.rebuilt.Build()
	if err != nil {
		return
	}
	got := c.sum
	at := fmt.Sprintf("min index interval %d and sampling level %d", got.MinIndexInterval, got.SamplingLevel)
	if want.Len() != got.Len() {
		c.add(Problem{File: c.path, Component: "Summary.db", Offset: 4,
			Message: fmt.Sprintf("%d samples; %s sample Index.db's entries into %d", got.Len(), at, want.Len())})
	} else {
		for i := range want.Len() {
			if want.Position(i) != got.Position(i) {
				c.add(Problem{File: c.path, Component: "Summary.db", Offset: -1,
					Message: fmt.Sprintf("sample %d is Index.db's entry at byte %d; %s sample the one at byte %d", i, got.Position(i), at, want.Position(i))})
				break
			}
		}
	}
	// Cassandra rounds keys / interval up; ScyllaDB's writer rounds it
	// down (its one-partition sstables say 0). Readers only estimate
	// with it.
	floor := int(c.rebuilt.Keys() / int64(got.MinIndexInterval))
	if got.SizeAtFullSampling != want.SizeAtFullSampling && got.SizeAtFullSampling != floor {
		c.add(Problem{File: c.path, Component: "Summary.db", Offset: 20,
			Message: fmt.Sprintf("size at full sampling %d; Index.db's entries at min index interval %d give %d", got.SizeAtFullSampling, got.MinIndexInterval, want.SizeAtFullSampling)})
	}
}
