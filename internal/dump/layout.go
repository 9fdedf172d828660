package dump

import "github.com/sstabletool/sstabletool/format/cqltype"

// layout holds every fixed piece of sstabledump's output for one style,
// computed once: separators, indentation, member names and brackets. The
// renderer only appends these and the values between them.
//
// The pretty style is Jackson's DefaultPrettyPrinter as sstabledump
// configures it: `"name" : value`, two-space indents, members of the
// partition, rows and bounds on lines of their own, and the key,
// clustering, liveness, deletion and cell objects on one line with a
// space inside their brackets ("[ ]" when empty). The compact style (JSON
// lines) has no whitespace at all.
type layout struct {
	pretty bool

	docOpen, docEmptyClose, docClose frag
	partFirst, partNext              frag // before a partition object

	partHead     frag // `{"table kind":"REGULAR","partition":{"key":[`
	position     frag // before the partition's position
	partDeletion frag // before the partition's deletion_info object
	partMid      frag // closes "partition", opens "rows"
	rowFirst     frag // before the first element of "rows"
	rowNext      frag
	rowsEmpty    frag // closes an empty "rows"
	rowsEnd      frag
	partEnd      frag // closes the partition object (and the line in JSON lines)

	// one-line arrays and objects: key, clustering, paths, liveness,
	// deletion_info, cells
	inFirst, inNext, inArrayEnd, inObjectEnd frag

	// `{"type":"row","position":`, after the separator of the first or
	// a later element of "rows"
	rowHead, staticHead [2]frag
	clustering          frag // before a row's clustering array
	liveness            frag // `,"liveness_info":{"tstamp":`
	ttl, expiresAt      frag // inside liveness_info and cells
	expired             frag
	rowDeletion         frag // before a row's deletion_info object
	rowShadowable       frag // before ScyllaDB's shadowable_deletion_info object
	markedDeleted       frag // `"marked_deleted":` after the object's opening brace
	localDeleteTime     frag // `,"local_delete_time":`
	cells               frag // before a row's cells array
	cellFirst, cellNext frag
	cellsEmpty          frag
	cellsEnd            frag
	rowEnd              frag
	noCells             frag // an empty cells array and the row's end
	cellsClose          frag // the last cell's closing brace, the array's and the row's

	cellOpen     frag // `{"name":` (the column name follows)
	path         frag // `,"path":[` and the first element's separator
	value        frag
	tstamp       frag
	cellDeletion frag // `,"deletion_info":{"local_delete_time":`
	pathValue    frag // after a path: `],"value":`
	pathTomb     frag // after a path: `],"deletion_info":{"local_delete_time":`
	colDeletion  frag // `,"deletion_info":{` of a complex column deletion

	markerHead        [2]frag // `{"type":`, after the separator
	boundStart        frag    // `,"start":{"type":`
	boundEnd          frag    // `,"end":{"type":`
	boundClustering   frag    // before a bound's clustering array
	boundDeletion     frag    // before a bound's deletion_info object
	boundClose        frag
	markerEnd         frag
	rangeBound        frag // `"range_tombstone_bound"`
	rangeBoundary     frag
	inclusive         frag
	exclusive         frag
	trueLit, falseLit frag
	nullLit, starLit  frag
}

func newLayout(pretty bool) *layout {
	nl := func(depth int) string {
		if !pretty {
			return ""
		}
		b := []byte{'\n'}
		for i := 0; i < depth; i++ {
			b = append(b, ' ', ' ')
		}
		return string(b)
	}
	colon := ":"
	if pretty {
		colon = " : "
	}
	q := func(s string) string { return string(cqltype.AppendJSONString(nil, s)) }
	// member is a member of an object laid out on lines of its own, at
	// depth; first members have no comma.
	member := func(depth int, name string, first bool) string {
		s := nl(depth) + q(name) + colon
		if !first {
			s = "," + s
		}
		return s
	}
	// inline is a member of a one-line object.
	inline := func(name string, first bool) string {
		switch {
		case pretty && first:
			return " " + q(name) + colon
		case pretty:
			return ", " + q(name) + colon
		case first:
			return q(name) + colon
		}
		return "," + q(name) + colon
	}
	// closing brackets of multi-line containers whose contents sit at depth+1
	closeAt := func(depth int, c string) string { return nl(depth) + c }
	emptyClose := func(c string) string {
		if pretty {
			return " " + c
		}
		return c
	}
	inEnd := func(c string) string {
		if pretty {
			return " " + c
		}
		return c
	}
	l := &layout{pretty: pretty}
	b := mkFrag

	if pretty {
		l.docOpen, l.docEmptyClose, l.docClose = b("["), b(" ]\n"), b(closeAt(0, "]")+"\n")
		l.partFirst, l.partNext = b(nl(1)), b(","+nl(1))
	} else {
		l.docOpen, l.docEmptyClose, l.docClose = b(""), b(""), b("")
		l.partFirst, l.partNext = b(""), b("")
	}
	l.partHead = b("{" + member(2, "table kind", true) + q("REGULAR") + member(2, "partition", false) + "{" + member(3, "key", true) + "[")
	l.position = b(member(3, "position", false))
	l.partDeletion = b(member(3, "deletion_info", false) + "{")
	l.partMid = b(closeAt(2, "}") + member(2, "rows", false) + "[")
	l.rowFirst, l.rowNext = b(nl(3)), b(","+nl(3))
	l.rowsEmpty, l.rowsEnd = b(emptyClose("]")), b(closeAt(2, "]"))
	l.partEnd = b(closeAt(1, "}"))
	if !pretty {
		l.partEnd = b("}\n")
	}

	if pretty {
		l.inFirst, l.inNext = b(" "), b(", ")
	} else {
		l.inFirst, l.inNext = b(""), b(",")
	}
	l.inArrayEnd, l.inObjectEnd = b(inEnd("]")), b(inEnd("}"))

	rowHead := b("{" + member(4, "type", true) + q("row") + member(4, "position", false))
	staticHead := b("{" + member(4, "type", true) + q("static_block") + member(4, "position", false))
	l.rowHead = [2]frag{cat(l.rowFirst, rowHead), cat(l.rowNext, rowHead)}
	l.staticHead = [2]frag{cat(l.rowFirst, staticHead), cat(l.rowNext, staticHead)}
	l.clustering = b(member(4, "clustering", false) + "[")
	l.liveness = b(member(4, "liveness_info", false) + "{" + inline("tstamp", true))
	l.ttl = b(inline("ttl", false))
	l.expiresAt = b(inline("expires_at", false))
	l.expired = b(inline("expired", false))
	l.rowDeletion = b(member(4, "deletion_info", false) + "{")
	l.rowShadowable = b(member(4, "shadowable_deletion_info", false) + "{")
	l.markedDeleted = b(inline("marked_deleted", true))
	l.localDeleteTime = b(inline("local_delete_time", false))
	l.cells = b(member(4, "cells", false) + "[")
	l.cellFirst, l.cellNext = b(nl(5)), b(","+nl(5))
	l.cellsEmpty, l.cellsEnd = b(emptyClose("]")), b(closeAt(4, "]"))
	l.rowEnd = b(closeAt(3, "}"))

	l.cellOpen = b("{" + inline("name", true))
	l.path = b(inline("path", false) + "[" + l.inFirst.String())
	l.value = b(inline("value", false))
	l.tstamp = b(inline("tstamp", false))
	l.cellDeletion = b(inline("deletion_info", false) + "{" + inline("local_delete_time", true))
	l.colDeletion = b(inline("deletion_info", false) + "{")
	l.pathValue, l.pathTomb = cat(l.inArrayEnd, l.value), cat(l.inArrayEnd, l.cellDeletion)
	l.noCells = cat(l.cells, l.cellsEmpty, l.rowEnd)
	l.cellsClose = cat(l.inObjectEnd, l.cellsEnd, l.rowEnd)

	markerHead := b("{" + member(4, "type", true))
	l.markerHead = [2]frag{cat(l.rowFirst, markerHead), cat(l.rowNext, markerHead)}
	l.boundStart = b(member(4, "start", false) + "{" + member(5, "type", true))
	l.boundEnd = b(member(4, "end", false) + "{" + member(5, "type", true))
	l.boundClustering = b(member(5, "clustering", false) + "[")
	l.boundDeletion = b(member(5, "deletion_info", false) + "{")
	l.boundClose = b(closeAt(4, "}"))
	l.markerEnd = b(closeAt(3, "}"))
	l.rangeBound, l.rangeBoundary = b(q("range_tombstone_bound")), b(q("range_tombstone_boundary"))
	l.inclusive, l.exclusive = b(q("inclusive")), b(q("exclusive"))
	l.trueLit, l.falseLit, l.nullLit, l.starLit = b("true"), b("false"), b("null"), b(q("*"))
	return l
}

// fragCap is the longest fragment put copies in one fixed-size move.
const fragCap = 64

// frag is a fixed piece of output, stored so that it can be copied with
// one fixed-size move (put) rather than a call to memmove: most are a
// dozen bytes, and a dump puts several per cell.
type frag struct {
	b    [fragCap]byte // the bytes, zero-padded
	n    int
	long []byte // the bytes, when longer than fragCap
}

func mkFrag(s string) frag {
	var f frag
	f.n = len(s)
	if len(s) > fragCap {
		f.long = []byte(s)
	} else {
		copy(f.b[:], s)
	}
	return f
}

// String returns the fragment's text.
func (f *frag) String() string {
	if f.long != nil {
		return string(f.long)
	}
	return string(f.b[:f.n])
}

// cat joins fragments into one.
func cat(fs ...frag) frag {
	s := ""
	for i := range fs {
		s += fs[i].String()
	}
	return mkFrag(s)
}

var (
	prettyLayout  = newLayout(true)
	compactLayout = newLayout(false)
)
