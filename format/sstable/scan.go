package sstable

import (
	"errors"
	"io"

	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format/rows"
)

// PartitionSummary is what a partition-level scan learns about one partition.
type PartitionSummary struct {
	Key        []byte // valid until the callback returns
	Offset     int64  // in uncompressed Data.db
	Size       int64  // bytes from the header to the end-of-partition byte, inclusive
	HeaderSize int
	Deletion   deletiontime.DeletionTime
	Rows       int64 // rows, static row included when it has data
	Markers    int64 // range tombstone bounds and boundaries
	Cells      int64 // -1 when the scan skipped cell decoding
	Tombstones int64 // partition, row, range and cell deletions (-1 when skipped)
	HasStatic  bool
}

// ScanOptions selects how much of each partition a scan decodes.
type ScanOptions struct {
	// SkipCells skips row bodies by their size: rows are counted but cells
	// and cell tombstones are not.
	SkipCells bool
	// Start is the Data.db offset to start at (a partition boundary).
	Start int64
}

// ScanPartitions walks Data.db once, partition by partition, calling fn
// with a summary of each. fn may return io.EOF to stop early.
func (s *SSTable) ScanPartitions(o ScanOptions, fn func(p *PartitionSummary) error) error {
	d := s.Decoder(o.Start)
	var h rows.PartitionHeader
	var p PartitionSummary
	for {
		err := d.ReadPartitionHeader(&h)
		if err == io.EOF { // the decoder's clean end, never wrapped
			return nil
		}
		if err != nil {
			return err
		}
		p = PartitionSummary{Key: h.Key, Offset: h.Offset, HeaderSize: h.Size, Deletion: h.Deletion}
		if o.SkipCells {
			p.Cells, p.Tombstones = -1, -1
		}
		if !h.Deletion.IsLive() && !o.SkipCells {
			p.Tombstones++
		}
		if o.SkipCells {
			sk, err := d.SkimRest()
			if err != nil {
				return err
			}
			p.Rows, p.Markers, p.HasStatic = sk.Rows, sk.Markers, sk.HasStatic
		}
		for !o.SkipCells {
			u, err := d.Next(o.SkipCells)
			if err != nil {
				return err
			}
			if u == nil {
				break
			}
			switch u.Kind {
			case rows.KindMarker:
				p.Markers++
				if !o.SkipCells {
					p.Tombstones++
				}
				continue
			case rows.KindStaticRow:
				p.HasStatic = true
			}
			p.Rows++
			if !o.SkipCells {
				p.Cells += int64(len(u.Cells))
				p.Tombstones += int64(u.Tombstones())
			}
		}
		p.Size = d.Pos() - h.Offset
		if err := fn(&p); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// EachPartition walks Data.db from the start, calling fn with each
// partition header and the decoder positioned after it. Whatever fn leaves
// of the partition is skipped, so fn may read all, some or none of its
// rows. fn may return io.EOF to stop early.
func (s *SSTable) EachPartition(fn func(h *rows.PartitionHeader, dec *rows.Decoder) error) error {
	dec := s.Decoder(0)
	var h rows.PartitionHeader
	for {
		err := dec.ReadPartitionHeader(&h)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(&h, dec); err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
		if dec.InPartition() {
			if err := dec.SkipRest(); err != nil {
				return err
			}
		}
	}
}
