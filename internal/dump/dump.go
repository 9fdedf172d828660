// Package dump writes sstable contents as JSON compatible with
// Cassandra's sstabledump (tools/JsonTransformer.java): the same objects,
// field names and value renderings, pretty-printed the way Jackson lays
// them out, or one partition per line (--jsonl).
//
// One deliberate difference: counter cells show the counter's total (the
// sum of its shards), where sstabledump decodes the raw counter context as
// if it were a bigint and prints a meaningless number.
package dump

import (
	"io"
	"time"

	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
)

// Options shapes the output.
type Options struct {
	JSONLines     bool // one compact partition object per line, no enclosing array
	RawTimestamps bool // -t: numbers instead of ISO-8601 instants
	// Now decides the "expired" flags; tests pin it.
	Now func() time.Time
	// Workers is how many goroutines All renders with: 0 means
	// GOMAXPROCS, 1 renders on the calling goroutine alone.
	Workers int
	// Debug prints sstabledump -d's lines (see debug.go) instead of JSON;
	// JSONLines and RawTimestamps do not apply.
	Debug bool
}

// Dumper writes partitions of one sstable, or of a merged table
// (NewTableDumper). Output is gathered in a
// buffer and written in blocks of about 256 KiB; Flush and End write the
// rest.
type Dumper struct {
	s     *sstable.SSTable // nil for a table dumper
	o     Options
	w     io.Writer
	r     *renderer
	count int
	now   int64
	err   error // the first write error; nothing is written after it

	// Tests make All cut small segments, or cut them wrongly.
	segmentSize int64
	cuts        func(send func(sstable.Cut) bool)
}

// NewDumper returns a dumper writing to w.
func NewDumper(w io.Writer, s *sstable.SSTable, o Options) *Dumper {
	if o.Now == nil {
		o.Now = time.Now
	}
	d := &Dumper{s: s, o: o, w: w, now: o.Now().Unix()}
	d.r = newRenderer(s, o, d.now, d)
	return d
}

// NewTableDumper returns a dumper of partitions that do not come from
// one sstable's decoder (a merged table's): PartitionFrom writes them;
// All is for sstables.
func NewTableDumper(w io.Writer, t Table, o Options) *Dumper {
	if o.Now == nil {
		o.Now = time.Now
	}
	d := &Dumper{o: o, w: w, now: o.Now().Unix()}
	d.r = newRenderer(t, o, d.now, d)
	return d
}

// emit writes a full buffer (the renderer's sink).
func (d *Dumper) emit(b []byte) ([]byte, error) {
	if d.err == nil {
		_, d.err = d.w.Write(b)
	}
	return b[:0], d.err
}

// Begin writes what precedes the first partition.
func (d *Dumper) Begin() {
	d.r.put(&d.r.l.docOpen)
}

// End closes the document and flushes.
func (d *Dumper) End() error {
	if d.count == 0 {
		d.r.put(&d.r.l.docEmptyClose)
	} else {
		d.r.put(&d.r.l.docClose)
	}
	return d.Flush()
}

// Partition decodes the partition whose header dec has just read and writes it.
func (d *Dumper) Partition(h *rows.PartitionHeader, dec *rows.Decoder) error {
	if d.err != nil {
		return d.err
	}
	first := d.count == 0
	d.count++
	return d.r.partition(h, dec, first)
}

// PartitionFrom writes a partition whose static row, rows and markers
// src gives, after header h.
func (d *Dumper) PartitionFrom(h *rows.PartitionHeader, src Unfiltereds) error {
	if d.err != nil {
		return d.err
	}
	first := d.count == 0
	d.count++
	return d.r.partition(h, src, first)
}

// Flush writes buffered output.
func (d *Dumper) Flush() error {
	if len(d.r.buf) > 0 {
		d.r.buf, _ = d.emit(d.r.buf)
	}
	return d.err
}
