package main

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/charmbracelet/x/ansi"
	"github.com/sstabletool/sstabletool/format/stats"
)

// ANSI colors of sstablemetadata -c (tools/Util.java).
const (
	ansiReset = "\x1b[0m"
	ansiBlue  = "\x1b[34m"
	ansiCyan  = "\x1b[36m"
	ansiWhite = "\x1b[37m"
)

// style is how metadata draws: colors (-c) and unicode bars (-u).
type style struct {
	color, unicode bool
}

func (st style) wrap(code, s string) string {
	if !st.color {
		return s
	}
	return code + s + ansiReset
}

// quiet is Util.wrapQuiet: "(s)" in white, nothing for "".
func (st style) quiet(s string) string {
	if s == "" {
		return ""
	}
	return st.wrap(ansiWhite, "("+s+")")
}

// termBin is one bucket of a terminal histogram: its offset (a bucket's
// upper bound, a time, a count) and how many values it holds.
type termBin struct {
	offset int64
	count  int64
}

// termHistogram is Util.TermHistogram: a table of offset, count, share and
// a bar 30 columns wide at the largest count, then percentiles from an
// EstimatedHistogram(165) the bins are added to.
type termHistogram struct {
	title      string
	bins       []termBin
	offsetName func(int64) string
	// exact, when set, are the percentiles to print (50th, 75th, 95th,
	// 98th, 99th, min, max) instead of TermHistogram's re-bucketed ones.
	exact []int64
}

// asciiBars and unicodeBars are Util's bar pieces by the fraction of a
// column they stand for (ASCII: O, o and .; unicode: eighth blocks).
var (
	asciiBars = []struct {
		at float64
		s  string
	}{{0.30, "."}, {0.75, "o"}, {1.0, "O"}}
	unicodeBars = []struct {
		at float64
		s  string
	}{{1.0 / 8, "\u258F"}, {1.0 / 4, "\u258E"}, {3.0 / 8, "\u258D"},
		{5.0 / 8, "\u258B"}, {3.0 / 4, "\u258A"}, {7.0 / 8, "\u2589"}, {1.0, "\u2589"}}
)

func (st style) bar(count, max int64, width int) string {
	bars := asciiBars
	if st.unicode {
		bars = unicodeBars
	}
	full := bars[len(bars)-1].s
	w := float64(count) / float64(max) * float64(width)
	// Counts come from Statistics.db, which mc/me sstables store without a
	// checksum: a damaged one may be negative or the only positive count
	// may be gone (max 0, w NaN or infinite). No bar is then drawn, and
	// none is wider than the histogram.
	if !(w > 0) {
		w = 0
	}
	w = min(w, float64(width))
	n := int(w)
	rem := w - float64(n)
	var b strings.Builder
	b.WriteString(strings.Repeat(full, n))
	piece := ""
	for _, p := range bars { // the largest fraction at most rem (TreeMap.floorKey)
		if p.at <= rem {
			piece = p.s
		}
	}
	b.WriteString(piece)
	if st.color {
		return ansiWhite + b.String() + ansiReset
	}
	return b.String()
}

func padRight(s string, n int) string {
	if d := n - ansi.StringWidth(s); d > 0 {
		return s + strings.Repeat(" ", d)
	}
	return s
}

func padLeft(s string, n int) string {
	if d := n - ansi.StringWidth(s); d > 0 {
		return strings.Repeat(" ", d) + s
	}
	return s
}

func (h termHistogram) print(w io.Writer, st style) {
	maxOffset, maxCount := ansi.StringWidth(h.title), 5
	var max, sum int64
	for _, b := range h.bins {
		max = maxInt(max, b.count)
		sum += b.count
		maxCount = maxInt(maxCount, len(fmt.Sprint(b.count)))
		maxOffset = maxInt(maxOffset, ansi.StringWidth(h.offsetName(b.offset)))
	}
	title, bar := h.title, "|"
	if st.color {
		title, bar = ansiBlue+title, ansiCyan+"|"+ansiBlue
	}
	histo := "Histogram"
	if st.color {
		histo = ansiBlue + histo + ansiReset
	}
	fmt.Fprintf(w, "   %s %s %s  %s  %s \n", padRight(title, maxOffset), bar, padRight("Count", maxCount), st.quiet("%"), histo)
	sep := "|"
	if st.color {
		sep = ansiCyan + "|" + ansiReset
	}
	for _, b := range h.bins {
		pct := int64(0)
		if sum > 0 {
			pct = int64(100 * (float64(b.count) / float64(sum)))
		}
		fmt.Fprintf(w, "   %s %s %s %s %s\n", padRight(h.offsetName(b.offset), maxOffset), sep,
			padLeft(fmt.Sprint(b.count), maxCount), st.quiet(fmt.Sprintf("%3d", pct)), st.bar(b.count, max, 30))
	}
	labels := []string{"50th", "75th", "95th", "98th", "99th", "Min", "Max"}
	values := make([]string, len(labels))
	if len(h.exact) == len(labels) {
		for i, v := range h.exact {
			values[i] = h.offsetName(v)
		}
	} else {
		// Percentiles of the bins added to an EstimatedHistogram(165), as
		// TermHistogram computes them: each bin lands in the bucket its
		// offset belongs to.
		eh := stats.NewEstimatedHistogram(165)
		for _, b := range h.bins {
			i := sort.Search(len(eh.Offsets), func(i int) bool { return eh.Offsets[i] >= b.offset })
			eh.Buckets[i] += b.count
		}
		for i, q := range []float64{.5, .75, .95, .98, .99} {
			if v, err := eh.Percentile(q); err != nil {
				values[i] = "overflow"
			} else {
				values[i] = h.offsetName(v)
			}
		}
		values[5], values[6] = h.offsetName(eh.Min()), maxName(eh, h.offsetName)
	}
	fmt.Fprintln(w, st.wrap(ansiBlue, "   Percentiles"))
	for i, l := range labels {
		fmt.Fprintf(w, "   %s%s\n", st.wrap(ansiBlue, fmt.Sprintf("%-10s", l)), values[i])
	}
}

func maxName(eh stats.EstimatedHistogram, name func(int64) string) string {
	m := eh.Max()
	if m == math.MaxInt64 {
		return "overflow"
	}
	return name(m)
}

func maxInt[T int | int64](a, b T) T {
	if a > b {
		return a
	}
	return b
}
