package views

import (
	"fmt"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/internal/format/bti"
	"github.com/sstabletool/sstabletool/internal/format/bti/trie"
	"github.com/sstabletool/sstabletool/internal/tui/bytemap"
	"github.com/sstabletool/sstabletool/internal/tui/catalog"
	"github.com/sstabletool/sstabletool/internal/tui/cellfmt"
	"github.com/sstabletool/sstabletool/reader"
)

// MaxBytes bounds the bytes of one partition the hex view reads and labels;
// a row of a larger partition can still be opened on its own.
const MaxBytes = 1 << 20

// Bytes is a hex dump of a partition's or a row's uncompressed Data.db
// bytes, every field coloured by class and named on its line; tab steps
// through the fields and shows the selected one in full. For a partition
// of a trie-indexed (da) sstable, t switches to the bytes of its index:
// Partitions.db around the partition's trie node (node types,
// transitions, pointers, hash byte and position, the footer), then
// Rows.db's row index trie and entry of the partition, then back.
type Bytes struct {
	env   *Env
	t     *catalog.Table
	title string
	w, h  int

	bytesPage
	// key is the partition's key (partition views of BTI sstables), which
	// finds its entries in the trie files; pages holds the components not
	// on screen.
	key   []byte
	pages map[string]bytesPage
}

// bytesPage is what the view shows of one component.
type bytesPage struct {
	comp  string // format.ComponentData, ComponentPartitions or ComponentRows
	base  int64
	data  []byte
	whole int64 // size of what was asked for (data may be shorter)
	spans []bytemap.Span
	err   error
	note  string // why a component has nothing to show
	sel   int64  // a trie page's field to select first: the partition's node or entry
	size  int64  // a trie file's size

	loading bool // a trie page being labelled in the background

	field     int  // selected span
	top       int  // first hex line on screen
	labelling bool // the rest of spans is being labelled in the background
}

// trieBytes bounds the part of Partitions.db or Rows.db shown: a trie file
// has a field every two bytes or so, and 64 KiB is 4,096 lines of hex.
const trieBytes = 64 << 10

// trieKey switches a BTI partition's bytes between Data.db, Partitions.db
// and Rows.db. (Bound here: only the bytes view has it.)
var trieKey = key.NewBinding(key.WithKeys("t"), key.WithHelp("t", "index bytes"))

// quickBytes is how much of a partition is labelled before the view
// appears; labelling costs about 0.7 µs a field, so a megabyte (300,000
// fields) is labelled in the background.
const quickBytes = 64 << 10

// NewPartitionBytes shows the partition of size bytes at off (its first MaxBytes).
func NewPartitionBytes(env *Env, t *catalog.Table, off, size int64, title string) *Bytes {
	v := &Bytes{env: env, t: t, title: title, bytesPage: bytesPage{comp: format.ComponentData, base: off, whole: size}}
	v.data, v.err = t.Bytes(off, min(size, MaxBytes))
	if v.err != nil {
		return v
	}
	if t.S.Version().IsBTI() {
		if k, ok := rows.PartitionKeyOf(v.data); ok {
			v.key = append([]byte{}, k...)
		}
	}
	if len(v.data) <= quickBytes {
		v.spans, v.err = t.Labeler().Region(v.data, off)
		return v
	}
	v.spans, v.err = t.Labeler().Region(v.data[:quickBytes], off)
	if n := len(v.spans); n > 0 && v.spans[n-1].Class == bytemap.Unlabelled {
		v.spans = v.spans[:n-1] // the cut row: labelled with the rest
	}
	v.labelling = true
	return v
}

type labelledMsg struct {
	owner *Bytes
	spans []bytemap.Span
	err   error
}

func (m labelledMsg) Owner() View { return m.owner }

// NewUnfilteredBytes shows one row or marker as the decoder returned it.
func NewUnfilteredBytes(env *Env, t *catalog.Table, u *rows.Unfiltered, title string) *Bytes {
	v := &Bytes{env: env, t: t, title: title, bytesPage: bytesPage{comp: format.ComponentData, base: u.Offset, whole: u.Size}}
	v.data, v.err = t.Bytes(u.Offset, u.Size)
	if v.err == nil {
		v.spans, v.err = t.Labeler().Unfiltered(v.data, u.Offset, u)
	}
	return v
}

func (v *Bytes) Init() tea.Cmd {
	if v.err != nil {
		return status(v.err.Error(), true)
	}
	if v.labelling {
		l, data, base := v.t.Labeler(), v.data, v.base
		return func() tea.Msg {
			spans, err := l.Region(data, base)
			return labelledMsg{owner: v, spans: spans, err: err}
		}
	}
	return nil
}

// Labelling reports that fields past the first screens are still being labelled.
func (v *Bytes) Labelling() bool { return v.labelling }

func (v *Bytes) Title() string         { return "bytes of " + cellfmt.Truncate(v.title, 30) }
func (v *Bytes) Table() *catalog.Table { return v.t }
func (v *Bytes) Capturing() bool       { return false }
func (v *Bytes) Close()                {}
func (v *Bytes) SetSize(w, h int)      { v.w, v.h = w, h; v.clampTop() }

func (v *Bytes) Keys() []key.Binding {
	k := v.env.Keys
	if v.key != nil {
		return []key.Binding{k.NextField, k.PrevField, trieKey, k.Down, k.Metadata}
	}
	return []key.Binding{k.NextField, k.PrevField, k.Down, k.Metadata}
}

// Component is the component on screen: Data.db, Partitions.db or Rows.db.
func (v *Bytes) Component() string { return v.comp }

// Note says why the component on screen shows no bytes ("" when it does).
func (v *Bytes) Note() string { return v.note }

// switchComponent shows the next component of Data.db → Partitions.db →
// Rows.db → Data.db, labelling a trie file on its first visit.
func (v *Bytes) switchComponent() tea.Cmd {
	next := map[string]string{format.ComponentData: format.ComponentPartitions,
		format.ComponentPartitions: format.ComponentRows, format.ComponentRows: format.ComponentData}[v.comp]
	if v.pages == nil {
		v.pages = map[string]bytesPage{}
	}
	v.pages[v.comp] = v.bytesPage
	if pg, ok := v.pages[next]; ok {
		v.bytesPage = pg
		v.clampTop()
		return nil
	}
	// A trie is walked from its root down to the nodes on screen: a large
	// Partitions.db takes a moment, so it is labelled in the background.
	v.bytesPage = bytesPage{comp: next, loading: true, note: "reading and labelling the partition's part of " + next + "…"}
	v.pages[next] = v.bytesPage
	return func() tea.Msg { return trieMsg{owner: v, page: v.triePage(next)} }
}

// trieMsg brings a trie file's page labelled in the background.
type trieMsg struct {
	owner *Bytes
	page  bytesPage
}

func (m trieMsg) Owner() View { return m.owner }

// showTriePage stores a labelled trie page and shows it if its component
// is still on screen, with its partition's field selected.
func (v *Bytes) showTriePage(pg bytesPage) tea.Cmd {
	if i := bytemap.Find(pg.spans, pg.sel); i >= 0 {
		pg.field = i
		pg.top = int(pg.sel-pg.base)/v.perLine() - 2
	}
	v.pages[pg.comp] = pg
	if v.comp != pg.comp {
		return nil
	}
	v.bytesPage = pg
	v.clampTop()
	if pg.err != nil {
		return status(pg.err.Error(), true)
	}
	return nil
}

// triePage reads and labels the part of Partitions.db or Rows.db that
// belongs to the partition (at most trieBytes). It opens the file anew, so
// that nothing it reads races with the table's other readers.
func (v *Bytes) triePage(comp string) bytesPage {
	pg := bytesPage{comp: comp}
	s := v.t.S
	fail := func(err error) bytesPage { pg.err = err; return pg }
	pf, err := reader.Open(s.Path(format.ComponentPartitions), reader.Buffered)
	if err != nil {
		return fail(err)
	}
	defer pf.Close()
	pi, err := bti.OpenPartitionsFile(pf, s.Partitioner())
	if err != nil {
		return fail(err)
	}
	it := pi.Iter()
	if !it.SeekKey(v.key) {
		if err := it.Err(); err != nil {
			return fail(err)
		}
		return fail(fmt.Errorf("%s: no entry for the partition's key %x", pf.Path(), v.key))
	}
	entry := it.Entry()
	var f reader.File = pf
	var from, to, sel int64
	var labelled []bti.Span
	switch comp {
	case format.ComponentPartitions:
		size := pf.Size()
		from, to = 0, size
		if size > trieBytes {
			// The pages around the partition's node (root and footer
			// when they are near).
			from = max(0, (entry.NodePos-trieBytes/2)&^(trie.PageSize-1))
			to = min(size, from+trieBytes)
			from = max(0, to-trieBytes)
		}
		if labelled, err = pi.Spans(from, to); err != nil {
			return fail(err)
		}
		sel = entry.NodePos
	case format.ComponentRows:
		if !entry.InRowIndex() {
			pg.note = "this partition has no row index in Rows.db: Cassandra writes one only for partitions of two index blocks or more (column_index_size); Partitions.db points straight at Data.db"
			return pg
		}
		rf, err := reader.Open(s.Path(format.ComponentRows), reader.Buffered)
		if err != nil {
			return fail(err)
		}
		defer rf.Close()
		f = rf
		ri := bti.OpenRowsFile(rf, s.Version())
		e, err := ri.Entry(entry.RowIndexPos())
		if err != nil {
			return fail(err)
		}
		start, err := ri.TrieStart(e)
		if err != nil {
			return fail(err)
		}
		from, to = max(start, e.End-trieBytes), e.End
		if labelled, err = ri.Spans(e, from, to); err != nil {
			return fail(err)
		}
		sel = e.Pos
	}
	pg.base, pg.whole, pg.size = from, to-from, f.Size()
	pg.data = make([]byte, to-from)
	if _, err := f.ReadAt(pg.data, from); err != nil {
		return fail(err)
	}
	pg.spans = bytemap.TrieSpans(labelled, from, len(pg.data))
	pg.sel = sel
	return pg
}

// Spans are the labelled fields.
func (v *Bytes) Spans() []bytemap.Span { return v.spans }

// Err is the error that stopped reading or labelling, if any.
func (v *Bytes) Err() error { return v.err }

func (v *Bytes) perLine() int {
	if v.w >= 8+2+16*3+1+16+2+30 {
		return 16
	}
	return 8
}

func (v *Bytes) lineCount() int {
	pl := v.perLine()
	return (len(v.data) + pl - 1) / pl
}

// hexHeight leaves room for the info, field and column header lines, and
// the legend when there are colours to explain.
func (v *Bytes) hexHeight() int {
	n := v.h - 3
	if v.env.Theme.Color {
		n--
	}
	return max(n, 1)
}

func (v *Bytes) clampTop() {
	v.top = max(0, min(v.top, v.lineCount()-v.hexHeight()))
}

func (v *Bytes) Update(msg tea.Msg) tea.Cmd {
	if m, ok := msg.(labelledMsg); ok {
		// The spans so far are a prefix of these: the selection stays.
		pg := &v.bytesPage
		if v.comp != format.ComponentData {
			data := v.pages[format.ComponentData]
			pg = &data
			defer func() { v.pages[format.ComponentData] = data }()
		}
		pg.labelling = false
		pg.spans, pg.err = m.spans, m.err
		pg.field = min(pg.field, max(len(pg.spans)-1, 0))
		if m.err != nil {
			return status(m.err.Error(), true)
		}
		return nil
	}
	if m, ok := msg.(trieMsg); ok {
		return v.showTriePage(m.page)
	}
	if km, ok := msg.(tea.KeyPressMsg); ok && v.key != nil && key.Matches(km, trieKey) {
		return v.switchComponent()
	}
	k := v.env.Keys
	if mv := navigation(msg, k); mv.ok {
		switch {
		case mv.home:
			v.top = 0
		case mv.end:
			v.top = v.lineCount()
		case mv.pageFactor != 0:
			v.top += int(mv.pageFactor * float64(v.hexHeight()))
		default:
			v.top += mv.delta
		}
		v.clampTop()
		return nil
	}
	km, ok := msg.(tea.KeyPressMsg)
	if !ok || len(v.spans) == 0 {
		return nil
	}
	switch {
	case key.Matches(km, k.NextField):
		v.field = min(v.field+1, len(v.spans)-1)
	case key.Matches(km, k.PrevField):
		v.field = max(v.field-1, 0)
	default:
		return nil
	}
	line := int(v.spans[v.field].Off-v.base) / v.perLine()
	if line < v.top {
		v.top = line
	}
	if line >= v.top+v.hexHeight() {
		v.top = line - v.hexHeight() + 1
	}
	v.clampTop()
	return nil
}

func (v *Bytes) View() string {
	th := v.env.Theme
	end := v.base + int64(len(v.data))
	info := fmt.Sprintf(" %s · %s %d..%d (%s)", v.title, v.comp, v.base, end, cellfmt.Bytes(int64(len(v.data))))
	trieFile := v.comp != format.ComponentData
	if trieFile {
		info += fmt.Sprintf(" · %s trie index", v.t.Version())
		if v.size > 0 {
			info += fmt.Sprintf(" of %s", cellfmt.Bytes(v.size))
		}
	} else if v.whole > int64(len(v.data)) {
		info += th.Warn.Render(fmt.Sprintf(" · first %s of %s shown; open a row (enter, then x) for the rest", cellfmt.Human(int64(len(v.data))), cellfmt.Human(v.whole)))
	}
	if !trieFile {
		info += fmt.Sprintf(" · %s, %s DeletionTime", v.t.Version(), v.t.S.Version().DeletionTimeLayout())
	}
	if v.key != nil {
		info += " · t: Data.db/Partitions.db/Rows.db"
	}
	className := func(c bytemap.Class) string {
		if trieFile {
			return bytemap.TrieClassName(c)
		}
		return c.String()
	}
	if v.loading {
		info += th.Warn.Render(" · labelling…")
	}
	if v.labelling {
		info += th.Warn.Render(fmt.Sprintf(" · labelling fields after the first %s…", cellfmt.Human(quickBytes)))
	}
	lines := []string{info}
	if v.err != nil {
		lines = append(lines, " "+th.Error.Render(v.err.Error()))
	} else if v.note != "" {
		lines = append(lines, " "+th.Warn.Render(v.note))
	} else if len(v.spans) > 0 {
		s := v.spans[v.field]
		unit := "bytes"
		if s.Len == 1 {
			unit = "byte"
		}
		lines = append(lines, fmt.Sprintf(" field %d/%d @%d · %d %s · %s: %s", v.field+1, len(v.spans), s.Off, s.Len, unit,
			th.Field[s.Class].Render(className(s.Class)), th.Accent.Render(s.Label)))
	} else {
		lines = append(lines, " no fields")
	}
	pl := v.perLine()
	offW := max(6, len(strconv.FormatInt(end, 10)))
	hdr := alignRight("offset", offW) + " "
	for i := 0; i < pl; i++ {
		hdr += fmt.Sprintf(" %2d", i)
	}
	hdr += "  " + Fit("ascii", pl) + "  fields"
	lines = append(lines, th.Header.Render(Fit(hdr, v.w)))
	for l := v.top; l < v.top+v.hexHeight() && l < v.lineCount(); l++ {
		lines = append(lines, v.hexLine(l, pl, offW))
	}
	for len(lines) < v.h-1 {
		lines = append(lines, "")
	}
	if th.Color && v.h > 4 {
		var lg strings.Builder
		lg.WriteString(" ")
		classes := bytemap.Classes()
		if trieFile {
			classes = bytemap.TrieClasses()
		}
		for _, c := range classes {
			lg.WriteString(th.Field[c].Render("■ "+className(c)) + " ")
		}
		lines = append(lines[:v.h-1], lg.String())
	}
	return frame(lines, v.w, v.h)
}

// hexLine renders line l: offset, bytes with a separator slot before each
// ('|' where a field starts, '[' and ']' around the selected field), ASCII,
// then the labels of the fields that start on the line.
func (v *Bytes) hexLine(l, pl, offW int) string {
	th := v.env.Theme
	start := l * pl
	stop := min(start+pl, len(v.data))
	var sel bytemap.Span
	if len(v.spans) > 0 {
		sel = v.spans[v.field]
	}
	si := bytemap.Find(v.spans, v.base+int64(start))
	var hexb, asc strings.Builder
	hexb.WriteString(alignRight(strconv.FormatInt(v.base+int64(start), 10), offW) + " ")
	var starts []int // spans that start on this line
	for i := start; i < pl+start; i++ {
		off := v.base + int64(i)
		for si >= 0 && si < len(v.spans) && v.spans[si].End() <= off {
			si++
		}
		in := si >= 0 && si < len(v.spans) && v.spans[si].Off <= off
		slot := " "
		switch {
		case len(v.spans) > 0 && off == sel.Off:
			slot = "["
		case len(v.spans) > 0 && off == sel.End() && i > start:
			slot = "]"
		case in && v.spans[si].Off == off && i > start:
			slot = "|"
		}
		hexb.WriteString(th.Dim.Render(slot))
		if i >= stop {
			hexb.WriteString("  ")
			asc.WriteString(" ")
			continue
		}
		b := v.data[i]
		style := th.Field[bytemap.Unlabelled]
		if in {
			style = th.Field[v.spans[si].Class]
			if v.spans[si].Off == off {
				starts = append(starts, si)
			}
		}
		if in && v.spans[si] == sel {
			style = th.Selected.Inherit(style)
		}
		hexb.WriteString(style.Render(fmt.Sprintf("%02x", b)))
		c := "."
		if b >= 0x20 && b < 0x7f {
			c = string(rune(b))
		}
		asc.WriteString(style.Render(c))
	}
	closing := " "
	if len(v.spans) > 0 && v.base+int64(start+pl) == sel.End() {
		closing = "]"
	}
	hexb.WriteString(th.Dim.Render(closing))
	var label string
	switch len(starts) {
	case 0:
		if j := bytemap.Find(v.spans, v.base+int64(start)); j >= 0 {
			label = th.Dim.Render("↳ " + v.spans[j].Label)
		}
	case 1:
		// One field starts here: there is room for its full label.
		label = th.Field[v.spans[starts[0]].Class].Render(v.spans[starts[0]].Label)
	default:
		// Several fields start here: their full labels when they fit,
		// else the short ones (the selected field is named in full above).
		room := v.w - ansi.StringWidth(hexb.String()) - pl - 3
		full, short := make([]string, len(starts)), make([]string, len(starts))
		fullW := 3 * (len(starts) - 1)
		for i, j := range starts {
			st := th.Field[v.spans[j].Class]
			full[i], short[i] = st.Render(v.spans[j].Label), st.Render(v.spans[j].Short)
			fullW += ansi.StringWidth(v.spans[j].Label)
		}
		parts := short
		if fullW <= room {
			parts = full
		}
		label = strings.Join(parts, th.Dim.Render(" · "))
	}
	line := hexb.String() + " " + asc.String() + "  "
	return line + Fit(label, max(v.w-ansi.StringWidth(line), 0))
}
