package catalog

import (
	"bytes"
	"fmt"

	"github.com/sstabletool/sstabletool/corrupt"
	"github.com/sstabletool/sstabletool/format"
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

// OpenPartition reads the header of partition i of l. The list's key and
// offset come from Index.db, which may be damaged: a partition whose key
// is not the listed one is refused, so that the view never shows one
// partition's rows under another's key.
func (t *Table) OpenPartition(l *List, i int) (*Partition, error) {
	off := l.Offsets[i]
	p := &Partition{t: t, dec: t.S.Decoder(off)}
	if err := p.dec.ReadPartitionHeader(&p.Header); err != nil {
		return nil, err
	}
	if !bytes.Equal(p.Header.Key, l.Keys[i]) {
		return nil, keyMismatch(t, l, i, p.Header.Key)
	}
	p.Header.Key = append([]byte(nil), p.Header.Key...)
	return p, nil
}

// keyMismatch is the error for partition i of l, whose Data.db key is not
// the listed one.
func keyMismatch(t *Table, l *List, i int, got []byte) error {
	file, comp := t.S.Path(format.ComponentIndex), format.ComponentIndex
	if l.Source != comp {
		file, comp = t.DataPath(), format.ComponentData
	}
	return corrupt.New(file, comp, -1, fmt.Sprintf("partition %s at Data.db byte %d", t.FormatKey(l.Keys[i]), l.Offsets[i]),
		fmt.Errorf("Data.db holds partition %s there", t.FormatKey(got)))
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
