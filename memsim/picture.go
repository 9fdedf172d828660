package memsim

import (
	"fmt"
	"math"
	"strings"

	"github.com/sstabletool/sstabletool/internal/words"
)

// Picture is what the charts show, computed once from a report so that the
// text, SVG, HTML and terminal views say the same thing: per memtable and
// allocation type the bytes per partition on and off heap against the live
// data, how often flushes come, and how the cost per partition changes as
// the memtable grows, where it does.
type Picture struct {
	Title    string
	Subtitle string // the run's settings in one line
	Rows     []PictureRow
	Curves   []Curve
	// Constant lists the memtables whose cost per partition does not
	// change with their size (not drawn as curves), with that cost.
	Constant []string
	// MaxPerPartition is the largest on+off heap bytes per partition (the
	// bar scale); MaxFlushes the largest flushes per million writes.
	MaxPerPartition float64
	MaxFlushes      float64
	FlushRule       string // how the flush trigger was computed
}

// PictureRow is one memtable and allocation type.
type PictureRow struct {
	Memtable, Allocation string
	On, Off, Live        float64 // bytes per partition
	Partitions           int64
	OpsPerFlush          float64
	FlushesPerMillion    float64
	FlushPool            string
}

// Label is the row's name as the charts print it.
func (r *PictureRow) Label() string { return r.Memtable + " " + r.Allocation }

// Curve is the bytes per partition of one memtable (in one allocation
// type) over a replay.
type Curve struct {
	Label    string
	Points   []CurvePoint
	Min, Max float64
}

// CurvePoint is the bytes per partition after Ops operations.
type CurvePoint struct {
	Ops          int64
	PerPartition float64
}

// curveFloor is the fewest partitions a curve point needs: before that,
// per-partition costs are dominated by one-off objects.
const curveFloor = 1000

// straightTolerance is how much the cost per partition may vary (relative
// to its mean) for the footprint to count as a straight line.
const straightTolerance = 0.01

// NewPicture builds the picture of a report.
func NewPicture(rep *Report, title string) *Picture {
	p := &Picture{Title: title, Subtitle: settingsLine(&rep.Settings)}
	s := &rep.Settings
	if s.HeapSpace > 0 || s.OffheapSpace > 0 {
		p.FlushRule = fmt.Sprintf("trigger: heap %s or off heap %s × cleanup threshold %.2f",
			words.PrettyMemory(s.HeapSpace, ""), words.PrettyMemory(s.OffheapSpace, ""), s.CleanupThreshold)
	}
	seenKind := map[string]bool{}
	for i := range rep.Results {
		r := &rep.Results[i]
		row := PictureRow{Memtable: r.Memtable, Allocation: r.Allocation, Partitions: r.Partitions,
			OpsPerFlush: r.OpsPerFlush, FlushesPerMillion: r.FlushesPerMillion, FlushPool: r.FlushPool}
		if r.Partitions > 0 {
			n := float64(r.Partitions)
			row.On, row.Off, row.Live = float64(r.OnHeap)/n, float64(r.OffHeap)/n, float64(r.LiveData)/n
		}
		// A result read back from a file may hold anything: bars are
		// drawn from non-negative, finite values only.
		for _, v := range []*float64{&row.On, &row.Off, &row.Live, &row.OpsPerFlush, &row.FlushesPerMillion} {
			if !(*v >= 0) || math.IsInf(*v, 0) {
				*v = 0
			}
		}
		p.Rows = append(p.Rows, row)
		p.MaxPerPartition = max(p.MaxPerPartition, row.On+row.Off, row.Live)
		p.MaxFlushes = max(p.MaxFlushes, row.FlushesPerMillion)
	}
	// One curve per memtable: the allocation types of a memtable differ by
	// a constant per partition, so their curves have the same shape. The
	// published figures are heap_buffers', so that one when there.
	for i := range rep.Results {
		r := &rep.Results[i]
		if seenKind[r.Memtable] {
			continue
		}
		if r.Allocation != HeapBuffers.String() && hasResult(rep.Results, r.Memtable, HeapBuffers.String()) {
			continue
		}
		seenKind[r.Memtable] = true
		if c, ok := curveOf(r); ok {
			p.Curves = append(p.Curves, c)
		} else if len(c.Points) > 0 {
			p.Constant = append(p.Constant, fmt.Sprintf("%s %.1f B", c.Label, c.Points[len(c.Points)-1].PerPartition))
		}
	}
	return p
}

func hasResult(rs []Result, memtable, alloc string) bool {
	for i := range rs {
		if rs[i].Memtable == memtable && rs[i].Allocation == alloc {
			return true
		}
	}
	return false
}

// curveOf returns the cost-per-partition curve of a result and whether it
// is worth drawing (it varies by more than straightTolerance).
func curveOf(r *Result) (Curve, bool) {
	c := Curve{Label: r.Memtable + " (" + r.Allocation + ")", Min: math.Inf(1), Max: math.Inf(-1)}
	var sum float64
	for _, s := range r.Samples {
		if s.Partitions < curveFloor || s.Ops <= 0 || s.OnHeap < 0 || s.OffHeap < 0 {
			continue
		}
		v := float64(s.OnHeap+s.OffHeap) / float64(s.Partitions)
		c.Points = append(c.Points, CurvePoint{Ops: s.Ops, PerPartition: v})
		c.Min, c.Max = min(c.Min, v), max(c.Max, v)
		sum += v
	}
	if len(c.Points) < 3 {
		return c, false
	}
	mean := sum / float64(len(c.Points))
	return c, (c.Max-c.Min)/mean > straightTolerance
}

func settingsLine(s *Settings) string {
	var parts []string
	if s.Source == "sstables" {
		parts = append(parts, fmt.Sprintf("%d sstable(s)", len(s.SSTables)))
	} else if s.Table != "" {
		parts = append(parts, "table "+s.Table+" ("+s.ProfileFormat+" profile "+s.ProfileFile+")")
	} else if s.Profile != "" {
		parts = append(parts, "profile "+s.Profile)
	}
	if s.Ops > 0 {
		parts = append(parts, fmt.Sprintf("%s ops", Count(s.Ops)))
	}
	if s.Partitioner != "" {
		parts = append(parts, s.Partitioner)
	}
	if s.JDK > 0 {
		parts = append(parts, fmt.Sprintf("JDK %d", s.JDK))
	}
	if s.Cassandra != "" {
		parts = append(parts, "Cassandra "+s.Cassandra)
	}
	if s.Shards > 0 {
		parts = append(parts, fmt.Sprintf("%d trie shards", s.Shards))
	}
	return strings.Join(parts, ", ")
}

// Count renders an integer with SI-style abbreviations (1.2M, 340k).
func Count(n int64) string {
	v := float64(n)
	switch {
	case v >= 1e9:
		return trimZero(fmt.Sprintf("%.2f", v/1e9)) + "G"
	case v >= 1e6:
		return trimZero(fmt.Sprintf("%.2f", v/1e6)) + "M"
	case v >= 1e4:
		return trimZero(fmt.Sprintf("%.1f", v/1e3)) + "k"
	}
	return fmt.Sprint(n)
}

func trimZero(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// flushText describes a row's flush rate.
func (r *PictureRow) flushText() string {
	if r.OpsPerFlush <= 0 {
		return "no flush trigger"
	}
	return fmt.Sprintf("%.2f per M writes (one per %s, %s fills first)", r.FlushesPerMillion, Count(int64(r.OpsPerFlush)), r.FlushPool)
}

// sizeText describes a row's bytes per partition.
func (r *PictureRow) sizeText() string {
	return fmt.Sprintf("%.1f on + %.1f off = %.1f B (live %.1f)", r.On, r.Off, r.On+r.Off, r.Live)
}

// TextColumns returns the widths (in characters) of the row labels and of
// the longest text printed after a bar, so that a caller can size the
// bars to its window.
func (p *Picture) TextColumns() (label, text int) {
	for i := range p.Rows {
		r := &p.Rows[i]
		label = max(label, len([]rune(r.Label())))
		text = max(text, len([]rune(r.sizeText())), len([]rune(r.flushText())))
	}
	return label, text
}

// TextOptions say how Text draws.
type TextOptions struct {
	Width int                   // bar width in cells (default 40)
	On    func(s string) string // style of on-heap cells (default none)
	Off   func(s string) string // style of off-heap cells
	Live  func(s string) string // style of the live-data mark
	Dim   func(s string) string // style of secondary text
}

// Text draws the picture with block characters: █ on heap, ▒ off heap and
// │ where the live data ends, so it reads the same without colour.
func (p *Picture) Text(o TextOptions) string {
	id := func(s string) string { return s }
	if o.Width <= 0 {
		o.Width = 40
	}
	for _, f := range []*func(string) string{&o.On, &o.Off, &o.Live, &o.Dim} {
		if *f == nil {
			*f = id
		}
	}
	var b strings.Builder
	labelW := 0
	for i := range p.Rows {
		labelW = max(labelW, len(p.Rows[i].Label()))
	}
	scale := p.MaxPerPartition / float64(o.Width)
	fmt.Fprintf(&b, "bytes per partition (%s on heap, %s off heap, %s live data; one cell = %.1f B)\n",
		o.On("█"), o.Off("▒"), o.Live("│"), scale)
	prev := ""
	for i := range p.Rows {
		r := &p.Rows[i]
		if prev != "" && r.Memtable != prev {
			b.WriteString("\n")
		}
		prev = r.Memtable
		fmt.Fprintf(&b, "%-*s %s %s\n", labelW, r.Label(), p.bar(r, o, scale), o.Dim(r.sizeText()))
	}
	if p.MaxFlushes > 0 {
		fmt.Fprintf(&b, "\nflushes per million writes (%s)\n", p.FlushRule)
		prev = ""
		for i := range p.Rows {
			r := &p.Rows[i]
			if prev != "" && r.Memtable != prev {
				b.WriteString("\n")
			}
			prev = r.Memtable
			n := min(max(int(math.Round(r.FlushesPerMillion/p.MaxFlushes*float64(o.Width))), 0), o.Width)
			fmt.Fprintf(&b, "%-*s %s%s %s\n", labelW, r.Label(), o.On(strings.Repeat("█", n)), strings.Repeat(" ", o.Width-n), o.Dim(r.flushText()))
		}
	}
	if len(p.Curves) > 0 {
		b.WriteString("\nbytes per partition as the memtable grows (only where it is not a straight line)\n")
		for _, c := range p.Curves {
			fmt.Fprintf(&b, "%s: %s\n", c.Label, decades(c))
		}
		if len(p.Constant) > 0 {
			fmt.Fprintf(&b, "constant: %s\n", strings.Join(p.Constant, ", "))
		}
	}
	return b.String()
}

// bar draws a row's on-heap and off-heap cells with the live mark.
func (p *Picture) bar(r *PictureRow, o TextOptions, scale float64) string {
	on := int(math.Round(r.On / scale))
	off := int(math.Round((r.On + r.Off) / scale))
	off -= on
	live := int(math.Round(r.Live / scale))
	cells := make([]string, o.Width)
	for i := range cells {
		switch {
		case i == min(live, o.Width-1):
			cells[i] = o.Live("│")
		case i < on:
			cells[i] = o.On("█")
		case i < on+off:
			cells[i] = o.Off("▒")
		default:
			cells[i] = " "
		}
	}
	return strings.Join(cells, "")
}

// decades lists a curve's bytes per partition near each power of ten of
// the op count, and its range.
func decades(c Curve) string {
	var parts []string
	next := int64(1000)
	for _, pt := range c.Points {
		for pt.Ops >= next*10 {
			next *= 10
		}
		if pt.Ops >= next {
			parts = append(parts, fmt.Sprintf("%s ops %.1f B", Count(pt.Ops), pt.PerPartition))
			next *= 10
		}
	}
	last := c.Points[len(c.Points)-1]
	if len(parts) == 0 || !strings.HasPrefix(parts[len(parts)-1], Count(last.Ops)+" ") {
		parts = append(parts, fmt.Sprintf("%s ops %.1f B", Count(last.Ops), last.PerPartition))
	}
	return strings.Join(parts, ", ") + fmt.Sprintf("  (%.1f to %.1f)", c.Min, c.Max)
}
