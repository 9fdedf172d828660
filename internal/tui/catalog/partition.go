package catalog

import (
	"github.com/sstabletool/sstabletool/format/rows"
)

// Partition reads one partition's rows and markers page by page, so that a
// partition of millions of rows opens as fast as a small one.
type Partition struct {
	Header rows.PartitionHeader // Key is a copy
	// Items are the unfiltereds read so far, static row first, in Data.db order.
	Items []*rows.Unfiltered
	// Done is set once the end-of-partition byte was read.
	Done bool
	// End is the offset just past the partition, once Done.
	End int64
	// Err is the decoding error that stopped reading, naming file and offset.
	Err error

	t   *Table
	dec *rows.Decoder
}

// OpenPartition reads the header of the partition at Data.db offset off.
func (t *Table) OpenPartition(off int64) (*Partition, error) {
	p := &Partition{t: t, dec: t.S.Decoder(off)}
	if err := p.dec.ReadPartitionHeader(&p.Header); err != nil {
		return nil, err
	}
	p.Header.Key = append([]byte(nil), p.Header.Key...)
	return p, nil
}

// More decodes up to n more unfiltereds; it returns how many it added.
func (p *Partition) More(n int) int {
	added := 0
	for added < n && !p.Done && p.Err == nil {
		u, err := p.dec.Next(false)
		if err != nil {
			p.Err = err
			break
		}
		if u == nil {
			p.Done = true
			p.End = p.dec.Source().Pos()
			break
		}
		p.Items = append(p.Items, u.Clone())
		added++
	}
	return added
}
