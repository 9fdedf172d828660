package merge

import "slices"

// Merged is the provenance of a counter cell whose context the merge
// combined from several sstables' shards: no one sstable holds it.
const Merged = -2

// Provenance says which sstable (its index in Table.SSTables()) each
// part of a merged unfiltered came from; -1 where there is no such part.
type Provenance struct {
	// Row is the newest sstable that contributed to the unfiltered; the
	// unfiltered's Offset is its position in that sstable's Data.db.
	Row int
	// Liveness and Deletion are a row's primary key liveness and row
	// deletion; for a range tombstone bound, Deletion is the bound's.
	Liveness, Deletion int
	// ShadowableDeletion is ScyllaDB's shadowable row deletion.
	ShadowableDeletion int
	// End and Start are a range tombstone boundary's closing and opening
	// deletions.
	End, Start int
	// Cells and ComplexDeletions are aligned with the unfiltered's.
	Cells, ComplexDeletions []int
}

func (p *Provenance) reset() {
	p.Row, p.Liveness, p.Deletion, p.ShadowableDeletion, p.End, p.Start = -1, -1, -1, -1, -1, -1
	p.Cells, p.ComplexDeletions = p.Cells[:0], p.ComplexDeletions[:0]
}

// Clone returns a copy that stays valid after the next Partition.Next.
func (p *Provenance) Clone() Provenance { return p.clone() }

func (p *Provenance) clone() Provenance {
	c := *p
	c.Cells, c.ComplexDeletions = slices.Clone(p.Cells), slices.Clone(p.ComplexDeletions)
	return c
}
