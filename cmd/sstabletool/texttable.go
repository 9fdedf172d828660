package main

import (
	"io"
	"strconv"
	"text/tabwriter"
	"unicode/utf8"
)

// textTable writes what text/tabwriter writes for
// tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight) fed rows whose
// every cell ends in a tab: each block of rows between flushes gets
// columns as wide as their widest cell (in runes) plus two, cells
// right-aligned. It is the partitions listing's table, which tabwriter
// formatted at a few hundred nanoseconds a row, a byte at a time through
// its cell state machine, as much as the scan cost per partition; here a
// row costs its appends and a block two passes over the rows.
//
// A block holding any byte tabwriter gives a meaning to ('\t', '\n', '\v',
// '\f' or its escape, 0xff; a key can hold any of them) goes through
// tabwriter itself. FuzzTextTableMatchesTabwriter holds the two together.
type textTable struct {
	out     io.Writer
	buf     []byte // the block's cell bytes, one after another
	ends    []int  // where each cell ends in buf
	cols    int    // cells per row (every row has as many)
	rows    int
	special bool // some cell holds a byte tabwriter interprets
	width   []int
	line    []byte
	// cellWidth is each cell's width in runes, for Flush.
	cellWidth []int
}

// spaces pads cells to their column's width.
var spaces = []byte("                                                                ")

func newTextTable(out io.Writer, cols int) *textTable {
	return &textTable{out: out, cols: cols, width: make([]int, cols)}
}

// cell adds the next cell of the current row.
func (t *textTable) cell(s string) {
	if !t.special && hasTabwriterByte(s) {
		t.special = true
	}
	t.buf = append(t.buf, s...)
	t.ends = append(t.ends, len(t.buf))
}

// int adds an integer cell.
func (t *textTable) int(v int64) {
	t.buf = strconv.AppendInt(t.buf, v, 10)
	t.ends = append(t.ends, len(t.buf))
}

// endRow ends the current row, which must have cols cells.
func (t *textTable) endRow() { t.rows++ }

func hasTabwriterByte(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\t', '\n', '\v', '\f', tabwriter.Escape:
			return true
		}
	}
	return false
}

// Flush writes the block and starts a new one.
func (t *textTable) Flush() error {
	if t.rows == 0 {
		return nil
	}
	defer t.reset()
	if t.special {
		return t.viaTabwriter()
	}
	for c := range t.width {
		t.width[c] = 0
	}
	// Each cell's width once (the columns' widths need them all before
	// the first line), then the lines; a column index kept rather than a
	// division per cell, the padding appended from a run of spaces.
	t.cellWidth = t.cellWidth[:0]
	start, c := 0, 0
	for _, end := range t.ends {
		w := end - start
		if !isASCII(t.buf[start:end]) {
			w = utf8.RuneCount(t.buf[start:end])
		}
		t.cellWidth = append(t.cellWidth, w)
		t.width[c] = max(t.width[c], w+2)
		if c++; c == t.cols {
			c = 0
		}
		start = end
	}
	start, c = 0, 0
	line := t.line[:0]
	for i, end := range t.ends {
		for n := t.width[c] - t.cellWidth[i]; n > 0; n -= len(spaces) {
			line = append(line, spaces[:min(n, len(spaces))]...)
		}
		line = append(line, t.buf[start:end]...)
		if c++; c == t.cols {
			c = 0
			line = append(line, '\n')
			if len(line) >= 32<<10 {
				if _, err := t.out.Write(line); err != nil {
					return err
				}
				line = line[:0]
			}
		}
		start = end
	}
	t.line = line[:0]
	_, err := t.out.Write(line)
	return err
}

// viaTabwriter writes the block as tabwriter does, through it.
func (t *textTable) viaTabwriter() error {
	tw := tabwriter.NewWriter(t.out, 0, 4, 2, ' ', tabwriter.AlignRight)
	start := 0
	var row []byte
	for i, end := range t.ends {
		row = append(row, t.buf[start:end]...)
		row = append(row, '\t')
		if i%t.cols == t.cols-1 {
			row = append(row, '\n')
			if _, err := tw.Write(row); err != nil {
				return err
			}
			row = row[:0]
		}
		start = end
	}
	return tw.Flush()
}

func (t *textTable) reset() {
	t.buf, t.ends, t.rows, t.special = t.buf[:0], t.ends[:0], 0, false
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
