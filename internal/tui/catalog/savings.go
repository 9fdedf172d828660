package catalog

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sstabletool/sstabletool/convert"
	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/oa"
	"github.com/sstabletool/sstabletool/internal/words"
	"github.com/sstabletool/sstabletool/reader"
)

// Savings is what rewriting a legacy sstable as oa would save, from
// convert.Estimate: every component produced in memory and counted,
// Data.db recompressed chunk by chunk.
type Savings struct {
	Before, After int64 // all components, bytes on disk
	// DataBefore/After and IndexBefore/After are Data.db and Index.db.
	DataBefore, DataAfter   int64
	IndexBefore, IndexAfter int64
	// LiveHeaders is the number of LIVE partition DeletionTimes (12 -> 1 byte).
	LiveHeaders int64
	// LiveIndexEntries is the number of LIVE promoted-index DeletionTimes.
	LiveIndexEntries int64
	// LiveIndexBlocks is the number of LIVE end-open markers of index blocks.
	LiveIndexBlocks int64
	// Partitions is the number of partitions written.
	Partitions int64
	// Components are every component's size now and as oa, on disk.
	Components []convert.Component
	// DataUncompressed is Data.db's uncompressed length now and as oa.
	DataUncompressed convert.Component
	// From is the sstable's version.
	From format.Version
	// The chunk metadata of Data.db now and as oa: CompressionInfo.db's
	// when compressed, CRC.db's when not (nil when absent or unreadable).
	CompressionBefore, CompressionAfter *reader.CompressionInfo
	ChecksumsBefore, ChecksumsAfter     *reader.ChunkChecksums
	// TOCBefore lists the components the source's TOC.txt names.
	TOCBefore []string
	// DigestBefore is the source's Digest.crc32 text.
	DigestBefore []byte
}

// Saved is the bytes the rewrite saves on disk, all components together
// (negative when the oa files would be larger).
func (s *Savings) Saved() int64 { return s.Before - s.After }

// NeedsConversion reports whether the sstable is in a legacy layout that oa
// would shrink (its DeletionTimes are 12 bytes).
func (t *Table) NeedsConversion() bool {
	return t.S.Version().DeletionTimeLayout() != oa.Version.DeletionTimeLayout()
}

// EstimateOA estimates the oa rewrite; progress gets Data.db bytes done.
func (t *Table) EstimateOA(progress func(done, total int64)) (*Savings, error) {
	res, err := convert.Estimate(t.DataPath(), convert.Options{To: oa.Version, Access: t.access, Progress: progress})
	if err != nil {
		return nil, err
	}
	s := &Savings{
		LiveHeaders:       res.Counts.Live[convert.PlacePartitionHeader],
		LiveIndexEntries:  res.Counts.Live[convert.PlaceIndexEntry],
		LiveIndexBlocks:   res.Counts.Live[convert.PlaceIndexBlock],
		Partitions:        res.Partitions,
		Components:        res.Components,
		DataUncompressed:  res.DataUncompressed,
		From:              t.S.Version(),
		CompressionBefore: t.S.Data().Info(),
		CompressionAfter:  res.CompressionInfo,
		ChecksumsAfter:    res.Checksums,
		TOCBefore:         t.S.TOC(),
	}
	// CRC.db as the reader decoded it to check the chunks; read here only
	// when the sstable was opened without checking them.
	s.ChecksumsBefore = t.S.Data().Checksums()
	if s.ChecksumsBefore == nil && !t.S.Data().Compressed() && t.S.HasComponent(format.ComponentCRC) {
		if b, err := reader.ReadFile(t.S.Path(format.ComponentCRC)); err == nil {
			s.ChecksumsBefore, _ = reader.DecodeChecksums(b)
		}
	}
	if t.S.HasComponent(format.ComponentDigest) {
		s.DigestBefore, _ = reader.ReadFile(t.S.Path(format.ComponentDigest))
	}
	for _, c := range res.Components {
		s.Before += c.Before
		s.After += c.After
		switch c.Name {
		case format.ComponentData:
			s.DataBefore, s.DataAfter = c.Before, c.After
		case format.ComponentIndex:
			s.IndexBefore, s.IndexAfter = c.Before, c.After
		}
	}
	return s, nil
}

// Explain says, component by component, why the oa files are smaller or
// larger, from what differs between the source's files and those the
// estimate wrote: the DeletionTimes that shrink from 12 bytes to 1 in
// Data.db and Index.db, Index.db's vints of the Data.db positions that
// shrink with them, the Statistics.db fields oa's layout adds or drops
// compared with the source version, CompressionInfo.db's and CRC.db's
// fields and chunk counts, Digest.crc32's digits, TOC.txt's names and the
// components the source lacks. One line per component (Data.db and
// Index.db share one when DeletionTimes are all there is to both); sizes
// are bytes on disk, Data.db's uncompressed change beside its on-disk one.
// A change no fact explains is named without a reason.
func (s *Savings) Explain() []string {
	var out []string
	change := func(name string) (convert.Component, bool) {
		for _, c := range s.Components {
			if c.Name == name {
				return c, c.Before != c.After
			}
		}
		return convert.Component{Name: name}, false
	}
	data, dataChanged := change(format.ComponentData)
	index, indexChanged := change(format.ComponentIndex)
	dataChanged = dataChanged && data.Before > 0
	indexChanged = indexChanged && index.Before > 0
	// Index.db: the LIVE DeletionTimes of entries with a promoted index
	// and of end-open markers, then the vints of positions and offsets
	// into Data.db, which shrink with the partition headers (the relinker
	// changes nothing else in an entry).
	indexDT := -oa.LiveSaving * (s.LiveIndexEntries + s.LiveIndexBlocks)
	indexRest := index.After - index.Before - indexDT
	var indexCounts []string
	if s.LiveIndexEntries > 0 {
		indexCounts = append(indexCounts, words.PluralGrouped(s.LiveIndexEntries, "index entry"))
	}
	if s.LiveIndexBlocks > 0 {
		indexCounts = append(indexCounts, words.PluralGrouped(s.LiveIndexBlocks, "index block end-open marker"))
	}
	var parts, counts []string
	if data.Before > 0 && (dataChanged || s.LiveHeaders > 0) {
		parts = append(parts, fmt.Sprintf("Data.db %s (%s uncompressed)", delta(data.After-data.Before), delta(s.DataUncompressed.After-s.DataUncompressed.Before)))
		if s.LiveHeaders > 0 {
			counts = append(counts, words.PluralGrouped(s.LiveHeaders, "partition header"))
		}
	}
	indexApart := indexChanged && (indexRest != 0 || indexDT == 0)
	if indexChanged && !indexApart {
		parts = append(parts, "Index.db "+delta(index.After-index.Before))
		counts = append(counts, indexCounts...)
	}
	if len(parts) > 0 {
		line := strings.Join(parts, ", ")
		if len(counts) > 0 {
			line += fmt.Sprintf(": DeletionTimes of %s take 1 byte instead of 12", joinAnd(counts))
		}
		if rest := s.DataUncompressed.After - s.DataUncompressed.Before + oa.LiveSaving*s.LiveHeaders; data.Before > 0 && rest != 0 {
			line += fmt.Sprintf(" (%s of Data.db's uncompressed change is not theirs)", delta(rest))
		}
		out = append(out, line)
	}
	if indexApart {
		var why []string
		if indexDT != 0 {
			why = append(why, fmt.Sprintf("DeletionTimes of %s take 1 byte instead of 12 (%s)", joinAnd(indexCounts), delta(indexDT)))
		}
		switch {
		case indexRest < 0 && s.LiveHeaders > 0:
			why = append(why, fmt.Sprintf("the Data.db positions it stores are smaller by the shorter partition headers, so their vints are shorter (%s)", delta(indexRest)))
		default:
			why = append(why, fmt.Sprintf("other fields of its entries change (%s)", delta(indexRest)))
		}
		out = append(out, fmt.Sprintf("Index.db %s: %s", delta(index.After-index.Before), strings.Join(why, "; ")))
	}
	if c, ok := change(format.ComponentStatistics); ok && c.Before > 0 {
		out = append(out, fmt.Sprintf("Statistics.db %s: %s", delta(c.After-c.Before), StatisticsChange(s.From)))
	}
	for _, c := range s.Components {
		if c.Before == c.After {
			continue
		}
		d := delta(c.After - c.Before)
		switch {
		case c.Before == 0:
			out = append(out, fmt.Sprintf("%s %s: the source has none; oa's writer writes it", c.Name, d))
			continue
		case c.Name == format.ComponentData, c.Name == format.ComponentIndex, c.Name == format.ComponentStatistics:
			continue
		}
		why := s.componentChange(c)
		if why == "" {
			out = append(out, c.Name+" "+d)
			continue
		}
		out = append(out, c.Name+" "+d+": "+why)
	}
	return out
}

// componentChange says why component c's size changes, from what differs
// between its fields before and after; "" when that is not known.
func (s *Savings) componentChange(c convert.Component) string {
	switch c.Name {
	case format.ComponentCompressionInfo:
		return s.compressionInfoChange(c.After - c.Before)
	case format.ComponentCRC:
		return s.checksumsChange(c.After - c.Before)
	case format.ComponentDigest:
		// Digest.crc32 is Data.db's CRC32 as decimal text.
		for _, b := range s.DigestBefore {
			if b < '0' || b > '9' {
				return ""
			}
		}
		if int64(len(s.DigestBefore)) != c.Before {
			return ""
		}
		d, more := c.After-c.Before, "more"
		if d < 0 {
			d, more = -d, "fewer"
		}
		return fmt.Sprintf("the new Data.db's CRC32 is written with %d %s decimal %s", d, more, words.Noun(d, "digit"))
	case format.ComponentTOC:
		return s.tocChange(c.After - c.Before)
	case format.ComponentFilter:
		// The converter sizes the bloom filter for the partitions it wrote,
		// as Cassandra does on flush, whatever size the source's had.
		return fmt.Sprintf("built anew for the %s written, sized as Cassandra sizes it; the source's is sized otherwise", words.PluralGrouped(s.Partitions, "partition"))
	case format.ComponentSummary:
		return "sampled anew from the partition keys written"
	}
	return ""
}

// compressionInfoChange explains CompressionInfo.db's change d field by
// field: the max compressed length int (na and later), one 8-byte offset
// per chunk, the bytes the source holds past its last offset, and the
// compressor's name and options.
func (s *Savings) compressionInfoChange(d int64) string {
	b, a := s.CompressionBefore, s.CompressionAfter
	if b == nil || a == nil {
		return ""
	}
	var why []string
	explained := int64(0)
	if from, to := s.From.HasMaxCompressedLength, oa.Version.HasMaxCompressedLength; from != to {
		n := int64(4)
		verb := fmt.Sprintf("oa stores the max compressed length (a 4-byte int), which %s does not", s.From.Name)
		if from {
			n, verb = -4, fmt.Sprintf("oa does not store the max compressed length (a 4-byte int), which %s does", s.From.Name)
		}
		why = append(why, verb)
		explained += n
	}
	nb, na := int64(len(b.ChunkOffsets)), int64(len(a.ChunkOffsets))
	if nb != na {
		why = append(why, chunkCounts(nb, na, s.DataUncompressed, int64(b.ChunkLength), "offsets", "an 8-byte offset each"))
		explained += 8 * (na - nb)
	}
	if b.TrailingBytes > 0 {
		why = append(why, fmt.Sprintf("the source's %s past the last chunk offset are not copied", words.PluralGrouped(int64(b.TrailingBytes), "byte")))
		explained -= int64(b.TrailingBytes)
	}
	if rest := d - explained; rest != 0 {
		why = append(why, fmt.Sprintf("the compressor's name, options or chunk length differ (%s)", delta(rest)))
	}
	if nb == na {
		why = append(why, fmt.Sprintf("Data.db keeps its %s", words.PluralGrouped(nb, "chunk")))
	}
	return strings.Join(why, "; ")
}

// checksumsChange explains CRC.db's change d: a 4-byte chunk size, then
// one 4-byte CRC32 per chunk of Data.db.
func (s *Savings) checksumsChange(d int64) string {
	b, a := s.ChecksumsBefore, s.ChecksumsAfter
	if b == nil || a == nil || b.ChunkSize <= 0 {
		return ""
	}
	nb, na := int64(len(b.CRCs)), int64(len(a.CRCs))
	var why []string
	if nb != na {
		why = append(why, chunkCounts(nb, na, s.DataUncompressed, int64(b.ChunkSize), "checksums", "a 4-byte CRC32 each"))
	}
	if b.ChunkSize != a.ChunkSize {
		return ""
	}
	if 4*(na-nb) != d {
		return ""
	}
	return strings.Join(why, "; ")
}

// chunkCounts says why Data.db's chunk metadata holds na entries instead
// of nb: the chunks its uncompressed length fills before and after
// (chunkLen bytes each), and entries the source holds past them (a
// ScyllaDB sstable can end with an empty chunk).
func chunkCounts(nb, na int64, length convert.Component, chunkLen int64, entries, each string) string {
	fill := func(n int64) int64 { return (n + chunkLen - 1) / chunkLen }
	fb, fa := fill(length.Before), fill(length.After)
	var why []string
	if nb != fb {
		why = append(why, fmt.Sprintf("the source holds %s %s for %s of data, which fill %s", words.Thousands(nb), entries, words.Thousands(length.Before)+" B", words.PluralGrouped(fb, "chunk")))
	}
	if fb != fa {
		why = append(why, fmt.Sprintf("Data.db's %s uncompressed fill %s instead of %d", words.Thousands(length.After)+" B", words.PluralGrouped(fa, "chunk"), fb))
	}
	if len(why) == 0 {
		return fmt.Sprintf("oa's holds %d %s instead of %d, %s", na, entries, nb, each)
	}
	return fmt.Sprintf("%s; oa's holds %d, %s", strings.Join(why, ", and "), na, each)
}

// tocChange explains TOC.txt's change d: the component names, one a line,
// that the output lists and the source's does not, and back.
func (s *Savings) tocChange(d int64) string {
	if s.TOCBefore == nil {
		return ""
	}
	var added, dropped []string
	n := int64(0)
	for _, c := range s.Components {
		if !slices.Contains(s.TOCBefore, c.Name) {
			added = append(added, c.Name)
			n += int64(len(c.Name) + 1)
		}
	}
	for _, name := range s.TOCBefore {
		if !slices.ContainsFunc(s.Components, func(c convert.Component) bool { return c.Name == name }) {
			dropped = append(dropped, name)
			n -= int64(len(name) + 1)
		}
	}
	if n != d {
		return ""
	}
	var why []string
	if len(added) > 0 {
		why = append(why, "it lists "+joinAnd(added)+" too")
	}
	if len(dropped) > 0 {
		why = append(why, "it no longer lists "+joinAnd(dropped)+", which oa's writer does not write")
	}
	return strings.Join(why, "; ")
}

// StatisticsChange says which Statistics.db fields the oa layout stores
// that version `from` does not, and which it drops (the version flags of
// format.Version, as BigFormat defines them).
func StatisticsChange(from format.Version) string {
	oa := oa.Version
	var adds, drops []string
	add := func(has, hasOA bool, what string) {
		switch {
		case hasOA && !has:
			adds = append(adds, what)
		case has && !hasOA:
			drops = append(drops, what)
		}
	}
	add(from.HasMetadataChecksum, oa.HasMetadataChecksum, "metadata checksums")
	add(from.HasPendingRepair, oa.HasPendingRepair, "pending repair")
	add(from.HasIsTransient, oa.HasIsTransient, "the transient flag")
	add(from.HasOriginatingHostID, oa.HasOriginatingHostID, "the originating host")
	add(from.HasKeyRange, oa.HasKeyRange, "the first and last key")
	add(from.HasImprovedMinMax, oa.HasImprovedMinMax, "clustering bounds")
	add(from.HasPartitionLevelDeletions, oa.HasPartitionLevelDeletions, "the partition-deletion marker")
	add(from.HasTokenSpaceCoverage, oa.HasTokenSpaceCoverage, "token-space coverage")
	add(from.HasLegacyMinMax, oa.HasLegacyMinMax, "the legacy min/max clustering values")
	var parts []string
	if len(adds) > 0 {
		parts = append(parts, "oa adds "+joinAnd(adds))
	}
	if len(drops) > 0 {
		parts = append(parts, "drops "+joinAnd(drops))
	}
	if len(parts) == 0 {
		return "the histograms and compression ratio are recomputed"
	}
	return strings.Join(parts, ", ")
}

// delta renders a size change with its sign: "+12 B", "−55 B".
func delta(n int64) string {
	switch {
	case n > 0:
		return fmt.Sprintf("+%s B", words.Thousands(n))
	case n < 0:
		return fmt.Sprintf("−%s B", words.Thousands(-n))
	}
	return "±0 B"
}

func joinAnd(xs []string) string {
	if len(xs) <= 1 {
		return strings.Join(xs, "")
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " and " + xs[len(xs)-1]
}
