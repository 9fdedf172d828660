package memsim

import (
	"fmt"
	"html"
	"io"
	"strings"
	"text/tabwriter"
)

// HumanBytes renders a byte count in binary units, as Cassandra's
// FBUtilities.prettyPrintMemory does (e.g. 5.700GiB).
func HumanBytes(n int64) string {
	neg := n < 0
	if neg {
		n = -n
	}
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	v := float64(n)
	u := 0
	for v >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	s := fmt.Sprintf("%.3f%s", v, units[u])
	if u == 0 {
		s = fmt.Sprintf("%d%s", n, units[0])
	}
	if neg {
		return "-" + s
	}
	return s
}

// WriteTable prints one line per memtable and allocation type.
func WriteTable(w io.Writer, rs []Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "memtable\tallocation\tpartitions\ton heap\toff heap\tlive data\toverhead/partition\toverhead/cell\tGo bytes\tseconds\tops/s\tfirst flush op\tflushes\t")
	for _, r := range rs {
		flush := "never"
		if r.FirstFlushOp >= 0 {
			flush = fmt.Sprint(r.FirstFlushOp)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%.1f\t%.1f\t%s\t%.2f\t%.0f\t%s\t%d\t\n",
			r.Memtable, r.Allocation, r.Partitions, HumanBytes(r.OnHeap), HumanBytes(r.OffHeap), HumanBytes(r.LiveData),
			r.OverheadPerPartition, r.OverheadPerCell, HumanBytes(r.GoStructure), r.Seconds, r.OpsPerSecond, flush, r.Flushes)
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

// Sparkline draws values as a row of eighth-block characters.
func Sparkline(vals []int64, max int64) string {
	const ticks = "▁▂▃▄▅▆▇█"
	r := []rune(ticks)
	var b strings.Builder
	for _, v := range vals {
		i := 0
		if max > 0 {
			i = int(float64(v) / float64(max) * float64(len(r)-1))
		}
		b.WriteRune(r[min(max0(i), len(r)-1)])
	}
	return b.String()
}

func max0(i int) int {
	if i < 0 {
		return 0
	}
	return i
}

var palette = []string{"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#393b79", "#637939"}

// WriteSVG draws on-heap + off-heap bytes against operations, one line per
// result.
func WriteSVG(w io.Writer, rs []Result, title string) error {
	const W, H, left, bottom, top, right = 900, 480, 90, 50, 40, 250
	var maxOps, maxBytes int64
	for _, r := range rs {
		for _, p := range r.Samples {
			maxOps = max(maxOps, p.Ops)
			maxBytes = max(maxBytes, p.OnHeap+p.OffHeap)
		}
	}
	maxOps, maxBytes = max(maxOps, 1), max(maxBytes, 1)
	x := func(ops int64) float64 { return left + float64(ops)/float64(maxOps)*(W-left-right) }
	y := func(b int64) float64 { return H - bottom - float64(b)/float64(maxBytes)*(H-bottom-top) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", W, H, W, H)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/><text x="%d" y="24" font-size="15">%s</text>`+"\n", left, html.EscapeString(title))
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/><line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`+"\n",
		left, H-bottom, W-right, H-bottom, left, top, left, H-bottom)
	for i := 0; i <= 4; i++ {
		v := maxBytes * int64(i) / 4
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end">%s</text><line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>`+"\n",
			left-6, y(v)+4, HumanBytes(v), left, y(v), W-right, y(v))
		o := maxOps * int64(i) / 4
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%d</text>`+"\n", x(o), H-bottom+18, o)
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">operations</text>`+"\n", (left+W-right)/2, H-10)
	for i, r := range rs {
		c := palette[i%len(palette)]
		var pts []string
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(0), y(0)))
		for _, p := range r.Samples {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(p.Ops), y(p.OnHeap+p.OffHeap)))
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n", c, strings.Join(pts, " "))
		ly := top + 18*i
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="12" height="12" fill="%s"/><text x="%d" y="%d">%s %s %s</text>`+"\n",
			W-right+10, ly, c, W-right+28, ly+11, html.EscapeString(r.Memtable), html.EscapeString(r.Allocation), HumanBytes(r.OnHeap+r.OffHeap))
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteHTML writes a self-contained page with the chart and the table.
func WriteHTML(w io.Writer, rs []Result, title string) error {
	fmt.Fprintf(w, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>%s</title>\n", html.EscapeString(title))
	io.WriteString(w, "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}</style></head><body>\n")
	fmt.Fprintf(w, "<h1>%s</h1>\n", html.EscapeString(title))
	if err := WriteSVG(w, rs, title); err != nil {
		return err
	}
	io.WriteString(w, "<table><tr><th>memtable</th><th>allocation</th><th>partitions</th><th>on heap</th><th>off heap</th><th>live data</th><th>overhead/partition</th><th>overhead/cell</th><th>seconds</th><th>ops/s</th><th>first flush op</th></tr>\n")
	for _, r := range rs {
		fmt.Fprintf(w, "<tr><td>%s</td><td>%s</td><td>%d</td><td>%s</td><td>%s</td><td>%s</td><td>%.1f</td><td>%.1f</td><td>%.2f</td><td>%.0f</td><td>%d</td></tr>\n",
			html.EscapeString(r.Memtable), html.EscapeString(r.Allocation), r.Partitions, HumanBytes(r.OnHeap), HumanBytes(r.OffHeap),
			HumanBytes(r.LiveData), r.OverheadPerPartition, r.OverheadPerCell, r.Seconds, r.OpsPerSecond, r.FirstFlushOp)
	}
	_, err := io.WriteString(w, "</table></body></html>\n")
	return err
}
