package memsim

import (
	"fmt"
	"html"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/sstabletool/sstabletool/internal/words"
)

// WriteTable prints one line per memtable and allocation type.
func WriteTable(w io.Writer, rs []Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "memtable\tallocation\tpartitions\ton heap\toff heap\tlive data\ton/partition\toff/partition\toverhead/cell\tGo bytes\tmap s\tfirst flush op\tflushes/M writes\t")
	for _, r := range rs {
		flush := "never"
		if r.FirstFlushOp >= 0 {
			flush = fmt.Sprint(r.FirstFlushOp)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%.1f\t%.1f\t%.1f\t%s\t%.2f\t%s\t%.2f\t\n",
			r.Memtable, r.Allocation, r.Partitions, words.PrettyMemory(r.OnHeap, ""), words.PrettyMemory(r.OffHeap, ""), words.PrettyMemory(r.LiveData, ""),
			r.OnHeapPerPartition, r.OffHeapPerPartition, r.OverheadPerCell, words.PrettyMemory(r.GoStructure, ""), r.MapSeconds, flush, r.FlushesPerMillion)
	}
	return tw.Flush()
}

// WriteBench prints a speed comparison: per case and memtable the median
// time per op with the fastest and slowest run, and the speed relative to
// the skip list (median, and the extremes of back-to-back runs).
func WriteBench(w io.Writer, rep *BenchReport) error {
	fmt.Fprintf(w, "each memtable alone, same ops, 1 warm-up + %d runs, %d cores; mixed = %.0f%% reads\n", rep.Runs, rep.Cores, 100*rep.ReadFraction)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "workload\twriters\tmemtable\tops\tns/op\t(min-max)\tops/s\tvs skiplist\t(min-max)\t")
	for _, r := range rep.Results {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%.0f\t(%.0f-%.0f)\t%.0f\t%.2fx\t(%.2f-%.2f)\t\n", r.Workload, r.Writers, r.Memtable, r.Ops,
			r.NsPerOp, r.NsPerOpMin, r.NsPerOpMax, r.OpsPerSecond, r.VsSkipList, r.VsSkipListMin, r.VsSkipListMax)
	}
	return tw.Flush()
}

// WriteReads prints read timings per memtable and pattern.
func WriteReads(w io.Writer, rs []Result) error {
	seen := map[string]bool{}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	header := false
	for _, r := range rs {
		if seen[r.Memtable] || len(r.ReadStats) == 0 {
			continue
		}
		seen[r.Memtable] = true
		if !header {
			fmt.Fprintln(tw, "memtable\tread pattern\treads\tfound\trows\tns/read\t")
			header = true
		}
		for _, s := range r.ReadStats {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%.0f\t\n", r.Memtable, s.Pattern, s.Reads, s.Found, s.Rows, s.NsPerRead)
		}
	}
	return tw.Flush()
}

// svgText estimates the width of text in the SVG's 12-pixel sans-serif,
// generously, so that columns are laid out wide enough for their labels.
func svgText(s string) float64 { return 7 * float64(len([]rune(s))) }

// WriteSVG draws the picture: stacked bars of bytes per partition on and
// off heap with the live data marked, bars of flushes per million writes,
// and, where the cost per partition is not constant, its curve against the
// op count. Off heap is hatched and every bar is labelled, so it reads
// without colour; every label is measured so that nothing is cut off.
func WriteSVG(w io.Writer, p *Picture) error {
	const rowH, gap, pad = 18, 8, 16
	labelW := 0.0
	valueW := 0.0
	flushW := 0.0
	for i := range p.Rows {
		r := &p.Rows[i]
		labelW = max(labelW, svgText(r.Label()))
		valueW = max(valueW, svgText(r.sizeText()))
		flushW = max(flushW, svgText(r.flushText()))
	}
	const barW = 420.0
	left := pad + labelW + 10
	width := left + barW + 10 + max(valueW, flushW) + pad
	width = max(width, svgText(p.Title)*15/12+2*pad, svgText(p.Subtitle)+2*pad, svgText(p.FlushRule)+2*pad, 640)
	for _, c := range p.Curves {
		width = max(width, left+36+svgText(c.Label+": "+decades(c))+pad)
	}
	if len(p.Constant) > 0 {
		width = max(width, left+svgText("constant, not drawn: "+strings.Join(p.Constant, ", "))+pad)
	}
	groups := 0
	for i := range p.Rows {
		if i == 0 || p.Rows[i].Memtable != p.Rows[i-1].Memtable {
			groups++
		}
	}
	section := float64(len(p.Rows)*rowH + (groups-1)*gap)
	curveH := 0.0
	if len(p.Curves) > 0 {
		curveH = 60 + 260 + 30 + float64(len(p.Curves)+1)*rowH
	}
	flushH := 0.0
	if p.MaxFlushes > 0 {
		flushH = 60 + section
	}
	height := 70 + 50 + section + flushH + curveH + pad
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	b.WriteString(`<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#f4c27a"/><line x1="0" y1="0" x2="0" y2="6" stroke="#8a5a00" stroke-width="2"/></pattern></defs>` + "\n")
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/><text x="%d" y="26" font-size="15" font-weight="bold">%s</text>`+"\n", pad, html.EscapeString(p.Title))
	fmt.Fprintf(&b, `<text x="%d" y="46" fill="#444">%s</text>`+"\n", pad, html.EscapeString(p.Subtitle))
	y := 70.0
	// Section 1: bytes per partition.
	fmt.Fprintf(&b, `<text x="%d" y="%.0f" font-weight="bold">Bytes per partition</text>`+"\n", pad, y)
	lx := left
	fmt.Fprintf(&b, `<rect x="%.0f" y="%.0f" width="14" height="12" fill="#2b5c8a"/><text x="%.0f" y="%.0f">on heap</text>`, lx, y+10, lx+18, y+20)
	lx += 90
	fmt.Fprintf(&b, `<rect x="%.0f" y="%.0f" width="14" height="12" fill="url(#hatch)" stroke="#8a5a00"/><text x="%.0f" y="%.0f">off heap</text>`, lx, y+10, lx+18, y+20)
	lx += 90
	fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="black" stroke-width="2"/><text x="%.0f" y="%.0f">live data (what the rows hold)</text>`+"\n", lx+6, y+8, lx+6, y+24, lx+14, y+20)
	y += 36
	scale := barW / max(p.MaxPerPartition, 1)
	rowY := func(i int, top float64) float64 {
		g := 0
		for j := 1; j <= i; j++ {
			if p.Rows[j].Memtable != p.Rows[j-1].Memtable {
				g++
			}
		}
		return top + float64(i*rowH+g*gap)
	}
	for i := range p.Rows {
		r := &p.Rows[i]
		ry := rowY(i, y)
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" text-anchor="end">%s</text>`, left-10, ry+12, html.EscapeString(r.Label()))
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.0f" width="%.1f" height="14" fill="#2b5c8a"/>`, left, ry+1, r.On*scale)
		if r.Off > 0 {
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.0f" width="%.1f" height="14" fill="url(#hatch)" stroke="#8a5a00" stroke-width="0.5"/>`, left+r.On*scale, ry+1, r.Off*scale)
		}
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.0f" x2="%.1f" y2="%.0f" stroke="black" stroke-width="2"/>`, left+r.Live*scale, ry-1, left+r.Live*scale, ry+17)
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f">%s</text>`+"\n", left+barW+10, ry+12, html.EscapeString(r.sizeText()))
	}
	y += section + 30
	// Section 2: flushes.
	if p.MaxFlushes > 0 {
		fmt.Fprintf(&b, `<text x="%d" y="%.0f" font-weight="bold">Flushes per million writes</text>`+"\n", pad, y)
		fmt.Fprintf(&b, `<text x="%d" y="%.0f" fill="#444">%s</text>`+"\n", pad, y+18, html.EscapeString(p.FlushRule))
		y += 30
		fscale := barW / p.MaxFlushes
		for i := range p.Rows {
			r := &p.Rows[i]
			ry := rowY(i, y)
			fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" text-anchor="end">%s</text>`, left-10, ry+12, html.EscapeString(r.Label()))
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.0f" width="%.1f" height="14" fill="#7a7a7a"/>`, left, ry+1, r.FlushesPerMillion*fscale)
			fmt.Fprintf(&b, `<text x="%.0f" y="%.0f">%s</text>`+"\n", left+barW+10, ry+12, html.EscapeString(r.flushText()))
		}
		y += section + 30
	}
	// Section 3: curves, against log10 of the op count.
	if len(p.Curves) > 0 {
		fmt.Fprintf(&b, `<text x="%d" y="%.0f" font-weight="bold">Bytes per partition as the memtable grows (drawn only where it is not constant)</text>`+"\n", pad, y)
		y += 20
		cx0, cx1 := left, left+barW
		cy0, cy1 := y+10, y+250
		minOps, maxOps := int64(math.MaxInt64), int64(1)
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, c := range p.Curves {
			for _, pt := range c.Points {
				minOps, maxOps = min(minOps, pt.Ops), max(maxOps, pt.Ops)
			}
			lo, hi = min(lo, c.Min), max(hi, c.Max)
		}
		if hi-lo < 1 {
			hi = lo + 1
		}
		lo, hi = math.Floor(lo-0.05*(hi-lo)), math.Ceil(hi+0.05*(hi-lo))
		lx0, lx1 := math.Log10(float64(minOps)), math.Log10(float64(max(maxOps, minOps+1)))
		x := func(ops int64) float64 { return cx0 + (math.Log10(float64(ops))-lx0)/(lx1-lx0)*(cx1-cx0) }
		yv := func(v float64) float64 { return cy1 - (v-lo)/(hi-lo)*(cy1-cy0) }
		fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="black"/><line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="black"/>`+"\n", cx0, cy1, cx1, cy1, cx0, cy0, cx0, cy1)
		for i := 0; i <= 4; i++ {
			v := lo + (hi-lo)*float64(i)/4
			fmt.Fprintf(&b, `<text x="%.0f" y="%.1f" text-anchor="end">%.0f B</text><line x1="%.0f" y1="%.1f" x2="%.0f" y2="%.1f" stroke="#ddd"/>`+"\n", cx0-6, yv(v)+4, v, cx0, yv(v), cx1, yv(v))
		}
		for d := math.Ceil(lx0); d <= lx1; d++ {
			ops := int64(math.Pow(10, d))
			fmt.Fprintf(&b, `<text x="%.1f" y="%.0f" text-anchor="middle">%s</text><line x1="%.1f" y1="%.0f" x2="%.1f" y2="%.0f" stroke="black"/>`+"\n", x(ops), cy1+16, Count(ops), x(ops), cy1, x(ops), cy1+4)
		}
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" text-anchor="middle">operations (log scale)</text>`+"\n", (cx0+cx1)/2, cy1+32)
		dashes := []string{"", "6,3", "2,3", "8,3,2,3"}
		for i, c := range p.Curves {
			var pts []string
			for _, pt := range c.Points {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(pt.Ops), yv(pt.PerPartition)))
			}
			fmt.Fprintf(&b, `<polyline fill="none" stroke="black" stroke-width="1.8" stroke-dasharray="%s" points="%s"/>`+"\n", dashes[i%len(dashes)], strings.Join(pts, " "))
			ly := cy1 + 44 + float64(i*rowH)
			fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="black" stroke-width="1.8" stroke-dasharray="%s"/><text x="%.0f" y="%.0f">%s: %s</text>`+"\n",
				cx0, ly-4, cx0+30, ly-4, dashes[i%len(dashes)], cx0+36, ly, html.EscapeString(c.Label), html.EscapeString(decades(c)))
		}
		if len(p.Constant) > 0 {
			fmt.Fprintf(&b, `<text x="%.0f" y="%.0f">constant, not drawn: %s</text>`+"\n", cx0, cy1+44+float64(len(p.Curves)*rowH), html.EscapeString(strings.Join(p.Constant, ", ")))
		}
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteHTML writes a self-contained page with the picture, the table and,
// when there is one, the speed comparison.
func WriteHTML(w io.Writer, rep *Report, p *Picture) error {
	fmt.Fprintf(w, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>%s</title>\n", html.EscapeString(p.Title))
	io.WriteString(w, "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}</style></head><body>\n")
	if err := WriteSVG(w, p); err != nil {
		return err
	}
	if len(rep.Results) > 0 {
		io.WriteString(w, "<table><tr><th>memtable</th><th>allocation</th><th>partitions</th><th>on heap</th><th>off heap</th><th>live data</th><th>on heap/partition</th><th>off heap/partition</th><th>overhead/cell</th><th>first flush op</th><th>flushes/M writes</th></tr>\n")
		for _, r := range rep.Results {
			fmt.Fprintf(w, "<tr><td>%s</td><td>%s</td><td>%d</td><td>%s</td><td>%s</td><td>%s</td><td>%.1f</td><td>%.1f</td><td>%.1f</td><td>%d</td><td>%.2f</td></tr>\n",
				html.EscapeString(r.Memtable), html.EscapeString(r.Allocation), r.Partitions, words.PrettyMemory(r.OnHeap, ""), words.PrettyMemory(r.OffHeap, ""),
				words.PrettyMemory(r.LiveData, ""), r.OnHeapPerPartition, r.OffHeapPerPartition, r.OverheadPerCell, r.FirstFlushOp, r.FlushesPerMillion)
		}
		io.WriteString(w, "</table>\n")
	}
	if rep.Bench != nil {
		io.WriteString(w, "<table><tr><th>workload</th><th>writers</th><th>memtable</th><th>ops</th><th>ns/op (median)</th><th>min-max</th><th>ops/s</th><th>vs skiplist</th><th>min-max</th></tr>\n")
		for _, r := range rep.Bench.Results {
			fmt.Fprintf(w, "<tr><td>%s</td><td>%d</td><td>%s</td><td>%d</td><td>%.0f</td><td>%.0f-%.0f</td><td>%.0f</td><td>%.2fx</td><td>%.2f-%.2f</td></tr>\n",
				r.Workload, r.Writers, html.EscapeString(r.Memtable), r.Ops, r.NsPerOp, r.NsPerOpMin, r.NsPerOpMax, r.OpsPerSecond, r.VsSkipList, r.VsSkipListMin, r.VsSkipListMax)
		}
		io.WriteString(w, "</table>\n")
	}
	_, err := io.WriteString(w, "</body></html>\n")
	return err
}
