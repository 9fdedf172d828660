package scrub

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/stats"
	"github.com/sstabletool/sstabletool/internal/format/index"
	"github.com/sstabletool/sstabletool/internal/writer"
	"github.com/sstabletool/sstabletool/merge"
)

// minimaInvalid says why the source's serialization header minima cannot
// be the output's (row bodies are deltas from them): a minimum a 5.0
// reader would cast differently from the 3.x/4.x release that wrote it, a
// local deletion time minimum more than an int from its epoch (or
// negative: CASSANDRA-14092), a negative TTL minimum. "" when they can.
func minimaInvalid(h *stats.Header, from, to format.Version) string {
	var notes []string
	if from.CheckedIntVInts != to.CheckedIntVInts {
		notes = h.CastMinima()
	}
	if d := h.MinLocalDeletionTime - stats.DeletionTimeEpoch; d != int64(int32(d)) || h.MinLocalDeletionTime < 0 {
		notes = append(notes, fmt.Sprintf("EncodingStats min local deletion time %d is negative or more than an int from the epoch", h.MinLocalDeletionTime))
	}
	if h.MinTTL != int64(int32(h.MinTTL)) || h.MinTTL < 0 {
		notes = append(notes, fmt.Sprintf("EncodingStats min TTL %d is not a positive int", h.MinTTL))
	}
	return strings.Join(notes, "; ")
}

func (sc *scrubber) order() clusteringOrder { return newClusteringOrder(sc.src.ClusteringTypes()) }

func (sc *scrubber) pipeline(rep *Report) *pipeline {
	sch := sc.src.Schema()
	return &pipeline{order: sc.order(), fix: newTimeFix(sc.from, sc.o.ReinsertOverflowedTTL), hasStatic: len(sch.Static) > 0,
		keyType: sc.src.KeyType(), rep: rep,
		merger: merge.NewRowMerger(sch.Regular, sch.Static, sc.src.RegularTypes(), sc.src.StaticTypes())}
}

// salvage is one walk over Data.db the way Cassandra's scrubbers walk it
// (BigTableScrubber, BtiTableScrubber): partition after partition, each
// read whole before anything of it is kept; one that does not read is
// left out and the walk resynchronizes at the next partition start the
// index knows (with no index, the rest of Data.db is lost). Where the
// index has an entry at the failed position with a key Data.db's bytes do
// not give, the partition is read again with the index's key, as the
// scrubbers retry "from partition index". A partition whose key does not
// sort after the last one kept, and the rows of a partition from the first
// one out of order, are held for the second sstable.
type salvage struct {
	sc    *scrubber
	check *pipeline
	write *pipeline
	sink  partitionSink
	// record: this walk fills the report (the last walk).
	record bool

	dec     *rows.Decoder
	lastKey []byte
	held    map[string]*held
	keys    [][]byte // held keys, first seen first
}

func (sc *scrubber) newSalvage(sink partitionSink, record bool) *salvage {
	sv := &salvage{sc: sc, check: sc.pipeline(nil), sink: sink, record: record, dec: sc.decoder(), held: map[string]*held{}}
	var rep *Report
	if record {
		rep = sc.rep
	}
	sv.write = sc.pipeline(rep)
	return sv
}

// attempt reads the partition at pos through p into sink. With key set,
// Data.db's key bytes are stepped over and key is used instead.
func (sv *salvage) attempt(pos int64, key []byte, p *pipeline, sink partitionSink, whole bool) (rows.PartitionHeader, partResult, error) {
	var h rows.PartitionHeader
	dec := sv.dec
	if err := seek(dec, pos); err != nil {
		return h, partResult{}, err
	}
	if key == nil {
		if err := dec.ReadPartitionHeader(&h); err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return h, partResult{}, err
		}
	} else {
		var err error
		if h, err = sv.headerWithKey(pos, key); err != nil {
			return h, partResult{}, err
		}
	}
	res, err := p.run(dec, &h, sink, whole)
	return h, res, err
}

// headerWithKey reads the partition header at pos with the index's key in
// place of the key bytes, and leaves the decoder at its first unfiltered.
func (sv *salvage) headerWithKey(pos int64, key []byte) (rows.PartitionHeader, error) {
	h := rows.PartitionHeader{Offset: pos, Key: key}
	dec := sv.dec
	if err := seek(dec, pos+2+int64(len(key))); err != nil {
		return h, err
	}
	src := dec.Source()
	layout := sv.sc.from.DeletionTimeLayout()
	b, err := src.Peek(12)
	if err != nil && !errors.Is(err, io.EOF) {
		return h, err
	}
	dt, n, err := layout.Decode(b)
	if err != nil {
		return h, err
	}
	if err := src.Skip(int64(n)); err != nil {
		return h, err
	}
	h.Deletion, h.Size = dt, 2+len(key)+n
	dec.EnterPartition()
	return h, nil
}

func (sv *salvage) run() error {
	sc := sv.sc
	total := sc.src.Data().Length()
	idx := newIndexCursor(sc.src)
	part := sc.src.Partitioner()
	var n int64
	for pos := int64(0); pos < total; {
		idx.skipBefore(pos)
		ie, atIdx := idx.peek()
		atIdx = atIdx && ie.pos == pos
		h, _, err := sv.attempt(pos, nil, sv.check, discard{}, false)
		dataKey := bytes.Clone(h.Key)
		var withKey []byte
		if err == nil && atIdx && ie.key != nil && !bytes.Equal(h.Key, ie.key) && sv.record {
			// Cassandra's scrubbers take this as an error and read the
			// partition again under the index's key; but the partition
			// read whole, checksummed, under its own key, and the index is
			// what is derived (and rebuilt): Data.db's key is kept.
			sc.rep.note(fmt.Sprintf("partition at byte %d: %s has the key 0x%x for it, Data.db 0x%x, and the partition reads whole with its own: kept under it",
				pos, ie.from, ie.key, h.Key))
		}
		if err != nil && atIdx && ie.key != nil {
			if _, _, err2 := sv.attempt(pos, ie.key, sv.check, discard{}, false); err2 == nil {
				if sv.record {
					sc.rep.note(fmt.Sprintf("partition at byte %d: %v; read again with the key from %s, it reads whole", pos, err, ie.from))
				}
				err, withKey = nil, ie.key
			}
		}
		if err != nil {
			next := total
			idx.skipBefore(pos + 1)
			why := err.Error()
			if e, ok := idx.peek(); ok {
				next = e.pos
			} else {
				why += "; " + idx.why + ": nothing to resynchronize at, the rest of Data.db is lost"
			}
			if sv.record {
				sv.lose(pos, dataKey, ie, atIdx, why)
				sc.rep.skip(ByteRange{Start: pos, End: next, Reason: err.Error()})
			}
			pos = next
			continue
		}
		key := h.Key
		if withKey != nil {
			key = withKey
		}
		outOfOrder := sv.lastKey != nil && part.CompareKeys(sv.lastKey, key) >= 0
		h, res, err := sv.attempt(pos, withKey, sv.write, sv.sink, outOfOrder)
		if err != nil {
			return fmt.Errorf("%s: writing the partition at byte %d: %w", sc.dataPath, pos, err)
		}
		end := sv.dec.Pos()
		if outOfOrder {
			if sv.record {
				sc.rep.OutOfOrder = append(sc.rep.OutOfOrder, OutOfOrder{Key: keyString(sc.src.KeyType(), h.Key), Position: pos,
					Reason: fmt.Sprintf("its key does not sort after %s, the last one kept", keyString(sc.src.KeyType(), sv.lastKey))})
				sc.rep.PartitionsKept++
			}
		} else if res.kept {
			sv.lastKey = append(sv.lastKey[:0], h.Key...)
			if sv.record {
				sc.rep.PartitionsKept++
			}
		} else if res.emptied != "" && sv.record {
			sv.lose(pos, h.Key, ie, atIdx, "left out: "+res.emptied)
		}
		if res.tail != nil {
			if err := sv.hold(res.tail); err != nil {
				return err
			}
		}
		pos = end
		if n++; n%1024 == 0 {
			sc.progress(pos)
		}
	}
	sc.progress(total)
	return nil
}

// lose records the partition at pos as lost.
func (sv *salvage) lose(pos int64, dataKey []byte, ie indexEntry, atIdx bool, why string) {
	kt := sv.sc.src.KeyType()
	l := Lost{Position: pos, Reason: why, Key: "(unknown)"}
	switch {
	case len(dataKey) > 0 && (!atIdx || ie.key == nil || bytes.Equal(ie.key, dataKey)):
		l.Key, l.KeyHex, l.KeyFrom = keyString(kt, dataKey), fmt.Sprintf("%x", dataKey), format.ComponentData
	case atIdx && ie.key != nil:
		l.Key, l.KeyHex, l.KeyFrom = keyString(kt, ie.key), fmt.Sprintf("%x", ie.key), ie.from
	case atIdx:
		l.Key, l.KeyFrom = fmt.Sprintf("(key prefix 0x%x)", ie.prefix), ie.from
	}
	sv.sc.rep.lose(l)
}

func (sv *salvage) hold(h *held) error {
	k := string(h.key)
	if prev, ok := sv.held[k]; ok {
		return sv.write.mergeHeld(prev, h)
	}
	sv.held[k] = h
	sv.keys = append(sv.keys, h.key)
	return nil
}

// sortedHeld lists the held partitions in the partitioner's order.
func (sv *salvage) sortedHeld() []*held {
	part := sv.sc.src.Partitioner()
	keys := append([][]byte(nil), sv.keys...)
	sort.SliceStable(keys, func(i, j int) bool { return part.CompareKeys(keys[i], keys[j]) < 0 })
	out := make([]*held, len(keys))
	for i, k := range keys {
		out[i] = sv.held[string(k)]
	}
	return out
}

// rewrite writes Data.db anew from what the salvage walk keeps, with every
// derived component, and the held partitions into a second sstable.
func (sc *scrubber) rewrite(out outputs) error {
	h := *sc.src.Stats().Header
	h.HasRaw = false
	if why := minimaInvalid(&h, sc.from, sc.to); why != "" {
		m, err := sc.observeMinima()
		if err != nil {
			return err
		}
		h.MinTimestamp, h.MinLocalDeletionTime, h.MinTTL = m.ts, m.ldt, m.ttl
		sc.statsBad = "its serialization header's minima (" + why + "): the new ones are the rows'"
	}
	if sc.o.Mode == Abort {
		probe := *sc.rep
		probe.Lost, probe.Rows, probe.Skipped, probe.OutOfOrder, probe.Notes = nil, nil, nil, nil, nil
		saved := sc.rep
		sc.rep = &probe
		psv := sc.newSalvage(discard{}, true)
		pb := &bounds{minLDT: h.MinLocalDeletionTime, minTTL: h.MinTTL}
		psv.check.bounds, psv.write.bounds = pb, pb
		err := psv.run()
		sc.rep = saved
		if err != nil {
			return err
		}
		if probe.PartitionsLost > 0 || len(probe.Rows) > 0 || len(probe.OutOfOrder) > 0 || probe.More > 0 {
			*sc.rep = probe
			return fmt.Errorf("%s: %w: %s", sc.dataPath, ErrAborted, probe.Summary())
		}
	}
	sc.comps()
	sc.rep.Rewritten = true
	var ws *writerSink
	sink := partitionSink(discard{})
	if out != nil {
		ws = &writerSink{sc: sc, out: out, header: h, expected: sc.expectedKeys()}
		sink = ws
	}
	sv := sc.newSalvage(sink, true)
	b := &bounds{minLDT: h.MinLocalDeletionTime, minTTL: h.MinTTL}
	sv.check.bounds, sv.write.bounds = b, b
	err := sv.run()
	if err == nil && ws != nil {
		err = ws.finish()
	}
	if err != nil {
		if ws != nil {
			ws.abort()
		}
		return err
	}
	heldParts := sv.sortedHeld()
	if out != nil && ws.w == nil && len(heldParts) == 0 {
		sc.rep.Components = sc.rep.Components[:0] // nothing was written
	}
	if len(heldParts) == 0 {
		return nil
	}
	var second *writerSink
	hsink := partitionSink(discard{})
	if out != nil {
		second = &writerSink{sc: sc, out: out, header: h, expected: int64(len(heldParts)), second: true}
		hsink = second
	}
	for _, hp := range heldParts {
		if err := sv.write.writeHeld(hp, hsink); err != nil {
			if second != nil {
				second.abort()
			}
			return err
		}
	}
	if second != nil {
		return second.finish()
	}
	return nil
}

// comps fills the report's components for a rewrite: every one is
// written anew; those the source lacked or had wrong are rebuilt.
func (sc *scrubber) comps() {
	list := []string{format.ComponentData, format.ComponentStatistics}
	if sc.src.Data().Compressed() {
		list = append(list, format.ComponentCompressionInfo)
	} else {
		list = append(list, format.ComponentCRC)
	}
	list = append(list, writer.IndexComponents(sc.to)...)
	list = append(list, format.ComponentFilter, format.ComponentDigest, format.ComponentTOC)
	sc.rep.Components = sc.rep.Components[:0]
	if sc.to.IsBTI() == sc.from.IsBTI() {
		sc.noteDropped(list)
	}
	for _, c := range list {
		comp := Component{Name: c, How: "written"}
		if c == format.ComponentStatistics && sc.statsBad != "" {
			comp.How, comp.Why = "rebuilt", sc.statsBad
		}
		// With Data.db rewritten, verify's view of the source's derived
		// components is the damaged data's (a Digest.crc32 that no longer
		// matches): only one that is missing counts as rebuilt.
		derived := c != format.ComponentData && c != format.ComponentStatistics && c != format.ComponentCompressionInfo &&
			c != format.ComponentDigest && c != format.ComponentCRC
		if derived && sc.to.IsBTI() == sc.from.IsBTI() && !sc.src.HasComponent(c) {
			comp.How, comp.Why = "rebuilt", "missing"
		}
		sc.rep.Components = append(sc.rep.Components, comp)
	}
}

// expectedKeys sizes the filter and summary: the partitions the index
// lists, or verify counted (Cassandra sizes a scrub's output by the
// source's estimated key count, at least min_index_interval).
func (sc *scrubber) expectedKeys() int64 {
	n := max(sc.verified.Partitions, sc.count)
	switch {
	case sc.from.IsBTI() && sc.src.Partitions() != nil:
		n = max(n, sc.src.Partitions().KeyCount)
	case !sc.from.IsBTI() && sc.src.Index() != nil:
		scan := index.NewScanner(sc.src.Index(), sc.src.IndexCodec(), 0, false)
		var k int64
		for scan.Next() {
			k++
		}
		n = max(n, k)
	}
	return max(n, 1)
}

// minima are EncodingStats minima observed in the rows kept.
type minima struct {
	ts, ldt, ttl int64
	seen         [3]bool
	maxLDT       int64
}

func (m *minima) timestamp(v int64) {
	if !m.seen[0] || v < m.ts {
		m.ts, m.seen[0] = v, true
	}
}

func (m *minima) deletionTime(v int64) {
	if !m.seen[1] || v < m.ldt {
		m.ldt, m.seen[1] = v, true
	}
	m.maxLDT = max(m.maxLDT, v)
}

func (m *minima) timeToLive(v int64) {
	if !m.seen[2] || v < m.ttl {
		m.ttl, m.seen[2] = v, true
	}
}

func (m *minima) deletion(d deletiontime.DeletionTime) {
	if !d.IsLive() && d != (deletiontime.DeletionTime{}) {
		m.timestamp(d.MarkedForDeleteAt)
		m.deletionTime(d.LocalDeletionTime)
	}
}

func (m *minima) unfiltered(u *rows.Unfiltered) {
	m.deletion(u.Deletion)
	m.deletion(u.StartDeletion)
	m.deletion(u.EndDeletion)
	m.deletion(u.ScyllaShadowable)
	if u.Liveness.HasTimestamp {
		m.timestamp(u.Liveness.Timestamp)
		if u.Liveness.Expiring() {
			m.timeToLive(u.Liveness.TTL)
			m.deletionTime(u.Liveness.LocalExpirationTime)
		}
	}
	for _, cd := range u.ComplexDeletions {
		m.deletion(cd.Deletion)
	}
	for i := range u.Cells {
		c := &u.Cells[i]
		m.timestamp(c.Timestamp)
		if c.IsExpiring() || c.IsTombstone() {
			m.deletionTime(c.LocalDeletionTime)
		}
		if c.IsExpiring() {
			m.timeToLive(c.TTL)
		}
	}
}

// minimaSink observes what a walk keeps.
type minimaSink struct{ m *minima }

func (s minimaSink) start(_ []byte, d deletiontime.DeletionTime) error { s.m.deletion(d); return nil }
func (s minimaSink) static(u *rows.Unfiltered) error                   { s.m.unfiltered(u); return nil }
func (s minimaSink) add(u *rows.Unfiltered) error                      { s.m.unfiltered(u); return nil }
func (s minimaSink) end() error                                        { return nil }

// observeMinima walks Data.db as the rewrite will and returns minima
// every kept value is at or above, within an int of the largest local
// deletion time, in the range the header can store.
func (sc *scrubber) observeMinima() (minima, error) {
	var m minima
	sv := sc.newSalvage(minimaSink{&m}, false)
	if err := sv.run(); err != nil {
		return m, err
	}
	for _, h := range sv.held {
		m.deletion(h.del)
		if h.static != nil {
			m.unfiltered(h.static)
		}
		for _, u := range h.rows {
			m.unfiltered(u)
		}
	}
	if !m.seen[0] {
		m.ts = stats.TimestampEpoch
	}
	if !m.seen[1] {
		m.ldt = stats.DeletionTimeEpoch
	}
	m.ldt = min(m.ldt, stats.DeletionTimeEpoch+math.MaxInt32)
	if m.maxLDT-m.ldt > math.MaxInt32 {
		return m, fmt.Errorf("%s: local deletion times from %d to %d cannot share one serialization header (row bodies store them as int deltas)", sc.dataPath, m.ldt, m.maxLDT)
	}
	if !m.seen[2] {
		m.ttl = 0
	}
	return m, nil
}

// writerSink writes kept partitions into a new sstable, made on the first
// one.
type writerSink struct {
	sc       *scrubber
	out      outputs
	header   stats.Header
	expected int64
	second   bool
	w        *writer.SSTableWriter
}

func (s *writerSink) start(key []byte, d deletiontime.DeletionTime) error {
	if s.w == nil {
		if err := s.open(); err != nil {
			return err
		}
	}
	return s.w.StartPartition(key, d)
}

func (s *writerSink) static(u *rows.Unfiltered) error { return s.w.AddStatic(u) }
func (s *writerSink) add(u *rows.Unfiltered) error    { return s.w.Add(u) }
func (s *writerSink) end() error                      { return s.w.EndPartition() }

func (s *writerSink) open() error {
	sc := s.sc
	desc, files, err := s.out.newSSTable(sc.to, s.second)
	if err != nil {
		return err
	}
	sch := *sc.src.Schema()
	sch.Version = sc.to
	sch.MinTimestamp, sch.MinLocalDeletionTime, sch.MinTTL = s.header.MinTimestamp, s.header.MinLocalDeletionTime, s.header.MinTTL
	h := s.header
	minInterval, level := sc.sampling()
	src := sc.src.Stats()
	lost := sc.rep.PartitionsLost > 0
	cfg := writer.Config{Version: sc.to, Generation: desc.Generation, Header: &h, Schema: &sch,
		Partitioner: src.Validation.Partitioner, Compression: writer.CompressionFrom(sc.src.Data().Info()),
		ColumnIndexSize: sc.o.ColumnIndexSize, MinIndexInterval: minInterval, SamplingLevel: level,
		BloomFilterFPChance: src.Validation.BloomFilterFPChance, ExpectedKeys: s.expected, TOC: sc.src.TOC(),
		FinishStatistics: func(st *stats.Statistics) { carry(st, src, lost) }}
	if cfg.BloomFilterFPChance == 0 {
		cfg.BloomFilterFPChance = 0.01
	}
	s.w, err = writer.NewSSTableWriterTo(files, desc.Dir, cfg)
	return err
}

// carry copies into the rewritten Statistics.db what the rows cannot
// give, as Cassandra's scrub writer takes it from the sstable it replaces
// (stats.Stats.CarryFrom), except that the sstable is unrepaired once a
// partition is lost, as the scrubber resets repairedAt when it skips one.
func carry(st, src *stats.Statistics, lost bool) {
	if st.Stats == nil || src.Stats == nil {
		return
	}
	st.Stats.CarryFrom(src.Stats)
	if lost {
		st.Stats.RepairedAt = 0
	}
}

func (s *writerSink) finish() error {
	if s.w == nil {
		return nil
	}
	_, err := s.w.Close()
	return err
}

func (s *writerSink) abort() {
	if s.w != nil {
		s.w.Abort()
	}
}
