package convert

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/vfs"
	"github.com/sstabletool/sstabletool/internal/writer"
	"github.com/sstabletool/sstabletool/merge"
	"github.com/sstabletool/sstabletool/reader"
	"github.com/sstabletool/sstabletool/verify"
)

// An offline major compaction: a table's sstables merged (package merge)
// and written as one sstable, staged, fsynced, verified and committed as
// Convert commits; and its exact estimate, written to counters.

// MergeOptions controls a merged conversion.
type MergeOptions struct {
	// To is the output's version (any big or BTI version).
	To format.Version
	// Compression overrides the compression of the newest input; nil
	// keeps it. Uncompressed writes Data.db uncompressed (with CRC.db).
	Compression  *writer.Compression
	Uncompressed bool
	// ColumnIndexSize is column_index_size in bytes (0: the target
	// format's default).
	ColumnIndexSize int
	// Verify re-reads the staged output before it is committed:
	// verify.SSTable must pass and its content must equal a second merge
	// of the inputs, partition by partition, cell by cell.
	Verify bool
	// Merge says when the compaction happens and whether it purges.
	Merge merge.Options
	// Generation is the output's generation: "" for one past the inputs'
	// greatest (1 when they are not numbered).
	Generation string
	// Progress, when set, is called with the inputs' Data.db bytes read.
	Progress func(done, total int64)
	// Access is how the output is read back when verifying.
	Access reader.Access
	// DropIndexComponents: as Options.DropIndexComponents.
	DropIndexComponents bool
}

// Merge writes the merged table t into outDir as one sstable,
// crash-safely (see package writer); the inputs are only read. It returns
// the result even when verification fails (with Problems), with the
// error.
func Merge(t *merge.Table, outDir string, o MergeOptions) (*Result, error) {
	return mergeOn(vfs.Default, t, outDir, o)
}

// mergeOn is Merge writing through fsys (the tests' fault seam).
func mergeOn(fsys vfs.FS, t *merge.Table, outDir string, o MergeOptions) (*Result, error) {
	desc := outputDescriptor(t, outDir, o)
	var dropped []string
	if o.DropIndexComponents {
		var err error
		if dropped, err = writer.DropStaleIndexFiles(fsys, desc.Dir, desc.Prefix()); err != nil {
			return nil, err
		}
	}
	res, err := staged(fsys, desc, o.Verify, func(out writer.Output, dir string) (*Result, error) {
		return writeMerged(t, out, dir, desc, o, nil)
	}, func(data string, res *Result) error { return verifyMerged(t, data, o, res) })
	if res != nil {
		res.DroppedIndexFiles = dropped
	}
	return res, err
}

// EstimateMerge is what Merge would write, without writing: every
// component is produced and only counted (Data.db really compressed), and
// the bytes the merge reclaims are attributed to their reasons.
func EstimateMerge(t *merge.Table, o MergeOptions) (*Result, error) {
	desc := outputDescriptor(t, "", o)
	acc := &merge.Reclaim{}
	res, err := writeMerged(t, countingOutput{}, "", desc, o, acc)
	if err != nil {
		return res, err
	}
	res.Reclaimed = acc
	return res, nil
}

// outputDescriptor names the output: the target version, in outDir, one
// generation past the inputs' greatest.
func outputDescriptor(t *merge.Table, outDir string, o MergeOptions) format.Descriptor {
	gen := o.Generation
	if gen == "" {
		max := int64(0)
		numbered := true
		for _, s := range t.SSTables() {
			n, err := strconv.ParseInt(s.Desc().Generation, 10, 64)
			numbered = numbered && err == nil
			max = maxInt(max, n)
		}
		gen = "1"
		if numbered {
			gen = strconv.FormatInt(max+1, 10)
		}
	}
	return format.Descriptor{Dir: outDir, Version: o.To, Generation: gen}
}

func maxInt(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

// writeMerged streams the merged partitions into an SSTableWriter over
// out and accounts for every component. acc, when set, attributes the
// reclaimed bytes.
func writeMerged(t *merge.Table, out writer.Output, dir string, desc format.Descriptor, o MergeOptions, acc *merge.Reclaim) (*Result, error) {
	if o.To.Name == "" {
		return nil, errors.New("convert: no target version")
	}
	ssts := t.SSTables()
	newest := ssts[len(ssts)-1]
	var froms []string
	for _, s := range ssts {
		if !slices.Contains(froms, s.Version().Name) {
			froms = append(froms, s.Version().Name)
		}
		if s.Stats().Validation == nil {
			return nil, fmt.Errorf("%s: Statistics.db has no validation component, which a merged sstable's needs", s.Path(format.ComponentStatistics))
		}
	}
	res := &Result{Source: t.Dir().Dir, From: strings.Join(froms, "+"), To: o.To.Name}
	for i := range ssts {
		res.Inputs = append(res.Inputs, t.Name(i))
	}
	comp := outputCompression(newest, o.Compression, o.Uncompressed)
	// The filter is sized before the keys arrive: for the inputs' key
	// counts added up (what Cassandra falls back to when it cannot merge
	// their cardinality sketches; an upper bound of the merged count).
	var keys int64
	for _, s := range ssts {
		n, err := countKeys(s)
		if err != nil {
			return nil, err
		}
		keys += n
	}
	minInterval, _, err := summarySampling(newest)
	if err != nil {
		return nil, err
	}
	cfg := writer.Config{Version: o.To, Generation: desc.Generation, Header: t.Header(), Schema: t.SchemaFor(o.To),
		Partitioner: t.Partitioner().Name(), Compression: comp, ColumnIndexSize: o.ColumnIndexSize, MinIndexInterval: minInterval,
		BloomFilterFPChance: newest.Stats().Validation.BloomFilterFPChance, ExpectedKeys: keys, RepairedAt: repairedAt(ssts)}
	w, err := writer.NewSSTableWriterTo(out, dir, cfg)
	if err != nil {
		return res, err
	}
	fail := func(err error) (*Result, error) {
		w.Abort()
		return res, err
	}
	sc, err := t.Scan(o.Merge)
	if err != nil {
		return fail(err)
	}
	if acc != nil {
		sc.Account(acc)
	}
	total := t.DataLength()
	for {
		p, err := sc.Next()
		if err != nil {
			return fail(err)
		}
		if p == nil {
			break
		}
		if err := w.StartPartition(p.Header.Key, p.Header.Deletion); err != nil {
			return fail(fmt.Errorf("%s: partition %x: %w", t.Dir().Dir, p.Header.Key, err))
		}
		for {
			u, err := p.Next()
			if err != nil {
				return fail(err)
			}
			if u == nil {
				break
			}
			if u.Kind == rows.KindStaticRow {
				err = w.AddStatic(u)
			} else {
				err = w.Add(u)
			}
			if err != nil {
				return fail(fmt.Errorf("writing partition %x: %w", p.Header.Key, err))
			}
		}
		if err := w.EndPartition(); err != nil {
			return fail(err)
		}
		res.Partitions++
		if o.Progress != nil && res.Partitions%1024 == 0 {
			o.Progress(sc.Pos(), total)
		}
	}
	written, err := w.Close()
	if err != nil {
		return fail(err)
	}
	if o.Progress != nil {
		o.Progress(total, total)
	}
	// Before: what the inputs hold of each component, added up.
	inputSize := func(name string) int64 {
		var n int64
		for _, s := range ssts {
			n += fileSize(s.Path(name))
		}
		return n
	}
	var toc []string
	for _, c := range written.Components {
		res.Components = append(res.Components, Component{Name: c.Name, Before: inputSize(c.Name), After: c.Size})
		toc = append(toc, c.Name)
	}
	seen := map[string]bool{}
	res.IndexFiles = Component{Name: "SAI and SASI files"}
	for _, s := range ssts {
		for _, f := range s.IndexFiles() {
			res.IndexFiles.Before += max(f.Size, 0)
			seen[f.Component] = true // apart: not dropped for good, Cassandra builds them again
		}
	}
	for _, s := range ssts {
		for _, name := range s.TOC() {
			if !slices.Contains(toc, name) && !seen[name] && s.HasComponent(name) {
				seen[name] = true
				res.Dropped = append(res.Dropped, Component{Name: name, Before: inputSize(name)})
			}
		}
	}
	var dataBefore int64
	for _, s := range ssts {
		dataBefore += s.Data().Length()
	}
	res.DataUncompressed = Component{Name: "Data.db (uncompressed)", Before: dataBefore, After: written.Data.Length}
	idx := writer.IndexComponents(o.To)
	res.Index = Component{Name: "the inputs' partition indexes -> " + strings.Join(idx, "+")}
	for _, s := range ssts {
		for _, name := range writer.IndexComponents(s.Version()) {
			res.Index.Before += fileSize(s.Path(name))
		}
	}
	for _, c := range written.Components {
		if slices.Contains(idx, c.Name) {
			res.Index.After += c.Size
		}
	}
	res.CompressionInfo, res.Checksums = written.Data.Info, written.Data.Checksums
	res.stats = written.Statistics
	if acc != nil {
		acc.Finish(res.DataUncompressed.Before - res.DataUncompressed.After)
	}
	return res, nil
}

// repairedAt is what CompactionTask gives the output: the inputs' oldest
// repairedAt when every one is repaired, else unrepaired (0).
func repairedAt(ssts []*sstable.SSTable) int64 {
	var min int64
	for i, s := range ssts {
		st := s.Stats().Stats
		if st == nil || st.RepairedAt == 0 {
			return 0
		}
		if i == 0 || st.RepairedAt < min {
			min = st.RepairedAt
		}
	}
	return min
}

// verifyMerged checks the staged output: verify.SSTable must pass, and
// its content must equal a second merge of the inputs.
func verifyMerged(t *merge.Table, stagedData string, o MergeOptions, res *Result) error {
	// verify's walk and the second merge read independently, at once.
	repc := make(chan *verify.Report, 1)
	go func() { repc <- verify.SSTableChecksumsAndStructure(stagedData, sstable.Options{Access: o.Access}) }()
	cmpErr := sameAsMerge(t, stagedData, o)
	return checkWritten("merged "+t.Dir().Dir, <-repc, cmpErr, res)
}

// sameAsMerge compares the written sstable with the merge, partition by
// partition and unfiltered by unfiltered: keys, deletions, clusterings and
// bounds, liveness, and every cell's timestamp, TTL, deletion time, path
// and value (flags are the encoder's to choose, positions the output's).
func sameAsMerge(t *merge.Table, stagedData string, o MergeOptions) error {
	out, err := sstable.Open(stagedData, sstable.Options{Access: o.Access})
	if err != nil {
		return fmt.Errorf("reopening the output: %w", err)
	}
	defer out.Close()
	sc, err := t.Scan(o.Merge)
	if err != nil {
		return err
	}
	dec := out.Decoder(0)
	var h rows.PartitionHeader
	for n := 0; ; n++ {
		p, err := sc.Next()
		if err != nil {
			return err
		}
		herr := dec.ReadPartitionHeader(&h)
		if p == nil {
			if errors.Is(herr, io.EOF) {
				return nil
			}
			return fmt.Errorf("the output has more partitions than the merge's %d", n)
		}
		if herr != nil {
			return fmt.Errorf("partition %d (%x): %w", n, p.Header.Key, herr)
		}
		if string(h.Key) != string(p.Header.Key) || h.Deletion != p.Header.Deletion {
			return fmt.Errorf("partition %d: the merge has key %x deletion %+v, the output key %x deletion %+v", n, p.Header.Key, p.Header.Deletion, h.Key, h.Deletion)
		}
		for i := 0; ; i++ {
			a, err := p.Next()
			if err != nil {
				return err
			}
			b, err := dec.Next(false)
			if err != nil {
				return err
			}
			if a == nil || b == nil {
				if a != b {
					return fmt.Errorf("partition %x: one has more unfiltereds than the other after %d", h.Key, i)
				}
				break
			}
			if !sameMerged(a, b) {
				return fmt.Errorf("partition %x, unfiltered %d differs:\n%s", h.Key, i, DescribeDiff(a, b))
			}
		}
	}
}

func sameMerged(a, b *rows.Unfiltered) bool {
	if a.Kind != b.Kind || a.Liveness != b.Liveness || !sameRowDeletion(a, b) || a.EndDeletion != b.EndDeletion ||
		a.StartDeletion != b.StartDeletion || a.Bound.Kind != b.Bound.Kind || !sameValues(a.Clustering, b.Clustering) ||
		!sameValues(a.Bound.Values, b.Bound.Values) || len(a.Cells) != len(b.Cells) || len(a.ComplexDeletions) != len(b.ComplexDeletions) {
		return false
	}
	for i := range a.Cells {
		ca, cb := &a.Cells[i], &b.Cells[i]
		if ca.Column != cb.Column || ca.IsTombstone() != cb.IsTombstone() || ca.IsExpiring() != cb.IsExpiring() || ca.Timestamp != cb.Timestamp ||
			ca.LocalDeletionTime != cb.LocalDeletionTime || ca.TTL != cb.TTL || string(ca.Path) != string(cb.Path) || string(ca.Value) != string(cb.Value) {
			return false
		}
	}
	for i := range a.ComplexDeletions {
		if a.ComplexDeletions[i] != b.ComplexDeletions[i] {
			return false
		}
	}
	return true
}
