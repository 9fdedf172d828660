package scrub

import (
	"fmt"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/format/bti"
	"github.com/sstabletool/sstabletool/internal/format/index"
)

// indexEntry is one partition the index knows: where it starts in Data.db
// and its key (big format, and BTI partitions with a Rows.db entry), or,
// for the other BTI partitions, the prefix of the key's byte-comparable
// form that Partitions.db stores.
type indexEntry struct {
	pos    int64
	key    []byte
	prefix []byte
	from   string // the component the key comes from
}

// indexCursor walks the partition index in Data.db order beside the scan,
// as the scrubbers walk Index.db or the partition index iterator: it is
// where a scan resynchronizes after a partition that does not decode, and
// what names a lost partition whose bytes cannot say. The walk stops at
// the first entry that does not decode or does not move forward in
// Data.db (an index that lies is no place to resynchronize); why says so.
type indexCursor struct {
	scan  *index.Scanner
	it    *bti.PartitionIterator
	rows  *bti.RowIndex
	cur   indexEntry
	ok    bool
	first bool
	last  int64
	why   string
	path  string
}

func newIndexCursor(s *sstable.SSTable) *indexCursor {
	c := &indexCursor{first: true, last: -1}
	switch {
	case !s.Version().IsBTI() && s.Index() != nil:
		c.scan = index.NewScanner(s.Index(), s.IndexCodec(), 0, false)
		c.path = s.Path(format.ComponentIndex)
	case s.Version().IsBTI() && s.Partitions() != nil:
		c.it = s.Partitions().Iter()
		c.rows = s.Rows()
		c.path = s.Path(format.ComponentPartitions)
	default:
		c.why = "no partition index"
		return c
	}
	c.advance()
	return c
}

// peek is the current entry.
func (c *indexCursor) peek() (indexEntry, bool) { return c.cur, c.ok }

// advance moves to the next entry.
func (c *indexCursor) advance() {
	c.ok = false
	if c.why != "" {
		return
	}
	first := c.first
	c.first = false
	var e indexEntry
	switch {
	case c.scan != nil:
		if !c.scan.Next() {
			if err := c.scan.Err(); err != nil {
				c.why = fmt.Sprintf("Index.db stops decoding: %v", err)
			} else {
				c.why = "end of Index.db"
			}
			return
		}
		en := c.scan.Entry()
		e = indexEntry{pos: en.Position, key: append([]byte(nil), en.Key...), from: format.ComponentIndex}
	case c.it != nil:
		var ok bool
		if first {
			ok = c.it.First()
		} else {
			ok = c.it.Next()
		}
		if !ok {
			if err := c.it.Err(); err != nil {
				c.why = fmt.Sprintf("Partitions.db stops decoding: %v", err)
			} else {
				c.why = "end of Partitions.db"
			}
			return
		}
		en := c.it.Entry()
		e = indexEntry{prefix: append([]byte(nil), en.Prefix...), from: format.ComponentPartitions + " (byte-comparable prefix)"}
		if en.InRowIndex() {
			if c.rows == nil {
				c.why = "Partitions.db points into Rows.db, which is missing"
				return
			}
			re, err := c.rows.Entry(en.RowIndexPos())
			if err != nil {
				c.why = fmt.Sprintf("Rows.db entry does not decode: %v", err)
				return
			}
			e.pos, e.key, e.from = re.DataPos, re.Key, format.ComponentRows
		} else {
			e.pos = en.DataPos()
		}
	default:
		return
	}
	if e.pos <= c.last || (first && e.pos != 0) {
		c.why = fmt.Sprintf("%s gives Data.db position %d after %d: not in Data.db order", c.path, e.pos, c.last)
		return
	}
	c.last = e.pos
	c.cur, c.ok = e, true
}

// skipBefore drops the entries that start before pos (inside what the scan
// has read or stepped over).
func (c *indexCursor) skipBefore(pos int64) {
	for c.ok && c.cur.pos < pos {
		c.advance()
	}
}
