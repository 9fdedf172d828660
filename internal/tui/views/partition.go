package views

import (
	"fmt"
	"sort"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/internal/tui/catalog"
	"github.com/sstabletool/sstabletool/internal/tui/cellfmt"
	"github.com/sstabletool/sstabletool/internal/tui/theme"
	"github.com/sstabletool/sstabletool/internal/words"
)

// pageRows is how many rows a partition view decodes at a time.
const pageRows = 500

// clusteringRunes bounds the clustering shown in a row's line, so that its
// offset, size and timestamp stay visible; the bytes view shows it whole.
const clusteringRunes = 40

// Partition shows one partition: its header, then the static row, rows and
// range tombstone markers in Data.db order with their clustering,
// liveness and cells (collections one element per line).
type Partition struct {
	env        *Env
	t          *catalog.Table
	key, token string
	off, size  int64
	w, h       int

	p       *catalog.Partition
	openErr error
	// lines of every item; item 0 is the header, item k the (k-1)th unfiltered.
	lines     []string
	itemStart []int // first line of each item
	cursor    int   // selected item
	top       int   // first line on screen
}

// NewPartition opens partition i of list and decodes its first page of rows.
func NewPartition(env *Env, t *catalog.Table, l *catalog.List, i int) *Partition {
	v := &Partition{env: env, t: t, key: t.FormatKey(l.Keys[i]), token: t.Token(l.Keys[i]), off: l.Offsets[i], size: l.Sizes[i]}
	v.p, v.openErr = t.OpenPartition(l, i)
	v.addHeader()
	if v.p != nil {
		v.load()
	}
	return v
}

func (v *Partition) Init() tea.Cmd {
	if v.openErr != nil {
		return status(v.openErr.Error(), true)
	}
	if v.p.Err != nil {
		return status(v.p.Err.Error(), true)
	}
	return nil
}

func (v *Partition) Title() string         { return "partition " + cellfmt.Truncate(v.key, 30) }
func (v *Partition) Table() *catalog.Table { return v.t }
func (v *Partition) Capturing() bool       { return false }
func (v *Partition) Close()                {}
func (v *Partition) SetSize(w, h int)      { v.w, v.h = w, h; v.scrollToCursor() }

func (v *Partition) Keys() []key.Binding {
	k := v.env.Keys
	return []key.Binding{k.Bytes, k.Up, k.Down, k.Metadata}
}

// Items is the number of rows and markers decoded so far.
func (v *Partition) Items() []*rows.Unfiltered {
	if v.p == nil {
		return nil
	}
	return v.p.Items
}

// Cursor is the selected item: 0 for the header, k for Items()[k-1].
func (v *Partition) Cursor() int { return v.cursor }

func (v *Partition) addItem(lines ...string) {
	v.itemStart = append(v.itemStart, len(v.lines))
	v.lines = append(v.lines, lines...)
}

func (v *Partition) addHeader() {
	th := v.env.Theme
	first := fmt.Sprintf("%s %s · token %s · Data.db @%d · %s", th.Crumb.Render("partition"), th.Accent.Render(v.key), v.token, v.off, cellfmt.Bytes(v.size))
	if v.p == nil {
		v.addItem(first, "    "+th.Error.Render(v.openErr.Error()))
		return
	}
	h := v.p.Header
	layout := v.t.S.Version().DeletionTimeLayout()
	dtw := h.Size - 2 - len(h.Key)
	second := fmt.Sprintf("    header %d B: key length 2 + key %d + DeletionTime %d (%s) · %s",
		h.Size, len(h.Key), dtw, layout, cellfmt.Deletion(h.Deletion))
	v.addItem(first, th.Dim.Render(second))
}

// load decodes the next page and renders its items.
func (v *Partition) load() {
	from := len(v.p.Items)
	v.p.More(pageRows)
	for _, u := range v.p.Items[from:] {
		v.addItem(v.itemLines(u)...)
	}
}

func (v *Partition) itemLines(u *rows.Unfiltered) []string {
	th := v.env.Theme
	s := v.t.S
	at := fmt.Sprintf(" · @%d · %s", u.Offset, cellfmt.Bytes(u.Size))
	switch u.Kind {
	case rows.KindMarker:
		head := th.Warn.Render("range tombstone "+u.Bound.Kind.String()) + " " + cellfmt.NamedClustering(v.t.ClusteringNames(), s.ClusteringTypes(), u.Bound.Values, clusteringRunes) + at
		if u.IsBoundary() {
			head += " · ends " + cellfmt.Deletion(u.EndDeletion) + " · starts " + cellfmt.Deletion(u.StartDeletion)
		} else {
			head += " · " + cellfmt.Deletion(u.Deletion)
		}
		return []string{head}
	}
	var head string
	cols, types := s.Schema().Regular, s.RegularTypes()
	if u.Kind == rows.KindStaticRow {
		head = th.Section.Render("static row")
		cols, types = s.Schema().Static, s.StaticTypes()
	} else {
		head = th.Crumb.Render("row") + " " + th.OK.Render(cellfmt.NamedClustering(v.t.ClusteringNames(), s.ClusteringTypes(), u.Clustering, clusteringRunes))
	}
	head += at
	live := u.Liveness
	if live.HasTimestamp {
		head += " · ts " + cellfmt.Micros(live.Timestamp)
		if live.Expiring() {
			head += fmt.Sprintf(" · ttl %ds expires %s", live.TTL, cellfmt.Seconds(live.LocalExpirationTime))
		}
	}
	if u.HasDeletion() {
		d := "row " + cellfmt.Deletion(u.Deletion)
		if u.Shadowable {
			d += " (shadowable)"
		}
		head += " · " + th.Error.Render(d)
	}
	out := []string{head}
	cd := 0
	for i := range u.Cells {
		c := &u.Cells[i]
		for cd < len(u.ComplexDeletions) && u.ComplexDeletions[cd].Column <= c.Column {
			out = append(out, v.complexDeletion(cols, u.ComplexDeletions[cd]))
			cd++
		}
		var t *cqltype.Type
		if c.Column < len(types) {
			t = types[c.Column]
		}
		out = append(out, v.cellLine(&cols[c.Column], t, c, live))
	}
	for ; cd < len(u.ComplexDeletions); cd++ {
		out = append(out, v.complexDeletion(cols, u.ComplexDeletions[cd]))
	}
	return out
}

func (v *Partition) complexDeletion(cols []rows.Column, d rows.ComplexDeletion) string {
	return "      " + cols[d.Column].Name + " (whole collection) " + v.env.Theme.Error.Render(cellfmt.Deletion(d.Deletion))
}

func (v *Partition) cellLine(col *rows.Column, t *cqltype.Type, c *rows.Cell, live rows.Liveness) string {
	th := v.env.Theme
	name, vt := cellfmt.CellName(col, t, c.Path)
	var b strings.Builder
	b.WriteString("      ")
	b.WriteString(th.Label.Render(name))
	if c.IsTombstone() {
		b.WriteString(" " + th.Error.Render("tombstone, local deletion "+cellfmt.Seconds(c.LocalDeletionTime)))
	} else {
		// A set's element is its path; its value is empty.
		if !col.Complex || t == nil || t.Kind != cqltype.Set {
			b.WriteString(" = " + cellfmt.Value(vt, c.Value, 0))
		}
	}
	if !live.HasTimestamp || c.Timestamp != live.Timestamp {
		b.WriteString(th.Dim.Render(" · ts " + cellfmt.Micros(c.Timestamp)))
	}
	if c.IsExpiring() {
		b.WriteString(th.Warn.Render(fmt.Sprintf(" · ttl %ds expires %s", c.TTL, cellfmt.Seconds(c.LocalDeletionTime))))
	}
	return b.String()
}

// itemCount includes the header and, while rows remain, a "more" item.
func (v *Partition) itemCount() int { return len(v.itemStart) }

func (v *Partition) itemAtLine(line int) int {
	i := sort.SearchInts(v.itemStart, line+1) - 1
	return max(0, min(i, len(v.itemStart)-1))
}

func (v *Partition) bodyHeight() int { return max(v.h-1, 1) }

func (v *Partition) Update(msg tea.Msg) tea.Cmd {
	k := v.env.Keys
	if mv := navigation(msg, k); mv.ok {
		switch {
		case mv.home:
			v.cursor = 0
		case mv.end:
			if v.p != nil && !v.p.Done && v.p.Err == nil {
				v.load()
			}
			v.cursor = v.itemCount() - 1
		case mv.pageFactor != 0:
			target := v.itemStart[v.cursor] + int(mv.pageFactor*float64(v.bodyHeight()))
			v.cursor = v.itemAtLine(max(0, min(target, len(v.lines)-1)))
		default:
			v.cursor += mv.delta
		}
		v.cursor = max(0, min(v.cursor, v.itemCount()-1))
		// Reaching the last loaded row decodes the next page.
		if v.p != nil && v.cursor >= v.itemCount()-1 && !v.p.Done && v.p.Err == nil {
			v.load()
		}
		v.scrollToCursor()
		if v.p != nil && v.p.Err != nil && v.cursor == v.itemCount()-1 {
			return status(v.p.Err.Error(), true)
		}
		return nil
	}
	if km, ok := msg.(tea.KeyPressMsg); ok && key.Matches(km, k.Bytes) {
		if v.cursor == 0 || v.p == nil {
			return push(NewPartitionBytes(v.env, v.t, v.off, v.size, "partition "+v.key))
		}
		u := v.p.Items[v.cursor-1]
		return push(NewUnfilteredBytes(v.env, v.t, u, v.rowTitle(u)))
	}
	return nil
}

func (v *Partition) rowTitle(u *rows.Unfiltered) string {
	switch u.Kind {
	case rows.KindStaticRow:
		return "static row"
	case rows.KindMarker:
		return "marker " + cellfmt.NamedClustering(v.t.ClusteringNames(), v.t.S.ClusteringTypes(), u.Bound.Values, 24)
	}
	return "row " + cellfmt.NamedClustering(v.t.ClusteringNames(), v.t.S.ClusteringTypes(), u.Clustering, 24)
}

func (v *Partition) scrollToCursor() {
	h := v.bodyHeight()
	start := v.itemStart[v.cursor]
	end := len(v.lines)
	if v.cursor+1 < len(v.itemStart) {
		end = v.itemStart[v.cursor+1]
	}
	if end-start > h {
		end = start + h
	}
	if start < v.top {
		v.top = start
	}
	if end > v.top+h {
		v.top = end - h
	}
	v.top = max(0, min(v.top, len(v.lines)-h))
}

func (v *Partition) View() string {
	th := v.env.Theme
	var info string
	if v.p != nil {
		markers, rowsN, static := 0, 0, 0
		for _, u := range v.p.Items {
			switch u.Kind {
			case rows.KindMarker:
				markers++
			case rows.KindStaticRow:
				static++
			default:
				rowsN++
			}
		}
		info = " " + words.PluralGrouped(rowsN, "row") + " · " + words.PluralGrouped(markers, "marker")
		if static > 0 {
			info += " · static row"
		}
		switch {
		case v.p.Err != nil:
			info += " · " + th.Error.Render("stopped: "+v.p.Err.Error())
		case v.p.Done:
			info += th.Dim.Render(" · whole partition read")
		default:
			info += th.Warn.Render(" · more below (decoded page by page)")
		}
	}
	lines := []string{info}
	h := v.bodyHeight()
	cs := v.itemStart[v.cursor]
	for l := v.top; l < v.top+h && l < len(v.lines); l++ {
		prefix := theme.NoCursor
		if l == cs {
			prefix = theme.Cursor
			lines = append(lines, th.Selected.Render(Fit(prefix+ansi.Strip(v.lines[l]), v.w)))
			continue
		}
		lines = append(lines, prefix+v.lines[l])
	}
	return frame(lines, v.w, v.h)
}
