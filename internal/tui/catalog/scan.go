package catalog

import (
	"bytes"
	"context"
	"errors"
	"time"

	"github.com/sstabletool/sstabletool/corrupt"
	"github.com/sstabletool/sstabletool/format/sstable"
)

// ScanBatch is a run of counts from the background scan.
type ScanBatch struct {
	From   int // index of Counts[0] in the list
	Counts []Counts
	// Done and Total are uncompressed Data.db bytes.
	Done, Total int64
	// Err is a partition that failed to decode; the scan goes on after it.
	Err      error
	Finished bool
}

// Apply stores a batch's counts in the list.
func (l *List) Apply(b ScanBatch) {
	for i, c := range b.Counts {
		j := b.From + i
		if j >= len(l.Counts) {
			break
		}
		if l.Counts[j].Deleted == Unknown && !l.Counts[j].Failed {
			l.Scanned++
		}
		l.Counts[j] = c
	}
}

// batchEvery bounds how stale the counts on screen can be.
const batchEvery = 100 * time.Millisecond

// Scan decodes every partition of Data.db (cells included) and sends their
// counts in batches, in list order, ending with a Finished batch; it stops
// early when ctx is cancelled. A partition that fails to decode is marked
// Failed, reported in a batch's Err, and the scan resumes at the next
// listed partition, so one corrupt chunk costs only what it covers.
func (t *Table) Scan(ctx context.Context, l *List, out chan<- ScanBatch) {
	if !t.hold() {
		return
	}
	defer t.release()
	total := t.S.Data().Length()
	next := 0 // next list index expected
	batch := ScanBatch{Total: total}
	last := time.Now()
	send := func(b ScanBatch) bool {
		select {
		case out <- b:
			return true
		case <-ctx.Done():
			return false
		}
	}
	flush := func(done int64) bool {
		batch.Done = done
		ok := send(batch)
		batch = ScanBatch{Total: total, From: next}
		last = time.Now()
		return ok
	}
	for next < len(l.Offsets) {
		start := l.Offsets[next]
		batch.From = next
		n := 0
		err := t.S.ScanPartitions(sstable.ScanOptions{Start: start}, func(p *sstable.PartitionSummary) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			// Partitions missing from the list (a damaged Index.db) are skipped.
			for next < len(l.Offsets) && l.Offsets[next] < p.Offset {
				batch.Counts = append(batch.Counts, Counts{Rows: Unknown, Cells: Unknown, Tombstones: Unknown, Deleted: Unknown, Failed: true})
				next++
			}
			if next >= len(l.Offsets) || l.Offsets[next] != p.Offset {
				return nil
			}
			if !bytes.Equal(p.Key, l.Keys[next]) {
				// A damaged Index.db listed another key here: its counts
				// are not this partition's, and the view must say so.
				batch.Err = keyMismatch(t, l, next, p.Key)
				batch.Counts = append(batch.Counts, Counts{Rows: Unknown, Cells: Unknown, Tombstones: Unknown, Deleted: Unknown, Failed: true})
				next++
				return nil
			}
			c := Counts{Rows: p.Rows, Cells: p.Cells, Tombstones: p.Tombstones}
			if !p.Deletion.IsLive() {
				c.Deleted = 1
			}
			batch.Counts = append(batch.Counts, c)
			next++
			n++
			if n&255 == 0 && time.Since(last) > batchEvery {
				if !flush(p.Offset + p.Size) {
					return context.Canceled
				}
			}
			return nil
		})
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			break
		}
		// The partition at next failed: mark it and resume after it.
		batch.Err = err
		var ce *corrupt.Error
		if !errors.As(err, &ce) {
			batch.Err = corrupt.New(t.DataPath(), "Data.db", start, "a decodable partition", err)
		}
		if next < len(l.Offsets) {
			batch.Counts = append(batch.Counts, Counts{Rows: Unknown, Cells: Unknown, Tombstones: Unknown, Deleted: Unknown, Failed: true})
			next++
		}
		done := total
		if next < len(l.Offsets) {
			done = l.Offsets[next]
		}
		if !flush(done) {
			return
		}
	}
	batch.Finished = true
	flush(total)
}
