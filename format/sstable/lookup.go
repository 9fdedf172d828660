package sstable

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/sstabletool/sstabletool/corrupt"
	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/internal/format/bti"
	"github.com/sstabletool/sstabletool/internal/format/bytecomparable"
	"github.com/sstabletool/sstabletool/internal/format/index"
	"github.com/sstabletool/sstabletool/internal/format/summary"
)

// Summary reads Summary.db once and keeps it. When Summary.db is missing
// it samples Index.db in memory the way Cassandra rebuilds a lost summary
// (IndexSummaryBuilder at the default min_index_interval 128, full sampling
// level); SummaryRebuilt then reports true. It is not safe for concurrent
// use.
func (s *SSTable) Summary() (*summary.Summary, error) {
	if s.summary != nil || s.summaryErr != nil {
		return s.summary, s.summaryErr
	}
	p := s.Path(format.ComponentSummary)
	if _, err := os.Stat(p); err != nil {
		if s.indexFile == nil {
			s.summaryErr = fmt.Errorf("%s: component Summary.db is missing, and so is Index.db to rebuild it from: %w", p, err)
			return nil, s.summaryErr
		}
		s.summary, s.summaryErr = s.rebuildSummary()
		s.summaryRebuilt = s.summaryErr == nil
		return s.summary, s.summaryErr
	}
	s.summary, s.summaryErr = summary.ReadFile(p)
	return s.summary, s.summaryErr
}

// SummaryRebuilt reports whether Summary returned a summary sampled from
// Index.db because Summary.db is missing.
func (s *SSTable) SummaryRebuilt() bool { return s.summaryRebuilt }

// defaultMinIndexInterval is the table option min_index_interval's default.
const defaultMinIndexInterval = 128

func (s *SSTable) rebuildSummary() (*summary.Summary, error) {
	b, err := summary.NewBuilder(0, defaultMinIndexInterval, summary.BaseSamplingLevel)
	if err != nil {
		return nil, err
	}
	sc := index.NewScanner(s.indexFile, s.indexCodec, 0, false)
	for sc.Next() {
		b.Add(sc.Entry().Key, sc.EntryPos())
	}
	if err := sc.Err(); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("rebuilding the missing Summary.db from Index.db: %w", err)
	}
	return b.Build()
}

// ErrNoIndex is returned by lookups on an sstable without Index.db.
var ErrNoIndex = errors.New("Index.db is missing")

// Find returns the Index.db entry of key, or ok=false when the sstable
// does not hold it. It binary-searches Summary.db for the nearest sample
// at or before the key and scans Index.db from there, at most one summary
// interval of entries, as Cassandra's BigTableReader does.
//
// For a BTI sstable it walks Partitions.db to the one candidate the trie
// holds for the key (keys are stored as shortest unique prefixes, with a
// hash byte) and confirms the full key in Rows.db or Data.db. The entry
// then has only Key, Position and Deletion (BTI has no promoted index).
//
// The index only says where to look; the answer is Data.db's. A key found
// is the key of the partition that starts at the entry's position. A key
// not found is proved absent by the partition the index puts just below
// it: that partition sorts below the key in Data.db, and the next one
// there sorts above it (or Data.db ends). Where the index and Data.db
// disagree, or the index cannot be read, the lookup has walked into
// damage: with Options.OnIndexDamage set it is told why and Data.db is
// scanned for the key instead (the answer is then the scan's, and the
// entry has only Key, Position and Deletion); without it Find returns the
// error, which names the component and the offset.
func (s *SSTable) Find(key []byte) (entry *index.Entry, ok bool, err error) {
	e, ok, err := s.findIndexed(key)
	if err == nil {
		return e, ok, nil
	}
	if s.opts.OnIndexDamage == nil {
		return nil, false, err
	}
	s.opts.OnIndexDamage(fmt.Errorf("looking up key %x: %w; scanning Data.db for it instead", key, err))
	found, err := s.scanFor([][]byte{key})
	if err != nil {
		return nil, false, err
	}
	e, ok = found[string(key)]
	return e, ok, nil
}

// FindPositions returns the Data.db positions of the partitions of keys
// that the sstable holds, in Data.db order and once each: Find for each
// key, except that the keys whose lookup walked into damage are found by
// one scan of Data.db together (with Options.OnIndexDamage told each why).
func (s *SSTable) FindPositions(keys [][]byte) ([]int64, error) {
	var positions []int64
	var rescan [][]byte
	for _, k := range keys {
		e, ok, err := s.findIndexed(k)
		if err != nil {
			if s.opts.OnIndexDamage == nil {
				return nil, err
			}
			s.opts.OnIndexDamage(fmt.Errorf("looking up key %x: %w; scanning Data.db for it instead", k, err))
			rescan = append(rescan, k)
			continue
		}
		if ok {
			positions = append(positions, e.Position)
		}
	}
	if len(rescan) > 0 {
		found, err := s.scanFor(rescan)
		if err != nil {
			return nil, err
		}
		for _, e := range found {
			positions = append(positions, e.Position)
		}
	}
	slices.Sort(positions)
	return slices.Compact(positions), nil
}

// scanFor walks Data.db partition by partition (row bodies skipped by
// their sizes) for keys, stopping once all are found.
func (s *SSTable) scanFor(keys [][]byte) (map[string]*index.Entry, error) {
	want := make(map[string]bool, len(keys))
	for _, k := range keys {
		want[string(k)] = true
	}
	found := make(map[string]*index.Entry, len(keys))
	err := s.ScanPartitions(ScanOptions{SkipCells: true}, func(p *PartitionSummary) error {
		if want[string(p.Key)] && found[string(p.Key)] == nil {
			found[string(p.Key)] = &index.Entry{Key: append([]byte(nil), p.Key...), Position: p.Offset, Deletion: p.Deletion}
			if len(found) == len(want) {
				return io.EOF
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("scanning Data.db for the keys the index could not find: %w", err)
	}
	return found, nil
}

// findIndexed is Find through the index alone: any disagreement with
// Data.db is an error.
func (s *SSTable) findIndexed(key []byte) (*index.Entry, bool, error) {
	if s.desc.Version.IsBTI() {
		return s.findBTI(key)
	}
	if s.indexFile == nil {
		return nil, false, fmt.Errorf("%s: %w", s.Path(format.ComponentIndex), ErrNoIndex)
	}
	// Partitioner.CompareKeys hashes both keys on every comparison; key's
	// token is computed once here, so a lookup's hundred-odd comparisons
	// (Summary binary search, then up to an index interval of entries)
	// hash only the keys read from disk. Both callers pass key second.
	keyToken := s.partitioner.Token(key)
	cmp := func(a, b []byte) int {
		if c := s.partitioner.Token(a).Compare(keyToken); c != 0 {
			return c
		}
		return bytes.Compare(a, b)
	}
	start := int64(0)
	limit := -1 // entries to scan; -1 = to the end
	sample := -1
	sum, err := s.lookupSummary()
	if err != nil {
		return nil, false, err
	}
	if sum != nil && sum.Len() > 0 {
		i := sum.FloorIndex(key, cmp)
		if i < 0 {
			// Before the first key.
			return nil, false, s.provedAbsent(key, -1, nil, indexPlace{file: s.Path(format.ComponentSummary), component: format.ComponentSummary, at: -1,
				what: "its first sample, above the key,"})
		}
		start, sample = sum.Position(i), i
		// The interval's entries and the next sample's, which sorts after
		// the key (Cassandra's getPosition reads as many).
		limit = sum.EffectiveIntervalAfter(i) + 1
	}
	sc := index.NewScanner(s.indexFile, s.indexCodec, start, false)
	var belowPos, belowAt int64 = -1, -1 // the last entry below key, where it points and where it is
	var below []byte
	for n := 0; limit < 0 || n < limit; n++ {
		if !sc.Next() {
			break
		}
		e := sc.Entry()
		c := cmp(e.Key, key)
		if c == 0 {
			// Only the entry found is decoded whole; its slices are copied
			// out of the scanner's window.
			full, err := sc.DecodeFull()
			if err != nil {
				return nil, false, err
			}
			if err := s.keyAt(full.Position, key, s.Path(format.ComponentIndex), format.ComponentIndex, sc.EntryPos()); err != nil {
				return nil, false, err
			}
			full.Key = append([]byte(nil), full.Key...)
			for i := range full.Blocks {
				full.Blocks[i].FirstName.Values = cloneValues(full.Blocks[i].FirstName.Values)
				full.Blocks[i].LastName.Values = cloneValues(full.Blocks[i].LastName.Values)
			}
			return full, true, nil
		}
		if c > 0 {
			break
		}
		belowPos, belowAt, below = e.Position, sc.EntryPos(), append(below[:0], e.Key...)
	}
	if err := sc.Err(); err != nil && !errors.Is(err, io.EOF) {
		return nil, false, err
	}
	pl := indexPlace{file: s.Path(format.ComponentIndex), component: format.ComponentIndex, at: belowAt}
	if belowAt < 0 {
		// Nothing below the key from where the summary led: that sample
		// (or the entry it points at) is what proves wrong.
		pl.at = start
		if sample >= 0 {
			pl = indexPlace{file: s.Path(format.ComponentSummary), component: format.ComponentSummary, at: -1,
				what: fmt.Sprintf("sample %d (Index.db byte %d)", sample, start)}
		}
	}
	return nil, false, s.provedAbsent(key, belowPos, below, pl)
}

// lookupSummary is Summary for lookups: a Summary.db that cannot be read
// is sampled from Index.db instead, as Cassandra rebuilds a summary it
// cannot deserialize, when the caller takes index damage (OnIndexDamage,
// told once); nil with no error means Index.db is read from its start.
func (s *SSTable) lookupSummary() (*summary.Summary, error) {
	sum, err := s.Summary()
	if err == nil {
		return sum, nil
	}
	if s.opts.OnIndexDamage == nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	if !s.lookupSummaryDone {
		s.lookupSummaryDone = true
		s.opts.OnIndexDamage(fmt.Errorf("%w; lookups sample Index.db in its place, as Cassandra rebuilds a summary it cannot read", err))
		if rebuilt, rerr := s.rebuildSummary(); rerr == nil {
			s.lookupSummaryFix = rebuilt
		}
	}
	return s.lookupSummaryFix, nil
}

// keyAt checks that the partition starting at Data.db byte pos has key,
// as the index entry at (file, component, at) says.
func (s *SSTable) keyAt(pos int64, key []byte, file, component string, at int64) error {
	var h rows.PartitionHeader
	if _, err := s.PartitionAt(pos, &h); err != nil {
		return corrupt.New(file, component, at, fmt.Sprintf("an entry for key %x pointing at its partition (Data.db byte %d)", key, pos), err)
	}
	if !bytes.Equal(h.Key, key) {
		return corrupt.New(file, component, at, fmt.Sprintf("an entry for key %x pointing at its partition", key),
			fmt.Errorf("the partition at Data.db byte %d has key %x", pos, h.Key))
	}
	return nil
}

// indexPlace is where in the index a lookup's answer came from, for its
// errors: the file, the component and the byte offset (or trie node).
type indexPlace struct {
	file, component string
	at              int64
	// what, when set, says which part of the component (a Summary.db
	// sample) led the lookup there.
	what string
}

func (pl indexPlace) corrupt(expected string, err error) error {
	if pl.what != "" {
		expected = pl.what + " to lead to " + expected
	}
	return corrupt.New(pl.file, pl.component, pl.at, expected, err)
}

// provedAbsent checks the index's answer that key is not in the sstable
// against Data.db: the partition at belowPos (the index's greatest key
// below key; -1 for none) must sort below key, and the partition after it
// (the first one for none) above key, or Data.db must end there. below,
// when known, is the key the index says starts at belowPos; pl is the
// index entry (or sample) that gave belowPos.
func (s *SSTable) provedAbsent(key []byte, belowPos int64, below []byte, pl indexPlace) error {
	p := s.partitioner
	var h rows.PartitionHeader
	next := int64(0)
	if belowPos >= 0 {
		dec, err := s.PartitionAt(belowPos, &h)
		if err != nil {
			return pl.corrupt(fmt.Sprintf("an entry pointing at a partition (Data.db byte %d)", belowPos), err)
		}
		if below != nil && !bytes.Equal(h.Key, below) {
			return pl.corrupt(fmt.Sprintf("an entry for key %x pointing at its partition", below),
				fmt.Errorf("the partition at Data.db byte %d has key %x", belowPos, h.Key))
		}
		if p.CompareKeys(h.Key, key) >= 0 {
			return pl.corrupt(fmt.Sprintf("the entry of the greatest key below %x", key),
				fmt.Errorf("it leads to partition %x (Data.db byte %d), which does not sort below it", h.Key, belowPos))
		}
		if _, err := dec.SkimRest(); err != nil {
			return err
		}
		next = dec.Pos()
	}
	if _, err := s.PartitionAt(next, &h); err != nil {
		if errors.Is(err, io.EOF) {
			return nil // Data.db ends: nothing sorts above the partition below key
		}
		return err
	}
	switch c := p.CompareKeys(h.Key, key); {
	case c == 0:
		return pl.corrupt(fmt.Sprintf("an entry for key %x", key), fmt.Errorf("there is none, but Data.db holds the partition at byte %d", next))
	case c < 0:
		return pl.corrupt(fmt.Sprintf("the entry of the greatest key below %x", key),
			fmt.Errorf("the partition after it in Data.db, %x at byte %d, sorts below the key too", h.Key, next))
	}
	return nil
}

func cloneValues(vs [][]byte) [][]byte {
	out := make([][]byte, len(vs))
	for i, v := range vs {
		if v != nil {
			out[i] = append([]byte{}, v...)
		}
	}
	return out
}

// PartitionAt reads the header of the partition at Data.db offset off with
// a cursor and decoder the sstable keeps for lookups, so that a run of
// lookups reuses their buffers. The decoder is valid until the next call;
// use Decoder for concurrent or long-lived reads.
func (s *SSTable) PartitionAt(off int64, h *rows.PartitionHeader) (*rows.Decoder, error) {
	if s.lookupCursor == nil {
		s.lookupCursor = s.data.Cursor(off)
		s.lookupDecoder = rows.NewDecoder(s.lookupCursor, s.schema)
		s.lookupDecoder.SetFile(s.Path(format.ComponentData))
	} else if err := s.lookupCursor.SeekTo(off); err != nil {
		return nil, err
	}
	s.lookupDecoder.Reset()
	if err := s.lookupDecoder.ReadPartitionHeader(h); err != nil {
		return nil, err
	}
	return s.lookupDecoder, nil
}

// ErrNoPartitionIndex is returned by lookups on a BTI sstable without
// Partitions.db.
var ErrNoPartitionIndex = errors.New("Partitions.db is missing")

// findBTI looks key up in Partitions.db: the trie's floor entry for the
// key's byte-comparable form is the key's candidate when it holds a prefix
// of it, else the entry of the greatest key below it. The candidate's full
// key (in Rows.db or Data.db) is the key, or a greater key with the same
// prefix (the partition below the key is then the trie's entry before the
// candidate's), or a smaller one.
func (s *SSTable) findBTI(key []byte) (*index.Entry, bool, error) {
	if s.partitions == nil {
		return nil, false, fmt.Errorf("%s: %w", s.Path(format.ComponentPartitions), ErrNoPartitionIndex)
	}
	bc, err := bytecomparable.DecoratedKey(s.partitioner, key)
	if err != nil {
		return nil, false, err
	}
	pp := s.Path(format.ComponentPartitions)
	f, ok, err := s.partitions.FloorBC(bc)
	if err != nil {
		return nil, false, err
	}
	if !ok {
		return nil, false, s.provedAbsent(key, -1, nil, indexPlace{file: pp, component: format.ComponentPartitions, at: -1})
	}
	pl := indexPlace{file: pp, component: format.ComponentPartitions, at: f.NodePos}
	pos, rowsKey, err := s.btiEntry(f.PartitionPayload, pl)
	if err != nil {
		return nil, false, err
	}
	if !bytes.HasPrefix(bc, f.Prefix) {
		// No candidate: f is the greatest key below the key.
		return nil, false, s.provedAbsent(key, pos, rowsKey, pl)
	}
	var h rows.PartitionHeader
	if _, err := s.PartitionAt(pos, &h); err != nil {
		return nil, false, pl.corrupt(fmt.Sprintf("a payload pointing at a partition (Data.db byte %d)", pos), err)
	}
	if rowsKey != nil && !bytes.Equal(rowsKey, h.Key) {
		return nil, false, pl.corrupt(fmt.Sprintf("a Rows.db entry whose key %x starts at Data.db byte %d", rowsKey, pos), fmt.Errorf("partition %x starts there", h.Key))
	}
	switch c := s.partitioner.CompareKeys(h.Key, key); {
	case c == 0:
		if f.HasHash && f.Hash != bti.KeyHash(key) {
			return nil, false, pl.corrupt(fmt.Sprintf("hash byte %#02x of key %x", bti.KeyHash(key), key), fmt.Errorf("found %#02x", f.Hash))
		}
		return &index.Entry{Key: append([]byte(nil), key...), Position: pos, Deletion: h.Deletion}, true, nil
	case c < 0:
		// Another key shares the stored prefix and sorts below the key.
		return nil, false, s.provedAbsent(key, pos, h.Key, pl)
	default:
		// Another key shares the prefix and sorts above the key: the
		// partition below is the trie's entry before it.
		l, ok, err := s.partitions.LowerBC(f.Prefix)
		if err != nil {
			return nil, false, err
		}
		if !ok {
			return nil, false, s.provedAbsent(key, -1, nil, pl)
		}
		pl.at = l.NodePos
		lpos, lkey, err := s.btiEntry(l.PartitionPayload, pl)
		if err != nil {
			return nil, false, err
		}
		return nil, false, s.provedAbsent(key, lpos, lkey, pl)
	}
}

// btiEntry resolves a Partitions.db payload to the partition's Data.db
// position, through its Rows.db entry when it has one (whose key is then
// returned too).
func (s *SSTable) btiEntry(p bti.PartitionPayload, pl indexPlace) (pos int64, key []byte, err error) {
	if !p.InRowIndex() {
		return p.DataPos(), nil, nil
	}
	if s.rowIndex == nil {
		return 0, nil, pl.corrupt("a payload pointing into Rows.db", fmt.Errorf("%s is missing", s.Path(format.ComponentRows)))
	}
	e, err := s.rowIndex.Entry(p.RowIndexPos())
	if err != nil {
		return 0, nil, err
	}
	return e.DataPos, e.Key, nil
}
