package bti

import (
	"fmt"

	"github.com/sstabletool/sstabletool/deletiontime"
)

// DefaultGranularity is BTI's row index granularity when cassandra.yaml
// leaves column_index_size unset (BtiFormatPartitionWriter.DEFAULT_GRANULARITY,
// 16 KiB; big format's default is 64 KiB). Cassandra's own test
// configuration, which wrote the legacy fixtures, sets 4 KiB.
const DefaultGranularity = 16 << 10

// BlockCutter decides where a partition's row index blocks start and end,
// exactly as BtiFormatPartitionWriter and SortedTablePartitionWriter do
// while Cassandra writes Data.db:
//
//   - a block starts at the first unfiltered (row or range tombstone
//     marker) after the partition header and static row, and at the first
//     unfiltered after each block closes;
//   - a block closes right after the unfiltered that brings its size (from
//     the start of its first unfiltered to the end of the current one) to
//     Granularity bytes or more; the last block closes at the partition's
//     end;
//   - the deletion open at a block's start is the one the last range
//     tombstone marker before it opened;
//   - a partition gets a row index (a Rows.db entry) only with two blocks
//     or more.
//
// Feed it every unfiltered of a partition in order, then Finish.
type BlockCutter struct {
	// Granularity is column_index_size in bytes.
	Granularity int64

	blocks    []IndexBlock
	open      bool // a block is started
	cur       IndexBlock
	openAfter deletiontime.DeletionTime // deletion open after the last marker
	lastEnd   int64
	started   bool

	// AddCopy's memory: kept holds the first and last clustering of each
	// block (rewritten only after Reset), spare the last unfiltered's
	// while it may still become its block's last.
	kept  []byte
	spare [2][]byte
	turn  int
}

// NewBlockCutter returns a cutter for the given granularity (use
// DefaultGranularity unless column_index_size says otherwise).
func NewBlockCutter(granularity int64) *BlockCutter {
	c := &BlockCutter{Granularity: granularity}
	c.Reset()
	return c
}

// Reset starts a new partition.
func (c *BlockCutter) Reset() {
	c.blocks = c.blocks[:0]
	c.open = false
	c.openAfter = deletiontime.Live
	c.lastEnd = 0
	c.started = false
	c.kept = c.kept[:0]
}

// Add reports the next unfiltered of the partition: the byte-comparable
// form of its clustering (a row's clustering, or a marker's bound or
// boundary), its start and end offsets from the start of the partition in
// Data.db, and for a range tombstone marker (isMarker) the deletion open
// after it: a start bound's deletion, a boundary's start deletion, Live
// for an end bound. bc must stay valid until Finish.
func (c *BlockCutter) Add(bc []byte, start, end int64, isMarker bool, openAfter deletiontime.DeletionTime) error {
	if end <= start || (c.started && start != c.lastEnd) {
		return fmt.Errorf("bti: unfiltered at %d..%d does not follow the previous one ending at %d", start, end, c.lastEnd)
	}
	c.started = true
	c.lastEnd = end
	if !c.open {
		c.cur = IndexBlock{First: bc, Offset: start, OpenDeletion: c.openAfter}
		c.open = true
	}
	c.cur.Last = bc
	if isMarker {
		c.openAfter = openAfter
	}
	if end-c.cur.Offset >= c.Granularity {
		c.blocks = append(c.blocks, c.cur)
		c.open = false
	}
	return nil
}

// Finish closes the partition. end is where its unfiltereds end (the
// position of the end-of-partition byte, from the partition's start). It
// returns the blocks and whether the partition gets a row index; when it
// does not, the blocks are still returned (one, or none for a partition
// without unfiltereds). The slice is the cutter's: valid until Reset.
func (c *BlockCutter) Finish(end int64) (blocks []IndexBlock, indexed bool, err error) {
	if c.started && end != c.lastEnd {
		return nil, false, fmt.Errorf("bti: partition end %d is not the end of its last unfiltered %d", end, c.lastEnd)
	}
	if c.open && len(c.blocks) > 0 {
		c.blocks = append(c.blocks, c.cur)
	} else if c.open {
		// One block only: Cassandra never closes it (no index), but
		// report it for completeness.
		c.blocks = append(c.blocks, c.cur)
		return c.blocks, false, nil
	}
	c.open = false
	return c.blocks, len(c.blocks) > 1, nil
}

// AddCopy is Add for a caller that reuses bc's memory for the next
// unfiltered: the cutter copies what it keeps. A block's first clustering
// and the last one of each closed block are kept until Reset; other
// clusterings only until the next Add. A partition so costs memory per
// block, not per unfiltered. Blocks returned by Finish are valid until
// Reset.
func (c *BlockCutter) AddCopy(bc []byte, start, end int64, isMarker bool, openAfter deletiontime.DeletionTime) error {
	starts := !c.open
	var own []byte
	if starts {
		own = c.keep(bc)
	} else {
		c.turn ^= 1
		c.spare[c.turn] = append(c.spare[c.turn][:0], bc...)
		own = c.spare[c.turn]
	}
	n := len(c.blocks)
	if err := c.Add(own, start, end, isMarker, openAfter); err != nil {
		return err
	}
	if len(c.blocks) > n && !starts {
		// The block closed on this unfiltered: its last clustering must
		// outlive the spare buffers.
		c.blocks[n].Last = c.keep(bc)
	}
	return nil
}

// keep copies b into memory that stays untouched until Reset.
func (c *BlockCutter) keep(b []byte) []byte {
	at := len(c.kept)
	c.kept = append(c.kept, b...)
	return c.kept[at:len(c.kept):len(c.kept)]
}
