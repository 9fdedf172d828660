package scrub

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"slices"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/internal/format/index"
	"github.com/sstabletool/sstabletool/internal/format/summary"
	"github.com/sstabletool/sstabletool/internal/writer"
	"github.com/sstabletool/sstabletool/reader"
)

// defaultMinIndexInterval is min_index_interval's default (TableParams),
// the Summary.db sampling of a new sstable without a source summary to
// follow.
const defaultMinIndexInterval = 128

// bad says why the source's component c must be rebuilt: it is missing, or
// verify found it wrong; "" when it can be kept.
func (sc *scrubber) bad(c string) string {
	if !sc.src.HasComponent(c) {
		return "missing"
	}
	ps := sc.problems[c]
	switch len(ps) {
	case 0:
		return ""
	case 1:
		return ps[0].String()
	}
	return fmt.Sprintf("%s (and %d more problems)", ps[0].String(), len(ps)-1)
}

// rebuildPlan is which derived components the rebuild makes anew.
type rebuildPlan struct {
	index   string // Index.db and Summary.db, or Partitions.db and Rows.db
	summary string // Summary.db alone, from the kept Index.db
	stats   string // Statistics.db, with the rows' bounds and counts
	filter  string
	digest  string
	crc     string
	toc     string
	// components are the output's, in the order written (TOC.txt last).
	components []string
}

func (sc *scrubber) plan() rebuildPlan {
	var p rebuildPlan
	v := sc.from
	comps := writer.IndexComponents(v)
	p.index = sc.bad(comps[0])
	if v.IsBTI() && p.index == "" {
		if why := sc.bad(comps[1]); why != "" {
			p.index = comps[1] + ": " + why
		}
	} else if p.index == "" {
		p.summary = sc.bad(format.ComponentSummary)
	}
	p.filter = sc.bad(format.ComponentFilter)
	p.digest = sc.bad(format.ComponentDigest)
	if n := len(sc.statsDiff); n > 0 {
		p.stats = "Statistics.db's " + sc.statsDiff[0].String()
		if n > 1 {
			p.stats += fmt.Sprintf(" (and %d more bounds or counts)", n-1)
		}
	}
	p.components = []string{format.ComponentData, format.ComponentStatistics}
	if sc.src.Data().Compressed() {
		p.components = append(p.components, format.ComponentCompressionInfo)
	} else {
		p.crc = sc.bad(format.ComponentCRC)
		p.components = append(p.components, format.ComponentCRC)
	}
	p.components = append(p.components, comps...)
	p.components = append(p.components, format.ComponentFilter, format.ComponentDigest)
	p.toc = sc.bad(format.ComponentTOC)
	if p.toc == "" {
		// The SAI and SASI files TOC.txt lists are not carried over
		// (noteDropped); the output's TOC.txt leaves them out, which is no
		// repair.
		have := slices.DeleteFunc(slices.Clone(sc.src.TOC()), func(c string) bool {
			_, ok := format.ParseIndexComponent(c)
			return ok
		})
		want := append(slices.Clone(p.components), format.ComponentTOC)
		slices.Sort(have)
		slices.Sort(want)
		if !slices.Equal(have, want) {
			p.toc = fmt.Sprintf("lists %v, the sstable has %v", sc.src.TOC(), want)
		}
	}
	return p
}

// why returns the plan's reason to rebuild component c.
func (p *rebuildPlan) why(c string, v format.Version) string {
	comps := writer.IndexComponents(v)
	switch c {
	case comps[0]:
		return p.index
	case comps[1]:
		if p.index != "" {
			if v.IsBTI() {
				return p.index
			}
			return "rebuilt with Index.db (" + p.index + ")"
		}
		return p.summary
	case format.ComponentFilter:
		return p.filter
	case format.ComponentDigest:
		return p.digest
	case format.ComponentCRC:
		return p.crc
	case format.ComponentStatistics:
		return p.stats
	case format.ComponentTOC:
		return p.toc
	}
	return ""
}

// rebuild writes the sstable with the source's Data.db and
// CompressionInfo.db byte for byte, keeps every derived component that is
// present and right, and rebuilds the others from Data.db exactly as
// Cassandra's writer made them: Statistics.db with the rows' bounds and
// counts where they differ from the stored ones (as ScyllaDB's can; the
// rest of it, the serialization header's minima above all, kept), the
// index blocks cut at ColumnIndexSize,
// the summary with the source's sampling (the table default without one),
// the filter sized for the exact partition count with Statistics.db's
// bloom_filter_fp_chance.
func (sc *scrubber) rebuild(out outputs) error {
	p := sc.plan()
	for _, c := range append(slices.Clone(p.components), format.ComponentTOC) {
		if why := p.why(c, sc.from); why != "" {
			sc.rep.Components = append(sc.rep.Components, Component{Name: c, How: "rebuilt", Why: why})
		} else {
			sc.rep.Components = append(sc.rep.Components, Component{Name: c, How: "kept"})
		}
	}
	sc.rep.PartitionsKept = sc.count
	sc.noteDropped(p.components)
	if out == nil {
		return nil
	}
	desc, files, err := out.newSSTable(sc.from, false)
	if err != nil {
		return err
	}
	b := &builder{sc: sc, files: files, prefix: desc.Prefix()}
	if err := b.write(&p); err != nil {
		b.abandon()
		return err
	}
	return nil
}

func (b *builder) write(p *rebuildPlan) error {
	sc := b.sc
	if err := b.index(p); err != nil {
		return err
	}
	if err := b.data(p); err != nil {
		return err
	}
	if err := b.statistics(p); err != nil {
		return err
	}
	comps := writer.IndexComponents(sc.from)
	for _, c := range p.components {
		streamed := p.index != "" && (c == comps[0] || sc.from.IsBTI() && c == comps[1])
		if c == format.ComponentData || streamed {
			continue
		}
		if err := b.component(c, p.why(c, sc.from) != ""); err != nil {
			return err
		}
	}
	if p.toc == "" && len(format.IndexComponentsOf(sc.src.TOC())) == 0 {
		return b.copy(format.ComponentTOC)
	}
	return b.whole(format.ComponentTOC, writer.TOCText(writer.TOCFor(sc.src.TOC(), p.components)))
}

// builder writes the rebuilt sstable's files.
type builder struct {
	sc     *scrubber
	files  writer.Output
	prefix string
	open   []io.Closer

	built map[string][]byte // components built in memory
}

func (b *builder) create(c string) (io.WriteCloser, error) {
	f, err := b.files.Create(b.prefix + c)
	if err != nil {
		return nil, err
	}
	b.open = append(b.open, f)
	return f, nil
}

// abandon closes what an error left open (the staging or the transaction
// removes it).
func (b *builder) abandon() {
	for _, f := range b.open {
		f.Close()
	}
}

func (b *builder) whole(c string, data []byte) error {
	f, err := b.create(c)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		return err
	}
	return f.Close()
}

// copy writes the source's component c unchanged, streamed.
func (b *builder) copy(c string) error {
	return b.copyHashing(c, nil)
}

func (b *builder) copyHashing(c string, hash func([]byte)) error {
	src, err := reader.Open(b.sc.src.Path(c), reader.Buffered)
	if err != nil {
		return err
	}
	defer src.Close()
	f, err := b.create(c)
	if err != nil {
		return err
	}
	buf := make([]byte, 1<<20)
	for off := int64(0); off < src.Size(); {
		n := int(min(int64(len(buf)), src.Size()-off))
		if _, err := src.ReadAt(buf[:n], off); err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("%s: %w", src.Path(), err)
		}
		if hash != nil {
			hash(buf[:n])
		}
		if _, err := f.Write(buf[:n]); err != nil {
			return err
		}
		off += int64(n)
	}
	return f.Close()
}

// component writes c: built in memory, or copied.
func (b *builder) component(c string, rebuilt bool) error {
	if rebuilt {
		data, ok := b.built[c]
		if !ok {
			return fmt.Errorf("scrub: %s was to be rebuilt and was not", c)
		}
		return b.whole(c, data)
	}
	return b.copy(c)
}

// data copies Data.db, computing Digest.crc32 and CRC.db on the way when
// they are rebuilt.
func (b *builder) data(p *rebuildPlan) error {
	digest := crc32.NewIEEE()
	var crcs reader.ChunkChecksums
	var chunk []byte
	crcs.ChunkSize = writer.DefaultCRCChunkSize
	hash := func(data []byte) {
		if p.digest != "" {
			digest.Write(data)
		}
		if p.crc == "" {
			return
		}
		for len(data) > 0 {
			k := min(len(data), crcs.ChunkSize-len(chunk))
			chunk = append(chunk, data[:k]...)
			data = data[k:]
			if len(chunk) == crcs.ChunkSize {
				crcs.CRCs = append(crcs.CRCs, crc32.ChecksumIEEE(chunk))
				chunk = chunk[:0]
			}
		}
	}
	if err := b.copyHashing(format.ComponentData, hash); err != nil {
		return err
	}
	if len(chunk) > 0 {
		crcs.CRCs = append(crcs.CRCs, crc32.ChecksumIEEE(chunk))
	}
	if b.built == nil {
		b.built = map[string][]byte{}
	}
	if p.digest != "" {
		b.built[format.ComponentDigest] = writer.DigestText(digest.Sum32())
	}

	if p.crc != "" {
		b.built[format.ComponentCRC] = crcs.Encode()
	}
	return nil
}

// statistics builds Statistics.db anew when its bounds or counts are not
// the rows': the source's with the rows' own (stats.TakeCollected), in the
// same version, so that the serialization header Data.db's deltas need is
// the same.
func (b *builder) statistics(p *rebuildPlan) error {
	if p.stats == "" {
		return nil
	}
	st, _, err := b.sc.src.Stats().Convert(b.sc.from)
	if err != nil {
		return err
	}
	st.Stats.TakeCollected(b.sc.collected, b.sc.from)
	enc, err := st.Encode(b.sc.from)
	if err != nil {
		return fmt.Errorf("%s: encoding Statistics.db: %w", b.sc.dataPath, err)
	}
	b.built[format.ComponentStatistics] = enc
	return nil
}

// index rebuilds the partition index and the filter: from what check
// built in memory as it decoded Data.db, or else by a walk of Data.db,
// streaming the index into its files; and a lone Summary.db from the kept
// Index.db.
func (b *builder) index(p *rebuildPlan) error {
	sc := b.sc
	if b.built == nil {
		b.built = map[string][]byte{}
	}
	if p.summary != "" {
		s, err := sc.summaryFromIndex()
		if err != nil {
			return err
		}
		b.built[format.ComponentSummary] = s
	}
	if p.index == "" && p.filter == "" {
		return nil
	}
	comps := writer.IndexComponents(sc.from)
	if sc.prebuilt != nil {
		for c, data := range sc.prebuilt {
			b.built[c] = data
		}
		if p.index != "" {
			if err := b.whole(comps[0], b.built[comps[0]]); err != nil {
				return err
			}
			if sc.from.IsBTI() {
				return b.whole(comps[1], b.built[comps[1]])
			}
		}
		return nil
	}
	var streams []io.WriteCloser
	var primary, rowsOut io.Writer
	if p.index != "" {
		f, err := b.create(comps[0])
		if err != nil {
			return err
		}
		streams, primary = append(streams, f), f
		if sc.from.IsBTI() {
			r, err := b.create(comps[1])
			if err != nil {
				return err
			}
			streams, rowsOut = append(streams, r), r
		}
	}
	ib, err := sc.newIndexBuild(p, sc.count, primary, rowsOut)
	if err != nil {
		return err
	}
	dec := sc.decoder()
	var h rows.PartitionHeader
	var n int64
	for {
		err := dec.ReadPartitionHeader(&h)
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		ib.partition(&h)
		if !ib.needsUnfiltereds() {
			if _, err := dec.SkimRest(); err != nil {
				return err
			}
			continue
		}
		for {
			u, err := dec.Next(false)
			if err != nil {
				return err
			}
			if u == nil {
				break
			}
			if err := ib.unfiltered(u); err != nil {
				return err
			}
		}
		if err := ib.end(dec.Pos()); err != nil {
			return err
		}
		if n++; n%1024 == 0 {
			sc.progress(dec.Pos())
		}
	}
	if err := ib.finish(sc.from, b.built); err != nil {
		return err
	}
	for _, s := range streams {
		if err := s.Close(); err != nil {
			return err
		}
	}
	return nil
}

// sampling is the source Summary.db's min index interval and sampling
// level, or what Cassandra writes a new sstable with when it has none (or
// it does not decode).
func (sc *scrubber) sampling() (minInterval, level int) {
	if sc.from.IsBTI() || !sc.src.HasComponent(format.ComponentSummary) || len(sc.problems[format.ComponentSummary]) > 0 {
		return defaultMinIndexInterval, summary.BaseSamplingLevel
	}
	sum, err := summary.ReadFile(sc.src.Path(format.ComponentSummary))
	if err != nil {
		return defaultMinIndexInterval, summary.BaseSamplingLevel
	}
	return sum.MinIndexInterval, sum.SamplingLevel
}

// summaryFromIndex rebuilds Summary.db from the kept Index.db's entries.
func (sc *scrubber) summaryFromIndex() ([]byte, error) {
	minInterval, level := sc.sampling()
	sb, err := summary.NewBuilder(sc.count, minInterval, level)
	if err != nil {
		return nil, err
	}
	scan := index.NewScanner(sc.src.Index(), sc.src.IndexCodec(), 0, false)
	for scan.Next() {
		sb.Add(bytes.Clone(scan.Entry().Key), scan.EntryPos())
	}
	if err := scan.Err(); err != nil {
		return nil, err
	}
	s, err := sb.Build()
	if err != nil {
		return nil, err
	}
	return s.Encode(), nil
}
