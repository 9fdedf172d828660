package sstable

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/rows"
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
func (s *SSTable) Find(key []byte) (entry *index.Entry, ok bool, err error) {
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
	if sum, err := s.Summary(); err == nil && sum.Len() > 0 {
		i := sum.FloorIndex(key, cmp)
		if i < 0 {
			return nil, false, nil // before the first key
		}
		start = sum.Position(i)
		limit = sum.EffectiveIntervalAfter(i)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, false, err
	}
	sc := index.NewScanner(s.indexFile, s.indexCodec, start, false)
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
			full.Key = append([]byte(nil), full.Key...)
			for i := range full.Blocks {
				full.Blocks[i].FirstName.Values = cloneValues(full.Blocks[i].FirstName.Values)
				full.Blocks[i].LastName.Values = cloneValues(full.Blocks[i].LastName.Values)
			}
			return full, true, nil
		}
		if c > 0 {
			return nil, false, nil
		}
	}
	if err := sc.Err(); err != nil && !errors.Is(err, io.EOF) {
		return nil, false, err
	}
	return nil, false, nil
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

func (s *SSTable) findBTI(key []byte) (*index.Entry, bool, error) {
	if s.partitions == nil {
		return nil, false, fmt.Errorf("%s: %w", s.Path(format.ComponentPartitions), ErrNoPartitionIndex)
	}
	p, ok, err := s.partitions.Candidate(key)
	if err != nil || !ok {
		return nil, false, err
	}
	pos := p.DataPos()
	if p.InRowIndex() {
		if s.rowIndex == nil {
			return nil, false, fmt.Errorf("%s: Partitions.db points into Rows.db, which is missing", s.Path(format.ComponentRows))
		}
		e, err := s.rowIndex.Entry(p.RowIndexPos())
		if err != nil {
			return nil, false, err
		}
		if !bytes.Equal(e.Key, key) {
			return nil, false, nil
		}
		pos = e.DataPos
	}
	var h rows.PartitionHeader
	if _, err := s.PartitionAt(pos, &h); err != nil {
		return nil, false, err
	}
	if !bytes.Equal(h.Key, key) {
		return nil, false, nil // another key shares the prefix the trie stores
	}
	return &index.Entry{Key: append([]byte(nil), key...), Position: pos, Deletion: h.Deletion}, true, nil
}
