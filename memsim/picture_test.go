package memsim

import (
	"bytes"
	"encoding/xml"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/sstabletool/sstabletool/workload"
)

// pictureReport replays small-partitions into every memtable and
// allocation type.
func pictureReport(t *testing.T, ops int64) *Report {
	t.Helper()
	p, _ := workload.Builtin("small-partitions")
	p.Partitions = ops
	rs, err := Replay(GeneratorSource(p, ops), Options{Shards: 2, HeapSpace: 64 << 20, OffheapSpace: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	return &Report{Settings: Settings{ToolVersion: "test", Source: "profile", Profile: p.Name, Ops: ops, Partitioner: "Murmur3Partitioner",
		JDK: 11, Cassandra: "4.1", Shards: 2, HeapSpace: 64 << 20, OffheapSpace: 64 << 20, CleanupThreshold: 1.0 / 3}, Results: rs}
}

// svgTexts returns every <text> of an SVG with its x, anchor and content,
// and the SVG's width.
func svgTexts(t *testing.T, svg []byte) (width float64, texts []struct {
	x      float64
	anchor string
	s      string
}) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(svg))
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not XML: %v", err)
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		attr := func(n string) string {
			for _, a := range se.Attr {
				if a.Name.Local == n {
					return a.Value
				}
			}
			return ""
		}
		switch se.Name.Local {
		case "svg":
			width, _ = strconv.ParseFloat(attr("width"), 64)
		case "text":
			var s string
			if err := d.DecodeElement(&s, &se); err != nil {
				t.Fatal(err)
			}
			x, _ := strconv.ParseFloat(attr("x"), 64)
			texts = append(texts, struct {
				x      float64
				anchor string
				s      string
			}{x, attr("text-anchor"), s})
		}
	}
	return width, texts
}

// The picture has a bar per memtable and allocation type with its live
// data marked, a flush bar per row, and curves only for the memtables
// whose cost per partition changes with their size: the trie (its nodes
// per key) and the hash-ordered map (its bucket array doubles), not the
// skip list (a constant per partition). Every label lies inside the SVG.
func TestPictureSVG(t *testing.T) {
	rep := pictureReport(t, 30000)
	pic := NewPicture(rep, "test picture")
	var svg bytes.Buffer
	if err := WriteSVG(&svg, pic); err != nil {
		t.Fatal(err)
	}
	width, texts := svgTexts(t, svg.Bytes())
	if width <= 0 || len(texts) == 0 {
		t.Fatalf("width %v, %d texts", width, len(texts))
	}
	for _, tx := range texts {
		w := svgText(tx.s)
		lo, hi := tx.x, tx.x+w
		switch tx.anchor {
		case "end":
			lo, hi = tx.x-w, tx.x
		case "middle":
			lo, hi = tx.x-w/2, tx.x+w/2
		}
		if lo < 0 || hi > width {
			t.Errorf("label %q spans %.0f..%.0f outside the %.0f-wide picture", tx.s, lo, hi, width)
		}
	}
	labels := map[string]int{}
	for _, tx := range texts {
		labels[tx.s]++
	}
	for _, r := range rep.Results {
		if labels[r.Memtable+" "+r.Allocation] != 2 {
			t.Errorf("%s %s: labelled %d times, want a size bar and a flush bar", r.Memtable, r.Allocation, labels[r.Memtable+" "+r.Allocation])
		}
	}
	if n := strings.Count(svg.String(), `stroke="black" stroke-width="2"/>`); n != len(rep.Results)+1 {
		t.Errorf("%d live-data marks, want one per row and one in the legend (%d)", n, len(rep.Results)+1)
	}
	var curves []string
	for _, c := range pic.Curves {
		curves = append(curves, c.Label)
	}
	if strings.Join(curves, ",") != "trie (heap_buffers),hashordered (heap_buffers)" {
		t.Errorf("curves %v, want the trie's and the hash-ordered map's", curves)
	}
	if len(pic.Constant) != 1 || !strings.HasPrefix(pic.Constant[0], "skiplist (heap_buffers) 612.0 B") {
		t.Errorf("constant %v, want the skip list at 612.0 B", pic.Constant)
	}
	if strings.Count(svg.String(), "<polyline") != 2 {
		t.Error("want two curves drawn")
	}
}

// The text picture reads without colour: on heap, off heap and live data
// have glyphs of their own, and nothing is styled by default.
func TestPictureText(t *testing.T) {
	rep := pictureReport(t, 3000)
	txt := NewPicture(rep, "t").Text(TextOptions{Width: 30})
	if strings.Contains(txt, "\x1b") {
		t.Error("escape sequences without styles")
	}
	for _, want := range []string{"█", "▒", "│", "skiplist offheap_objects", "404.0 on + 56.0 off = 460.0 B (live 61.0)", "flushes per million writes"} {
		if !strings.Contains(txt, want) {
			t.Errorf("text picture lacks %q:\n%s", want, txt)
		}
	}
	pic := NewPicture(rep, "t")
	scale := pic.MaxPerPartition / 30
	for _, l := range strings.Split(txt, "\n") {
		if !strings.HasPrefix(l, "skiplist offheap_objects") {
			continue
		}
		bar := []rune(strings.TrimLeft(strings.TrimPrefix(l, "skiplist offheap_objects"), " "))[:30]
		on, total, live := int(404/scale+0.5), int(460/scale+0.5), int(61/scale+0.5)
		if strings.Count(string(bar), "▒") != total-on || bar[live] != '│' || strings.Count(string(bar), "█") != on-1 {
			t.Errorf("offheap_objects bar %q: want %d on-heap cells (one of them the live mark at %d), %d off heap", string(bar), on, live, total-on)
		}
		break
	}
}

// Flush figures: writes per flush is the trigger (space × cleanup
// threshold) over the average bytes per write of the pool that fills
// first.
func TestOpsPerFlush(t *testing.T) {
	rep := pictureReport(t, 3000)
	for _, r := range rep.Results {
		third := 1.0 / 3
		limit := float64(int64(float64(64<<20) * third))
		want := limit / (float64(r.OnHeap) / float64(r.Writes))
		pool := "heap"
		if r.OffHeap > 0 {
			if off := limit / (float64(r.OffHeap) / float64(r.Writes)); off < want {
				want, pool = off, "offheap"
			}
		}
		if r.OpsPerFlush < want*0.9999 || r.OpsPerFlush > want*1.0001 || r.FlushPool != pool || r.FlushesPerMillion*r.OpsPerFlush < 0.999e6 {
			t.Errorf("%s %s: %.0f writes per flush (%s), want %.0f (%s)", r.Memtable, r.Allocation, r.OpsPerFlush, r.FlushPool, want, pool)
		}
	}
}
